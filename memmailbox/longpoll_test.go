package memmailbox_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// result is what a Receive run in a goroutine returned, and when.
type result struct {
	msgs []*sqsloop.Message
	err  error
	at   time.Duration // since the poll started
}

// poll starts a long poll of up to 20 s in a goroutine; the test reads its
// result from the channel.
func poll(ctx context.Context, q *memmailbox.Queue, vt time.Duration) <-chan result {
	ch := make(chan result, 1)
	start := time.Now()
	go func() {
		msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: vt, WaitTime: sqsloop.MaxWaitTime})
		ch <- result{msgs, err, time.Since(start)}
	}()
	return ch
}

// wantBlocked fails t if the poll has already returned.
func wantBlocked(t *testing.T, ch <-chan result) {
	t.Helper()
	synctest.Wait()
	select {
	case r := <-ch:
		t.Fatalf("long poll returned early: %+v", r)
	default:
	}
}

func TestLongPollReturnsWhenMessageSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		ch := poll(context.Background(), q, time.Minute)
		time.Sleep(5 * time.Second)
		wantBlocked(t, ch)
		send(t, q, bodies("a")...)
		r := <-ch
		if r.err != nil || len(r.msgs) != 1 || r.at != 5*time.Second {
			t.Fatalf("poll = %d messages, %v, after %v; want 1 message after 5s", len(r.msgs), r.err, r.at)
		}
	})
}

func TestLongPollTimesOutEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		r := <-poll(context.Background(), q, time.Minute)
		if r.err != nil || len(r.msgs) != 0 || r.at != 20*time.Second {
			t.Fatalf("poll = %d messages, %v, after %v; want none, nil, after 20s", len(r.msgs), r.err, r.at)
		}
	})
}

func TestLongPollReturnsWhenDelayEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, sqsloop.OutgoingMessage{Body: "a", Delay: 3 * time.Second})
		r := <-poll(context.Background(), q, time.Minute)
		if r.err != nil || len(r.msgs) != 1 || r.at != 3*time.Second {
			t.Fatalf("poll = %d messages, %v, after %v; want 1 after 3s", len(r.msgs), r.err, r.at)
		}
	})
}

func TestLongPollReturnsWhenLeaseLapses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		receive(t, q, 1, 7*time.Second)
		r := <-poll(context.Background(), q, time.Minute)
		if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ReceiveCount != 2 || r.at != 7*time.Second {
			t.Fatalf("poll = %+v; want the message again, count 2, after 7s", r)
		}
	})
}

func TestLongPollReturnsOnNack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		held := receive(t, q, 1, time.Hour)[0]
		ch := poll(context.Background(), q, time.Minute)
		time.Sleep(time.Second)
		wantBlocked(t, ch)
		if err := change(q, held, 0); err != nil {
			t.Fatal(err)
		}
		r := <-ch
		if r.err != nil || len(r.msgs) != 1 || r.at != time.Second {
			t.Fatalf("poll = %+v; want the nacked message after 1s", r)
		}
	})
}

func TestLongPollWakesWhenALeaseIsShortened(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, bodies("a")...)
		held := receive(t, q, 1, time.Hour)[0]
		ch := poll(context.Background(), q, time.Minute)
		wantBlocked(t, ch)
		if err := change(q, held, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		r := <-ch
		if r.err != nil || len(r.msgs) != 1 || r.at != 2*time.Second {
			t.Fatalf("poll = %+v; want the message after 2s", r)
		}
	})
}

func TestLongPollWakesForAnotherReceiversZeroVisibility(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		ch := poll(context.Background(), q, time.Minute)
		wantBlocked(t, ch)
		send(t, q, bodies("a")...)
		// Either the waiter or this receive gets it first; with visibility 0
		// the other gets it too, at once.
		got := receive(t, q, 1, 0)
		r := <-ch
		if r.err != nil || len(r.msgs)+len(got) != 2 || r.at != 0 {
			t.Fatalf("poll = %+v, receive = %d messages; want both to get the message at once", r, len(got))
		}
	})
}

func TestLongPollCanceledTakesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		send(t, q, sqsloop.OutgoingMessage{Body: "a", Delay: 10 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		defer cancel()
		r := <-poll(ctx, q, time.Minute)
		if r.err != context.DeadlineExceeded || r.msgs != nil || r.at != 4*time.Second {
			t.Fatalf("poll = %+v; want context.DeadlineExceeded after 4s", r)
		}
		time.Sleep(6 * time.Second)
		st := wantStats(t, q, 1, 0, 0)
		if st.Received != 0 {
			t.Errorf("Received = %d, want 0", st.Received)
		}
	})
}

func TestLongPollReturnsAtOnceOnClose(t *testing.T) {
	for _, closer := range []string{"handle", "broker"} {
		t.Run(closer, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
				ch := poll(context.Background(), q, time.Minute)
				time.Sleep(2 * time.Second)
				wantBlocked(t, ch)
				if closer == "handle" {
					_ = q.Close()
				} else {
					_ = b.Close()
				}
				r := <-ch
				if r.at != 2*time.Second {
					t.Errorf("returned after %v, want 2s", r.at)
				}
				wantErr(t, r.err, sqsloop.ErrMailboxClosed)
			})
		})
	}
}

func TestLongPollOfOneHandleIgnoresClosingAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		other := b.Queue("jobs")
		ch := poll(context.Background(), q, time.Minute)
		_ = other.Close()
		wantBlocked(t, ch)
		r := <-ch
		if r.err != nil || r.at != 20*time.Second {
			t.Fatalf("poll = %+v; want an empty result after 20s", r)
		}
	})
}

func TestManyLongPollsShareMessages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		const n = 8
		chs := make([]<-chan result, n)
		for i := range chs {
			chs[i] = poll(context.Background(), q, time.Minute)
		}
		synctest.Wait()
		for range n {
			time.Sleep(time.Second)
			send(t, q, bodies("m")...)
		}
		for i, ch := range chs {
			r := <-ch
			if r.err != nil || len(r.msgs) != 1 {
				t.Fatalf("poller %d: %d messages, %v; want 1", i, len(r.msgs), r.err)
			}
		}
		wantStats(t, q, 0, n, 0)
	})
}
