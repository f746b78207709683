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
	got map[string][]string
}

func (o *outcomes) ProcessEnd(_ context.Context, m *sqsloop.Message, e sqsloop.ProcessEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.got == nil {
		o.got = map[string][]string{}
	}
	o.got[m.Body] = append(o.got[m.Body], e.Outcome)
}

func (o *outcomes) of(body string) []string {
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
		want string
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
						return sqsloop.Permanent(errors.New("unknown customer"))
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

// A failed run's reported delay is the one its message was nacked with:
// Backoff is drawn once, so a jittered back-off does not report a second
// draw.
func TestReportedDelayIsTheNackDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, "fails")
		var draws []time.Duration
		var mu sync.Mutex
		var delays []time.Duration
		obs := &delayObserver{record: func(d time.Duration) { mu.Lock(); delays = append(delays, d); mu.Unlock() }}
		cfg := fast()
		cfg.Observer = obs
		cfg.Backoff = func(int) time.Duration { // 10 s, 20 s, …: each draw differs
			mu.Lock()
			defer mu.Unlock()
			draws = append(draws, time.Duration(len(draws)+1)*10*time.Second)
			return draws[len(draws)-1]
		}
		before := -1 // draws when the handler ran (the start-up line draws samples)
		c := mustNew(t, q, func(context.Context, *sqsloop.Message) error {
			mu.Lock()
			defer mu.Unlock()
			before = len(draws)
			return errors.New("boom")
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if before < 0 || len(draws) != before+1 || len(delays) != 1 || delays[0] != draws[before] {
			t.Errorf("Backoff drawn %v (%d before the run), delays reported %v: want one draw for the failure, reported as drawn", draws, before, delays)
		}
		if st := q.Stats(); st.Delayed+st.InFlight != 1 {
			t.Errorf("queue %+v: want the message hidden for its back-off", st)
		}
	})
}

type delayObserver struct {
	sqsloop.NopObserver
	record func(time.Duration)
}

func (o *delayObserver) ProcessEnd(_ context.Context, _ *sqsloop.Message, e sqsloop.ProcessEvent) {
	o.record(e.Delay)
}

// Every run ends with exactly one ProcessEnd: a handler the drain abandons
// is reported abandoned when it is, and not again when it returns; the
// other message of its FIFO group, never started, is not reported.
func TestAbandonedRunIsReportedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{
			{Body: "stubborn", MessageGroupID: "g"}, {Body: "next", MessageGroupID: "g"}, {Body: "quick", MessageGroupID: "h"},
		}); err != nil {
			t.Fatal(err)
		}
		var obs outcomes
		cfg := fast()
		cfg.Observer = &obs
		cfg.ShutdownTimeout = time.Second
		returned := make(chan struct{})
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			if m.Body != "stubborn" {
				return nil
			}
			defer close(returned)
			time.Sleep(time.Minute) // ignores its context
			return nil
		}, cfg)
		stop := start(t, c)
		time.Sleep(time.Second)
		if err := stop(); !errors.Is(err, ErrDrainTimeout) {
			t.Fatalf("Run = %v, want ErrDrainTimeout", err)
		}
		<-returned
		synctest.Wait()
		if got := obs.of("stubborn"); len(got) != 1 || got[0] != sqsloop.OutcomeAbandoned {
			t.Errorf("outcomes of the abandoned run %v, want [abandoned]", got)
		}
		if got := obs.of("quick"); len(got) != 1 || got[0] != sqsloop.OutcomeAcked {
			t.Errorf("outcomes of the quick run %v, want [acked]", got)
		}
		if got := obs.of("next"); len(got) != 0 {
			t.Errorf("outcomes of the message never started %v, want none", got)
		}
	})
}
