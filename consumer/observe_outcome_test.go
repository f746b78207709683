package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// outcomes records the outcome of every handler run by message body.
type outcomes struct {
	sqsloop.NopObserver
	mu  sync.Mutex
	got map[string][]sqsloop.Outcome
}

func (o *outcomes) ProcessEnd(_ context.Context, m *sqsloop.Message, e sqsloop.ProcessEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.got == nil {
		o.got = map[string][]sqsloop.Outcome{}
	}
	o.got[m.Body] = append(o.got[m.Body], e.Outcome)
}

func (o *outcomes) of(body string) []sqsloop.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.got[body]
}

// A Permanent failure that reached the dead-letter queue is reported as
// dead_lettered, not nacked; without a dead-letter queue it is a nack like
// any failure, and reported so.
func TestPermanentFailureOutcome(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec sqsloop.QueueSpec
		want sqsloop.Outcome
	}{
		{"with a DLQ", sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 5}, sqsloop.OutcomeDeadLettered},
		{"without", sqsloop.QueueSpec{Name: "jobs"}, sqsloop.OutcomeNacked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, tc.spec)
				send(t, q, "poison", "fine")
				var obs outcomes
				cfg := fast()
				cfg.Observer = &obs
				c := mustNew(t, q, func(_ context.Context, m *sqsloop.Message) error {
					if m.Body == "poison" {
						return Permanent(errors.New("unknown customer"))
					}
					return nil
				}, cfg)
				stop := start(t, c)
				time.Sleep(2 * time.Second)
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				if got := obs.of("poison"); len(got) == 0 || got[0] != tc.want {
					t.Errorf("outcomes of the poison message %v, want %v first", got, tc.want)
				}
				if got := obs.of("fine"); len(got) != 1 || got[0] != sqsloop.OutcomeAcked {
					t.Errorf("outcomes of the good message %v, want [acked]", got)
				}
			})
		})
	}
}
