package mailboxtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

type receiveResult struct {
	msgs    []*sqsloop.Message
	err     error
	elapsed time.Duration
}

// receiveAsync starts one Receive in a goroutine; the returned channel yields
// its result. The caller must read the channel before the scenario ends.
func receiveAsync(ctx context.Context, mb sqsloop.Mailbox, req sqsloop.ReceiveRequest) <-chan receiveResult {
	ch := make(chan receiveResult, 1)
	go func() {
		start := time.Now()
		msgs, err := mb.Receive(ctx, req)
		ch <- receiveResult{msgs, err, time.Since(start)}
	}()
	return ch
}

// testLongPollingReturnsEarly: a long poll on an empty queue returns empty
// and without error when its wait ends; one that is waiting returns as soon
// as a message is sent, long before its wait ends; and one whose context is
// cancelled returns the context's error.
func testLongPollingReturnsEarly(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	start := time.Now()
	msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: settle})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("long poll on an empty queue = %d messages, %v; want none and nil", len(msgs), err)
	}
	if f.VirtualTime {
		if got := time.Since(start); got != settle {
			t.Errorf("empty long poll returned after %v, want its whole WaitTime %v", got, settle)
		}
	}

	pending := receiveAsync(ctx, q.Mailbox, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime})
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	ids := SendBodies(ctx, t, q.Mailbox, "late")
	r := <-pending
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ID != ids[0] {
		t.Fatalf("waiting long poll = %s, %v; want the message sent while it waited", describe(r.msgs), r.err)
	}
	// The behaviour under test is "returns before WaitTime": a poll that ran
	// its whole 20 s would also have found the message.
	if r.elapsed >= sqsloop.MaxWaitTime {
		t.Errorf("long poll returned after %v, not before its WaitTime %v", r.elapsed, sqsloop.MaxWaitTime)
	}
	if f.VirtualTime && r.elapsed != time.Second {
		t.Errorf("long poll returned %v after it started, want exactly 1 s (when the message was sent)", r.elapsed)
	}
	AckAll(ctx, t, q.Mailbox, r.msgs...)

	cctx, cancel := context.WithCancel(ctx)
	pending = receiveAsync(cctx, q.Mailbox, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime})
	if err := h.Sleep(ctx, time.Second); err != nil {
		cancel()
		t.Fatal(err)
	}
	cancel()
	r = <-pending
	if !errors.Is(r.err, context.Canceled) || len(r.msgs) != 0 {
		t.Fatalf("long poll whose context was cancelled = %d messages, %v; want none and context.Canceled", len(r.msgs), r.err)
	}
	if f.VirtualTime && r.elapsed != time.Second {
		t.Errorf("cancelled long poll returned %v after it started, want 1 s (when it was cancelled)", r.elapsed)
	}
}

// testApproximateReceiveCountIncrements: every receive of the same message
// counts one more, gives a new receipt handle, and keeps the message ID and
// the first-receive time.
func testApproximateReceiveCountIncrements(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	ids := SendBodies(ctx, t, q.Mailbox, "count me")
	handles := map[string]bool{}
	var first time.Time
	for n := 1; n <= 3; n++ {
		m := receiveOne(ctx, t, q.Mailbox, patience, longLease)
		if m.ID != ids[0] {
			t.Fatalf("receive %d: message ID %s, want %s", n, m.ID, ids[0])
		}
		if m.ReceiveCount != n || m.Attributes[sqsloop.AttrApproximateReceiveCount] != strconv.Itoa(n) {
			t.Errorf("receive %d: ReceiveCount %d, attribute %q; want %d", n, m.ReceiveCount, m.Attributes[sqsloop.AttrApproximateReceiveCount], n)
		}
		if handles[m.ReceiptHandle] {
			t.Errorf("receive %d repeated an earlier receipt handle", n)
		}
		handles[m.ReceiptHandle] = true
		if n == 1 {
			first = m.FirstReceivedAt
		} else if !m.FirstReceivedAt.Equal(first) {
			t.Errorf("receive %d: FirstReceivedAt %v, want %v from the first receive", n, m.FirstReceivedAt, first)
		}
		if n < 3 {
			if err := change(ctx, q.Mailbox, m, 0); err != nil {
				t.Fatalf("Nack: %v", err)
			}
			continue
		}
		AckAll(ctx, t, q.Mailbox, m)
	}
}

// testConcurrentReceiversNeverShareAMessage: receivers polling one queue at
// the same time each get distinct messages, and together get all of them.
func testConcurrentReceiversNeverShareAMessage(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	const total, receivers = 30, 4
	bodies := make([]string, total)
	for i := range bodies {
		bodies[i] = fmt.Sprintf("m%02d", i)
	}
	ids := SendBodies(ctx, t, q.Mailbox, bodies...)

	var (
		mu   sync.Mutex
		seen = map[string]int{}
		all  []*sqsloop.Message
		errs []error
		wg   sync.WaitGroup
	)
	for range receivers {
		wg.Go(func() {
			for {
				msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{
					MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: longLease, WaitTime: settle,
				})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				for _, m := range msgs {
					seen[m.ID]++
					all = append(all, m)
				}
				done := len(all) >= total
				mu.Unlock()
				if err != nil || len(msgs) == 0 || done {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("Receive errors: %v", errs)
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("message %s was received %d times by concurrent receivers within its lease", id, n)
		}
	}
	for _, id := range ids {
		if seen[id] == 0 {
			t.Errorf("message %s was never received", id)
		}
	}
	AckAll(ctx, t, q.Mailbox, all...)
	ExpectNone(ctx, t, q.Mailbox, settle)
}

// testConcurrentFIFOReceiversKeepGroupsApart: on a FIFO queue, 8 receivers
// polling at once, each deleting what it got before it receives again,
// never get one message twice, get each group's messages in the order sent,
// and never hold messages of one group at the same time; together they get
// all 100 messages of 10 groups. The leases outlast the scenario, so a
// second delivery is a failure too.
func testConcurrentFIFOReceiversKeepGroupsApart(t *testing.T, h Harness) {
	if !h.Features().FIFO {
		t.Skipf("%s: Features.FIFO is false", h.Name())
	}
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer cleanup()

	const groups, perGroup, receivers = 20, 5, 16
	var out []sqsloop.OutgoingMessage
	for i := range perGroup { // interleaved: g0-0 g1-0 … g9-0 g0-1 …
		for g := range groups {
			body := fmt.Sprintf("g%d-%d", g, i)
			out = append(out, sqsloop.OutgoingMessage{Body: body, MessageGroupID: fmt.Sprint("g", g), DeduplicationID: body})
		}
	}
	ids := SendAll(ctx, t, q.Mailbox, out...)

	var (
		mu       sync.Mutex
		seen     = map[string]bool{}
		next     = map[string]int{} // group → index of the message due next
		holder   = map[string]int{} // group → receiver holding some of it, 0 for none
		problems []string
		progress = time.Now() // of the last receive that got a message
		wg       sync.WaitGroup
	)
	for r := 1; r <= receivers; r++ {
		wg.Go(func() {
			for {
				mu.Lock()
				stop := len(seen) == len(ids) || len(problems) > 0 || time.Since(progress) > patience
				mu.Unlock()
				if stop {
					return
				}
				msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{
					MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: 5 * time.Minute, WaitTime: settle,
				})
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("receiver %d: Receive: %v", r, err))
					mu.Unlock()
					return
				}
				if len(msgs) == 0 {
					continue
				}
				mu.Lock()
				progress = time.Now()
				for _, m := range msgs {
					g := m.MessageGroupID
					want := fmt.Sprintf("%s-%d", g, next[g])
					switch {
					case seen[m.ID]:
						problems = append(problems, fmt.Sprintf("receiver %d got %q again within its lease", r, m.Body))
					case m.Body != want:
						problems = append(problems, fmt.Sprintf("receiver %d got %q, want %q next in group %s", r, m.Body, want, g))
					case holder[g] != 0 && holder[g] != r:
						problems = append(problems, fmt.Sprintf("receiver %d got %q while receiver %d held group %s", r, m.Body, holder[g], g))
					}
					seen[m.ID] = true
					next[g]++
					holder[g] = r
				}
				// Let go of the groups before the delete that frees them:
				// once it is sent, another receiver may rightly get them.
				handles := make([]string, len(msgs))
				for i, m := range msgs {
					handles[i] = m.ReceiptHandle
					holder[m.MessageGroupID] = 0
				}
				mu.Unlock()
				errs, err := q.Mailbox.Delete(ctx, handles)
				if err = errors.Join(append(errs, err)...); err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("receiver %d: Delete: %v", r, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	for _, p := range problems {
		t.Error(p)
	}
	if len(seen) != len(ids) {
		t.Errorf("the receivers got %d of %d messages, none for %v", len(seen), len(ids), patience)
	}
	ExpectNone(ctx, t, q.Mailbox, settle)
}

// testCloseStopsEveryCall: Close ends a waiting long poll with
// ErrMailboxClosed, every later call fails with ErrMailboxClosed, and a
// second Close is a no-op.
func testCloseStopsEveryCall(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	mb := q.Mailbox

	SendBodies(ctx, t, mb, "held")
	m := receiveOne(ctx, t, mb, patience, longLease)
	pending := receiveAsync(ctx, mb, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime})
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := mb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	r := <-pending
	if !errors.Is(r.err, sqsloop.ErrMailboxClosed) || len(r.msgs) != 0 {
		t.Errorf("long poll waiting at Close = %d messages, %v; want none and ErrMailboxClosed", len(r.msgs), r.err)
	}
	if h.Features().VirtualTime && r.elapsed != time.Second {
		t.Errorf("long poll waiting at Close returned %v after it started, want 1 s (at Close)", r.elapsed)
	}

	closed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Errorf("%s after Close: %v, want ErrMailboxClosed", what, err)
		}
	}
	_, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease})
	closed("Receive", err)
	_, err = mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "late"}})
	closed("Send", err)
	_, err = mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: m.ReceiptHandle, Timeout: longLease}})
	closed("ChangeVisibility", err)
	_, err = mb.Delete(ctx, []string{m.ReceiptHandle})
	closed("Delete", err)
	if err := mb.Close(); err != nil {
		t.Errorf("second Close: %v, want nil (Close is idempotent)", err)
	}
}

// testReceiveChoosesMessageAttributes: ReceiveRequest.MessageAttributeNames
// selects the message attributes returned: nil, "All" or ".*" all of them,
// an empty slice none, "order.*" those whose names start with "order.".
func testReceiveChoosesMessageAttributes(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	SendAll(ctx, t, q.Mailbox, sqsloop.OutgoingMessage{Body: "order", MessageAttributes: map[string]sqsloop.MessageAttribute{
		"order.id":   {DataType: "String", StringValue: "o-1"},
		"order.kind": {DataType: "String", StringValue: "gift"},
		"trace":      {DataType: "String", StringValue: "t-1"},
	}})
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, "[order.id order.kind trace]"},
		{[]string{"All"}, "[order.id order.kind trace]"},
		{[]string{".*"}, "[order.id order.kind trace]"},
		{[]string{"order.*"}, "[order.id order.kind]"},
		{[]string{"trace"}, "[trace]"},
		{[]string{}, "[]"},
	} {
		var got []*sqsloop.Message
		for deadline := time.Now().Add(patience); len(got) == 0 && time.Now().Before(deadline); {
			msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: 0, WaitTime: time.Second, MessageAttributeNames: tc.names})
			if err != nil {
				t.Fatalf("Receive(%v): %v", tc.names, err)
			}
			got = msgs
		}
		if len(got) != 1 {
			t.Fatalf("Receive(%v): no message", tc.names)
		}
		var keys []string
		for k := range got[0].MessageAttributes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if fmt.Sprint(keys) == tc.want {
			continue
		}
		if tc.names != nil && len(tc.names) == 0 && !h.Features().OmitsUnaskedAttributes {
			declared(t, h, DiffReturnsUnaskedAttributes, "a receive asking for no message attributes got %v", keys)
			continue
		}
		t.Errorf("MessageAttributeNames %q: got attributes %v, want %s", tc.names, keys, tc.want)
	}
}
