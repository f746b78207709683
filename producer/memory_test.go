package producer_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
	"weak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// With every call busy and callers timing out, memory stays bounded: a
// withdrawn message frees its room and its body at once, though it has not
// reached the front of the list it waited in. 2,000 callers of 64 KiB each
// (125 MiB in all) time out, behind one that waits, while one call holds
// the only slot; none of their bodies is still reachable, and only the
// call's messages and the one waiting are pending.
func TestWithdrawnMessagesAreReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		gate := make(chan struct{})
		mb := &scripted{Mailbox: q, script: func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			<-gate
			return nil, nil, false
		}}
		p := mustNew(t, mb, producer.Config{MaxCalls: 1, MaxPendingMessages: 200})
		ctx := context.Background()
		var onWire []*producer.Pending
		for i := range sqsloop.MaxBatchSize {
			pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint("held ", i)})
			if err != nil {
				t.Fatal(err)
			}
			onWire = append(onWire, pd)
		}
		synctest.Wait()
		if calls := mb.sendCalls(); len(calls) != 1 {
			t.Fatalf("calls %v, want the one held", calls)
		}
		patient, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: "patient"}) // waits at the front of the list
		if err != nil {
			t.Fatal(err)
		}
		const rounds, each = 20, 100
		var mu sync.Mutex
		var bodies []weak.Pointer[byte]
		for r := range rounds {
			var wg sync.WaitGroup
			for i := range each {
				wg.Go(func() {
					body := strings.Repeat(fmt.Sprintf("%d-%d ", r, i), 64<<10/8)
					mu.Lock()
					bodies = append(bodies, weak.Make(unsafe.StringData(body)))
					mu.Unlock()
					sctx, cancel := context.WithTimeout(ctx, time.Second)
					defer cancel()
					if _, err := p.Send(sctx, sqsloop.OutgoingMessage{Body: body}); !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("Send with every call busy: %v, want its context's end", err)
					}
				})
			}
			wg.Wait()
		}
		// A Send returns once withdraw has told it, which then lets go of
		// the body: wait for those withdraws to end before looking.
		synctest.Wait()
		runtime.GC()
		held := 0
		for _, b := range bodies {
			if b.Value() != nil {
				held++
			}
		}
		if held > 0 {
			t.Errorf("%d of %d withdrawn bodies (64 KiB each) are still reachable", held, len(bodies))
		}
		if st := p.Stats(); st.Pending != sqsloop.MaxBatchSize+1 {
			t.Errorf("%d pending, want the %d on the wire and the patient one", st.Pending, sqsloop.MaxBatchSize)
		}
		if n := producer.Listed(p); n > 2*(sqsloop.MaxBatchSize+1)+64 {
			t.Errorf("the lists hold %d messages after %d withdrawn, want the withdrawn dropped (at most 64 more than twice those pending)", n, len(bodies))
		}
		close(gate)
		for _, pd := range append(onWire, patient) {
			if _, err := pd.Wait(ctx); err != nil {
				t.Error(err)
			}
		}
		closeOK(t, p)
		if got := len(drain(t, q)); got != sqsloop.MaxBatchSize+1 {
			t.Errorf("received %d, want the %d held and the patient one", got, sqsloop.MaxBatchSize)
		}
	})
}
