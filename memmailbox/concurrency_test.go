package memmailbox_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// Many receivers at once: each message is in flight to one of them only, so
// with an ack right away every message is received exactly once.
func TestConcurrentReceiversGetEachMessageOnce(t *testing.T) {
	for _, spec := range []sqsloop.QueueSpec{
		{Name: "jobs"},
		{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true},
	} {
		t.Run(spec.Name, func(t *testing.T) {
			fifo := spec.FIFO
			_, q := newQueue(t, spec)
			const messages, receivers = 2000, 16
			out := make([]sqsloop.OutgoingMessage, messages)
			for i := range out {
				out[i].Body = strconv.Itoa(i)
				if fifo {
					out[i].MessageGroupID = "g" + strconv.Itoa(i%7)
				}
			}
			send(t, q, out...)

			var mu sync.Mutex
			seen := make(map[string]int)
			var wg sync.WaitGroup
			errs := make(chan error, receivers)
			for range receivers {
				wg.Go(func() {
					for {
						msgs, err := q.Receive(context.Background(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Hour})
						if err != nil {
							errs <- err
							return
						}
						if len(msgs) == 0 {
							if q.Stats().InFlight == 0 && q.Stats().Visible == 0 {
								return
							}
							continue // FIFO: groups held by other receivers
						}
						handles := make([]string, len(msgs))
						mu.Lock()
						for i, m := range msgs {
							seen[m.Body]++
							handles[i] = m.ReceiptHandle
						}
						mu.Unlock()
						res, err := q.Delete(context.Background(), handles)
						if err != nil {
							errs <- err
							return
						}
						for _, e := range res {
							if e != nil {
								errs <- e
								return
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if len(seen) != messages {
				t.Fatalf("%d distinct messages received, want %d", len(seen), messages)
			}
			for body, n := range seen {
				if n != 1 {
					t.Errorf("message %s received %d times", body, n)
				}
			}
			st := wantStats(t, q, 0, 0, 0)
			if st.Sent != messages || st.Received != messages || st.Deleted != messages {
				t.Errorf("Stats = %+v", st)
			}
		})
	}
}

// Receivers race with nacks, lapses and acks; at the end every message is
// accounted for.
func TestConcurrentChurnLosesNothing(t *testing.T) {
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	dlq := b.Queue("jobs-dlq")
	const messages = 500
	out := make([]sqsloop.OutgoingMessage, messages)
	for i := range out {
		out[i].Body = strconv.Itoa(i)
	}
	send(t, q, out...)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			ctx := context.Background()
			for i := 0; ; i++ {
				msgs, err := q.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1 + (i+w)%10, VisibilityTimeout: 0})
				if err != nil {
					t.Error(err)
					return
				}
				if len(msgs) == 0 {
					if st := q.Stats(); st.Visible == 0 && st.InFlight == 0 {
						return
					}
					continue
				}
				for j, m := range msgs {
					switch (i + j + w) % 3 {
					case 0:
						_ = ack(q, m) // may fail: the lease was 0, another receive may have the message
					case 1:
						_ = change(q, m, 0)
					}
				}
			}
		})
	}
	wg.Wait()
	st, dst := q.Stats(), dlq.Stats()
	if st.Deleted+dst.Visible != messages || st.DeadLettered != dst.DeadLetteredIn {
		t.Fatalf("deleted %d + dead-lettered %d != %d sent (source %+v, DLQ %+v)", st.Deleted, dst.Visible, messages, st, dst)
	}
	if st.Sent+st.DeadLetteredIn != st.Visible+st.InFlight+st.Delayed+st.Deleted+st.DeadLettered {
		t.Fatalf("source does not add up: %+v", st)
	}
}
