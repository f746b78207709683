package consumer

import (
	"context"
	"maps"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// neverBeats records, by message body, the NeverBeat of each lost lease
// (LeaseLost, the lease owner's) and of each run that ended after its lease
// was lost (ProcessEnd, the consumer's): otelsqsloop puts both under one
// label, sqsloop.never_beat.
type neverBeats struct {
	sqsloop.NopObserver
	mu    sync.Mutex
	lost  map[string]bool // LeaseLost
	ended map[string]bool // ProcessEnd with OutcomeLeaseLost
}

func (o *neverBeats) LeaseLost(m *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lost == nil {
		o.lost = map[string]bool{}
	}
	o.lost[m.Body] = e.NeverBeat
}

func (o *neverBeats) ProcessEnd(_ context.Context, m *sqsloop.Message, e sqsloop.ProcessEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended == nil {
		o.ended = map[string]bool{}
	}
	if e.Outcome == sqsloop.OutcomeLeaseLost {
		o.ended[m.Body] = e.NeverBeat
	}
}

// flakyExtensions fails every visibility change (the extensions) of the
// message with body stale: its receipt handle went stale.
type flakyExtensions struct {
	*queueWithBodies
}

// queueWithBodies is a queue that remembers the body of each receipt
// handle it handed out.
type queueWithBodies struct {
	sqsloop.Mailbox
	mu     sync.Mutex
	bodies map[string]string
}

func (q *queueWithBodies) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	msgs, err := q.Mailbox.Receive(ctx, req)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bodies == nil {
		q.bodies = map[string]string{}
	}
	for _, m := range msgs {
		q.bodies[m.ReceiptHandle] = m.Body
	}
	return msgs, err
}

func (f flakyExtensions) ChangeVisibility(ctx context.Context, cs []sqsloop.VisibilityChange) ([]error, error) {
	errs, err := f.Mailbox.ChangeVisibility(ctx, cs)
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range cs {
		if f.bodies[c.ReceiptHandle] == "stale" && err == nil {
			errs[i] = sqsloop.ErrReceiptHandleExpired
		}
	}
	return errs, err
}

// The lease owner's LeaseLost and the consumer's ProcessEnd say the same
// of a lost lease whose handler never beat, because the lease owner decides
// it once (rules.NeverBeat): a handler that ran without a beat of its own
// while its lease lapsed never beat, though an earlier message of its FIFO
// group (which shares its heartbeat) beat, or ended, before it started; a
// message that lapsed while it waited behind another of its group has no
// handler that could have beaten; a lease lost to a stale receipt handle
// was not lost for want of beats. Before, the lease owner judged by the
// shared heartbeat's first beat and the consumer by the run's alone, and
// the two disagreed in each of these cases.
func TestNeverBeatIsOneAnswer(t *testing.T) {
	silent := func(ctx context.Context, m *sqsloop.Message) error {
		if m.ReceiveCount > 1 {
			return nil // redelivered after its lease was lost
		}
		switch m.Body {
		case "quick":
			time.Sleep(500 * time.Millisecond)
		case "silent", "stale":
			time.Sleep(6 * time.Second) // no beat: its 3 s lease lapses
		}
		return nil
	}
	for _, tc := range []struct {
		name       string
		fifo       bool
		msgs       []string
		fixed      bool            // Visibility.FixedInterval: extended without beats
		lost       map[string]bool // LeaseLost's NeverBeat by body
		ended      map[string]bool // ProcessEnd's, for the runs that ended with their lease lost
		neverBeats int64           // Stats.LeasesLostNeverBeat
	}{
		{"after an earlier message of its group", true, []string{"quick", "silent"}, false,
			map[string]bool{"silent": true}, map[string]bool{"silent": true}, 1},
		{"waiting behind a silent one", true, []string{"silent", "waiting"}, false,
			map[string]bool{"silent": true, "waiting": false}, map[string]bool{"silent": true}, 1},
		{"a stale receipt handle", false, []string{"stale"}, true,
			map[string]bool{"stale": false}, map[string]bool{"stale": false}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{FIFO: tc.fifo})
				out := make([]sqsloop.OutgoingMessage, len(tc.msgs))
				for i, b := range tc.msgs {
					out[i] = sqsloop.OutgoingMessage{Body: b}
					if tc.fifo {
						out[i].MessageGroupID, out[i].DeduplicationID = "g", b
					}
				}
				if _, err := q.Send(t.Context(), out); err != nil {
					t.Fatal(err)
				}
				var obs neverBeats
				cfg := fast()
				cfg.Observer = &obs
				if tc.fixed {
					cfg.Visibility.FixedInterval, cfg.Visibility.MaxExtension = true, time.Hour
				}
				var mb sqsloop.Mailbox = q
				if tc.fixed {
					mb = flakyExtensions{&queueWithBodies{Mailbox: q}}
				}
				c := mustNew(t, mb, silent, cfg)
				stop := start(t, c)
				time.Sleep(8 * time.Second)
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				obs.mu.Lock()
				defer obs.mu.Unlock()
				if !maps.Equal(obs.lost, tc.lost) || !maps.Equal(obs.ended, tc.ended) {
					t.Errorf("never beat by LeaseLost %v, by ProcessEnd %v; want %v and %v", obs.lost, obs.ended, tc.lost, tc.ended)
				}
				if n := c.Stats().LeasesLostNeverBeat; n != tc.neverBeats {
					t.Errorf("Stats.LeasesLostNeverBeat %d, want %d", n, tc.neverBeats)
				}
			})
		})
	}
}
