package producer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

func mustNew(t *testing.T, mb sqsloop.Mailbox, cfg producer.Config) *producer.Producer {
	t.Helper()
	p, err := producer.New(mb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeOK(t *testing.T, p *producer.Producer) {
	t.Helper()
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Concurrent Sends share SendMessageBatch calls of 10: 3,200 messages from
// 32 goroutines, each received once, in at most 330 calls.
func TestConcurrentSendsShareBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{})
		const senders, each = 32, 100
		var wg sync.WaitGroup
		ids := make([]string, senders*each)
		var next atomic.Int64 // each sender takes the next message: all of them busy to the end
		for range senders {
			wg.Go(func() {
				for n := int(next.Add(1) - 1); n < senders*each; n = int(next.Add(1) - 1) {
					res, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: fmt.Sprint("m", n)})
					if err != nil {
						t.Errorf("Send %d: %v", n, err)
					}
					ids[n] = res.MessageID
				}
			})
		}
		wg.Wait()
		closeOK(t, p)
		got := map[string]int{}
		for _, m := range drain(t, q) {
			got[m.Body]++
			if n := m.Body[1:]; ids[atoi(t, n)] != m.ID {
				t.Errorf("message %s received with ID %s, its Send returned %s", m.Body, m.ID, ids[atoi(t, n)])
			}
		}
		for n := range senders * each {
			if c := got[fmt.Sprint("m", n)]; c != 1 {
				t.Errorf("m%d received %d times", n, c)
			}
		}
		calls := mb.sendCalls()
		if len(calls) > senders*each/10+10 {
			t.Errorf("%d SendMessageBatch calls for %d messages, want at most %d", len(calls), senders*each, senders*each/10+10)
		}
		st := p.Stats()
		t.Logf("%d messages in %d calls; stats %+v", senders*each, len(calls), st)
		if st.Sent != senders*each || st.Calls != int64(len(calls)) || st.Pending != 0 {
			t.Errorf("Stats = %+v", st)
		}
	})
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A lone message waits the linger window for company, then goes alone.
func TestLingerThenSendAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{Linger: 20 * time.Millisecond})
		defer closeOK(t, p)
		start := time.Now()
		if _, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: "alone"}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("Send took %v, want the 20ms linger", d)
		}
		if calls := mb.sendCalls(); len(calls) != 1 || calls[0] != 1 {
			t.Errorf("calls %v, want one of 1 entry", calls)
		}
	})
}

// Nagle's rule: while calls are on the wire, a batch that is not full
// waits until all of them have returned and then one more linger (5 ms),
// 10 lingers (50 ms) at most. Two full batches go at once, in calls of 10
// ms and ret2; a lone message enqueued at 1 ms goes at 25 ms when ret2 is
// 20 ms, and at 51 ms (10 lingers) when it is 200 ms.
func TestLingerWhileCallsOnTheWire(t *testing.T) {
	for _, c := range []struct {
		ret2, want time.Duration
	}{{20 * time.Millisecond, 25 * time.Millisecond}, {200 * time.Millisecond, 51 * time.Millisecond}} {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t, sqsloop.QueueSpec{})
			start := time.Now()
			var lone time.Duration
			mb := &scripted{Mailbox: q, script: func(n int, _ []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
				switch n {
				case 1:
					time.Sleep(10 * time.Millisecond)
				case 2:
					time.Sleep(c.ret2)
				case 3:
					lone = time.Since(start)
				}
				return nil, nil, false
			}}
			p := mustNew(t, mb, producer.Config{})
			ctx := context.Background()
			for i := range 20 {
				if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(time.Millisecond)
			if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "lone"}); err != nil {
				t.Fatal(err)
			}
			closeOK(t, p)
			if calls := mb.sendCalls(); len(calls) != 3 || calls[2] != 1 {
				t.Fatalf("calls %v, want [10 10 1]", calls)
			}
			if lone != c.want {
				t.Errorf("with calls of 10ms and %v on the wire, the lone message enqueued at 1ms went at %v, want %v", c.ret2, lone, c.want)
			}
		})
	}
}

// A transient failure of an entry, or of a whole call, is retried with
// back-off; a permanent one is returned at once, the rest of the batch
// going on.
func TestRetriesTransientReturnsPermanent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		flaky := errors.New("throttled")
		mb := &scripted{Mailbox: q}
		mb.script = func(n int, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			switch n {
			case 1: // the whole call fails
				return nil, flaky, true
			case 2: // "retry" fails alone, "bad" is refused for good, "ok" goes
				res := make([]sqsloop.SendResult, len(msgs))
				for i, m := range msgs {
					switch m.Body {
					case "retry":
						res[i] = sqsloop.SendResult{Err: flaky}
					case "bad":
						res[i] = sqsloop.SendResult{Err: fmt.Errorf("KMS: %w", sqsloop.ErrAccessDenied)}
					default:
						r, err := q.Send(context.Background(), msgs[i:i+1])
						if err != nil {
							return nil, err, true
						}
						res[i] = r[0]
					}
				}
				return res, nil, true
			}
			return nil, nil, false
		}
		p := mustNew(t, mb, producer.Config{})
		defer closeOK(t, p)
		ctx := context.Background()
		var pds []*producer.Pending
		for _, b := range []string{"ok", "retry", "bad"} {
			pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: b})
			if err != nil {
				t.Fatal(err)
			}
			pds = append(pds, pd)
		}
		for i, want := range []error{nil, nil, sqsloop.ErrAccessDenied} {
			_, err := pds[i].Wait(ctx)
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Errorf("message %d: %v, want %v", i, err, want)
			}
		}
		got := drain(t, q)
		if len(got) != 2 {
			t.Errorf("received %d messages, want ok and retry once each", len(got))
		}
		if calls := mb.sendCalls(); len(calls) != 3 || calls[2] != 1 {
			t.Errorf("calls %v, want [3 3 1]", calls)
		}
		if st := p.Stats(); st.Retries != 4 || st.Failed != 1 || st.Sent != 2 {
			t.Errorf("Stats %+v, want 4 retries (3 after the call, 1 after the entry), 1 failed, 2 sent", st)
		}
	})
}

// A message that keeps failing transiently is tried MaxAttempts times,
// with back-off doubling from 100 ms, then its last error is returned.
func TestGivesUpAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		var at []time.Time
		mb := &scripted{Mailbox: q, script: func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			at = append(at, time.Now())
			return nil, errors.New("connection reset"), true
		}}
		p := mustNew(t, mb, producer.Config{MaxAttempts: 4, Linger: time.Millisecond})
		defer p.Close(context.Background())
		_, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: "x"})
		if err == nil || !strings.Contains(err.Error(), "after 4 attempts") || !strings.Contains(err.Error(), "connection reset") {
			t.Fatalf("Send = %v, want the last error after 4 attempts", err)
		}
		for i := 1; i < len(at); i++ {
			want := producer.MinRetryDelay << (i - 1)
			if gap := at[i].Sub(at[i-1]); gap < want*8/10 || gap > want*12/10 {
				t.Errorf("attempt %d came %v after the one before, want %v ±20%%", i+1, gap, want)
			}
		}
	})
}

// Back-pressure: with MaxPendingMessages, or MaxPendingBytes, pending,
// Enqueue waits for room, or until its context ends.
func TestBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		gate := make(chan struct{})
		mb := &scripted{Mailbox: q, script: func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			<-gate
			return nil, nil, false
		}}
		p := mustNew(t, mb, producer.Config{MaxPendingMessages: 2})
		ctx := context.Background()
		for _, b := range []string{"a", "b"} {
			if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: b}); err != nil {
				t.Fatal(err)
			}
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := p.Enqueue(short, sqsloop.OutgoingMessage{Body: "c"}); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2 messages pending") {
			t.Errorf("Enqueue with 2 pending = %v, want to wait and end with its context", err)
		}
		done := make(chan error)
		go func() {
			_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "d"})
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Send returned %v with no room", err)
		default:
		}
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		closeOK(t, p)
		if got := len(drain(t, q)); got != 3 {
			t.Errorf("received %d, want a, b and d", got)
		}

		// MaxPendingBytes: with 1 MiB, a second message of 600 KiB waits
		// until the first is sent.
		gate = make(chan struct{})
		p = mustNew(t, mb, producer.Config{MaxPendingBytes: sqsloop.MaxMessageSize})
		big := func(b string) sqsloop.OutgoingMessage {
			return sqsloop.OutgoingMessage{Body: strings.Repeat(b, 600<<10)}
		}
		if _, err := p.Enqueue(ctx, big("e")); err != nil {
			t.Fatal(err)
		}
		short, cancel = context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := p.Enqueue(short, big("f")); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 messages pending") {
			t.Errorf("Enqueue of 600 KiB with 600 KiB pending (1 MiB at most) = %v, want to wait and end with its context", err)
		}
		go func() {
			_, err := p.Send(ctx, big("g"))
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Send of 600 KiB returned %v with 600 KiB of 1 MiB pending", err)
		default:
		}
		close(gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		closeOK(t, p)
		if got := len(drain(t, q)); got != 2 {
			t.Errorf("received %d, want e and g", got)
		}

		// Close wakes a Send waiting for room: it returns ErrClosed.
		gate = make(chan struct{})
		p = mustNew(t, mb, producer.Config{MaxPendingMessages: 1})
		if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: "h"}); err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "i"})
			done <- err
		}()
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- p.Close(ctx) }()
		if err := <-done; !errors.Is(err, producer.ErrClosed) {
			t.Errorf("Send waiting for room when Close began = %v, want ErrClosed", err)
		}
		close(gate)
		if err := <-closed; err != nil {
			t.Errorf("Close = %v, want h sent", err)
		}
	})
}

// A message whose context ends before it is sent is withdrawn: its Send
// returns the context's error and the queue never gets it.
func TestContextEndWithdraws(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{Linger: time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "late"})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not sent") {
			t.Fatalf("Send = %v, want not sent, the context's error", err)
		}
		closeOK(t, p)
		if got := drain(t, q); len(got) != 0 || len(mb.sendCalls()) != 0 {
			t.Errorf("the queue got %d messages in %d calls, want none", len(got), len(mb.sendCalls()))
		}
	})
}

// A message whose context ends while a call carrying it is on the wire:
// its Send returns at once with the context's error, but the message stays
// pending (its room held) until the call returns, and its message group's
// next message goes only after that, so that order holds whatever the call
// did.
func TestContextEndOnTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{FIFO: true, ContentBasedDeduplication: true})
		var mu sync.Mutex
		var at []time.Duration // when each call began
		calls := func() []time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return append([]time.Duration(nil), at...)
		}
		start := time.Now()
		mb := &scripted{Mailbox: q, script: func(n int, _ []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			mu.Lock()
			at = append(at, time.Since(start))
			mu.Unlock()
			if n == 1 {
				time.Sleep(time.Second)
			}
			return nil, nil, false
		}}
		p := mustNew(t, mb, producer.Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		done := make(chan error)
		go func() {
			_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "first", MessageGroupID: "g"})
			done <- err
		}()
		synctest.Wait()
		next, err := p.Enqueue(context.Background(), sqsloop.OutgoingMessage{Body: "second", MessageGroupID: "g"})
		if err != nil {
			t.Fatal(err)
		}
		err = <-done
		if d := time.Since(start); d != 100*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "under way") {
			t.Errorf("Send returned %v after %v, want the context's error at 100ms, saying a call is under way", err, d)
		}
		if st, at := p.Stats(), calls(); st.Pending != 2 || len(at) != 1 {
			t.Errorf("with the first message's call on the wire: %d pending, calls at %v; want 2 pending (its room held), 1 call (the group's next held back)", st.Pending, at)
		}
		time.Sleep(time.Second) // the call returns at 1.005 s
		synctest.Wait()
		if _, err := next.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st, at := p.Stats(), calls(); st.Pending != 0 || len(at) != 2 || at[1] < time.Second {
			t.Errorf("%d pending, calls at %v; want none pending, the group's next sent after the first call returned (1.005s)", st.Pending, at)
		}
		closeOK(t, p)
		if got := drain(t, q); len(got) != 2 || got[0].Body != "first" || got[1].Body != "second" {
			t.Errorf("received %v, want first (the call under way sent it) then second", got)
		}
	})
}

// A withdrawn message does not count toward a full batch: with one of
// ten withdrawn, the nine left wait (for the linger) for a tenth.
func TestWithdrawnDoesNotFillABatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{Linger: time.Second})
		ctx := context.Background()
		enqueue := func(ctx context.Context, n int) {
			for range n {
				if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: "m"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		enqueue(ctx, 4)
		gone, cancel := context.WithCancel(ctx)
		enqueue(gone, 1)
		cancel()
		synctest.Wait()
		enqueue(ctx, 5)
		time.Sleep(10 * time.Millisecond)
		enqueue(ctx, 1)
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != 1 || calls[0] != 10 {
			t.Errorf("calls %v, want one of 10 (the withdrawn message held no place)", calls)
		}
	})
}

// Close sends what is pending at once, without lingering; with its
// context ending first, it fails what is left and says how many.
func TestCloseFlushesOrReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		p := mustNew(t, q, producer.Config{Linger: time.Second})
		ctx := context.Background()
		var pds []*producer.Pending
		for i := range 25 {
			pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint(i)})
			if err != nil {
				t.Fatal(err)
			}
			pds = append(pds, pd)
		}
		start := time.Now()
		closeOK(t, p)
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v, want no linger (1s)", d)
		}
		for _, pd := range pds {
			if _, err := pd.Wait(ctx); err != nil {
				t.Error(err)
			}
		}
		if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "after"}); !errors.Is(err, producer.ErrClosed) {
			t.Errorf("Send after Close = %v, want ErrClosed", err)
		}

		down := &scripted{Mailbox: q, script: func(int, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			return nil, errors.New("endpoint unreachable"), true
		}}
		p = mustNew(t, down, producer.Config{})
		for i := range 3 {
			if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := p.Close(cctx)
		if !errors.Is(err, producer.ErrClosed) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "3 messages not sent") {
			t.Errorf("Close with the endpoint down = %v, want 3 messages not sent, ErrClosed, the deadline", err)
		}

		// A call on the wire (Close sends at once) that would hang until
		// its own timeout (30 s) is cancelled at Close's deadline.
		p = mustNew(t, hangs{q}, producer.Config{})
		if _, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: "hangs"}); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		cctx, cancel = context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err = p.Close(cctx)
		if d := time.Since(start); d != 2*time.Second || !errors.Is(err, producer.ErrClosed) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 messages not sent") {
			t.Errorf("Close with a call on the wire = %v after %v, want 1 message not sent, ErrClosed, the deadline, at 2s", err, d)
		}
	})
}

// hangs is a Mailbox whose Send calls return only when their context ends.
type hangs struct{ sqsloop.Mailbox }

func (hangs) Send(ctx context.Context, _ []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A message over 1 MiB is refused before any call, naming its size; a
// batch that would pass 1 MiB in all is split.
func TestSizeLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		p := mustNew(t, mb, producer.Config{})
		ctx := context.Background()
		_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: strings.Repeat("x", sqsloop.MaxMessageSize+1)})
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "got 1048577") {
			t.Errorf("Send of 1 MiB + 1 = %v, want ErrInvalidArgument naming the size", err)
		}
		var pds []*producer.Pending
		for i := range 3 {
			pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: strings.Repeat(fmt.Sprint(i), 400<<10)})
			if err != nil {
				t.Fatal(err)
			}
			pds = append(pds, pd)
		}
		for _, pd := range pds {
			if _, err := pd.Wait(ctx); err != nil {
				t.Error(err)
			}
		}
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != 2 || calls[0] != 2 || calls[1] != 1 {
			t.Errorf("calls %v, want [2 1]: 1.2 MiB split", calls)
		}
		if got := len(drain(t, q)); got != 3 {
			t.Errorf("received %d, want 3", got)
		}
	})
}

// A whole batch refused as malformed (a server with a smaller batch limit)
// is split into calls of one entry.
func TestSplitsARefusedBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		mb := &scripted{Mailbox: q}
		mb.script = func(_ int, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error, bool) {
			if len(msgs) > 1 {
				return nil, fmt.Errorf("BatchRequestTooLong: %w", sqsloop.ErrInvalidArgument), true
			}
			return nil, nil, false
		}
		p := mustNew(t, mb, producer.Config{})
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				if _, err := p.Send(context.Background(), sqsloop.OutgoingMessage{Body: fmt.Sprint(i)}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		closeOK(t, p)
		if calls := mb.sendCalls(); len(calls) != 5 {
			t.Errorf("calls %v, want one of 4 then 4 of 1", calls)
		}
		if st := p.Stats(); st.Splits != 1 || st.Retries != 0 {
			t.Errorf("Stats %+v, want 1 split, no retry", st)
		}
	})
}

// BeforeSend sets attributes on a copy: the caller's map is unchanged, the
// queue gets the attribute, and it counts toward the limits.
func TestBeforeSendSetsAttributes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		type key struct{}
		p := mustNew(t, q, producer.Config{BeforeSend: func(ctx context.Context, m *sqsloop.OutgoingMessage) {
			if m.MessageAttributes == nil {
				m.MessageAttributes = map[string]sqsloop.MessageAttribute{}
			}
			m.MessageAttributes["traceparent"] = sqsloop.MessageAttribute{DataType: "String", StringValue: ctx.Value(key{}).(string)}
		}})
		ctx := context.WithValue(context.Background(), key{}, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		mine := map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "file"}}
		if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "x", MessageAttributes: mine}); err != nil {
			t.Fatal(err)
		}
		if len(mine) != 1 {
			t.Errorf("the caller's attributes were changed: %v", mine)
		}
		if _, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: "y"}); err != nil {
			t.Fatal(err)
		}
		_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: strings.Repeat("z", sqsloop.MaxMessageSize-20)})
		if !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("a message the attribute pushes over 1 MiB: %v, want ErrInvalidArgument", err)
		}
		closeOK(t, p)
		got := drain(t, q)
		if len(got) != 2 || got[0].MessageAttributes["traceparent"].StringValue != ctx.Value(key{}) || got[0].MessageAttributes["kind"].StringValue != "file" {
			t.Errorf("received %+v, want the traceparent with the message's own attributes", got)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	err := producer.Config{Linger: -1, MaxPendingMessages: -1, MaxPendingBytes: 1000, MaxCalls: 1001, MaxAttempts: 101}.Validate()
	for _, w := range []string{"Config.Linger", "Config.MaxPendingMessages", "Config.MaxPendingBytes", "Config.MaxCalls", "Config.MaxAttempts"} {
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate = %v, want it to name %s", err, w)
		}
	}
	if _, err := producer.New(nil, producer.Config{}); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("New(nil) = %v", err)
	}
}
