package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/producer"
)

// sendLog records, per body, what reached the queue through a
// faultySender: applied and answered (the producer was told it was sent)
// or applied with its answer lost (the producer was told it failed).
type sendLog struct {
	mu       sync.Mutex
	answered map[string]int
	lost     map[string]int
	calls    int
}

func newSendLog() *sendLog { return &sendLog{answered: map[string]int{}, lost: map[string]int{}} }

// faultySender fails a share of Send calls (SendMessageBatch), half before
// they reach the queue, half after the queue applied them (the answer
// lost), and of the calls that go through, a share of entries alone (not
// applied), with faultyMailbox's generator; the rest of the Mailbox passes
// through, QueueAttributes included.
type faultySender struct {
	*faultyMailbox
	send faultCounts
	log  *sendLog
}

func (f *faultySender) QueueAttributes(ctx context.Context) (sqsloop.QueueAttributes, error) {
	return f.Mailbox.(sqsloop.AttributesReader).QueueAttributes(ctx)
}

func (f *faultySender) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	return f.sendWithFaults(ctx, msgs, f.Mailbox.Send)
}

// faultyBulkSender is a faultySender whose Mailbox is a sqsloop.BulkSender:
// its SendBulk calls meet the same faults as Send's, so that the
// producer's bulk path is what the database mailboxes' tests run.
type faultyBulkSender struct {
	*faultySender
	bulk sqsloop.BulkSender
}

func (f *faultyBulkSender) SendBulk(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	return f.sendWithFaults(ctx, msgs, f.bulk.SendBulk)
}

// sendWithFaults makes one send call (Send or SendBulk) through call with
// the faults of faultySender injected.
func (f *faultySender) sendWithFaults(ctx context.Context, msgs []sqsloop.OutgoingMessage,
	call func(context.Context, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error)) ([]sqsloop.SendResult, error) {
	f.log.mu.Lock()
	f.log.calls++
	f.log.mu.Unlock()
	f.send.calls.Add(1)
	whole, failed := f.plan(len(msgs))
	record := func(to map[string]int, ms []sqsloop.OutgoingMessage, res []sqsloop.SendResult) {
		f.log.mu.Lock()
		defer f.log.mu.Unlock()
		for i, m := range ms {
			if res[i].Err == nil {
				to[m.Body]++
			}
		}
	}
	switch whole {
	case faultBefore:
		f.send.before.Add(1)
		return nil, &injectedError{op: "send", where: "before the call"}
	case faultAfter:
		res, err := call(ctx, msgs)
		if err != nil {
			return nil, err
		}
		record(f.log.lost, msgs, res)
		f.send.after.Add(1)
		return nil, &injectedError{op: "send", where: "answer lost"}
	}
	f.send.entries.Add(int64(len(msgs)))
	out := make([]sqsloop.SendResult, len(msgs))
	var pass []sqsloop.OutgoingMessage
	var at []int
	for i, m := range msgs {
		if failed[i] {
			f.send.entriesFailed.Add(1)
			out[i].Err = &injectedError{op: "send", where: "entry"}
			continue
		}
		pass = append(pass, m)
		at = append(at, i)
	}
	if len(pass) == 0 {
		return out, nil
	}
	res, err := call(ctx, pass)
	if err != nil {
		return nil, err
	}
	record(f.log.answered, pass, res)
	for j, i := range at {
		out[i] = res[j]
	}
	return out, nil
}

// newProducer returns a producer (of cfg) sending to mb through a
// faultySender failing rate of calls and entries (0: none, only counting),
// a faultyBulkSender when mb is a sqsloop.BulkSender.
func newProducer(t *testing.T, mb sqsloop.Mailbox, rate float64, seed uint64, cfg producer.Config) (*producer.Producer, *faultySender) {
	t.Helper()
	fs := &faultySender{faultyMailbox: newFaultyMailbox(mb, rate, seed), log: newSendLog()}
	var sender sqsloop.Mailbox = fs
	if bulk, ok := mb.(sqsloop.BulkSender); ok {
		sender = &faultyBulkSender{faultySender: fs, bulk: bulk}
	}
	return startProducer(t, sender, cfg), fs
}

// newBatchProducer is newProducer sending through Send alone
// (SendMessageBatch), whatever mb is: a test of SQS's batch limits.
func newBatchProducer(t *testing.T, mb sqsloop.Mailbox, cfg producer.Config) (*producer.Producer, *faultySender) {
	t.Helper()
	fs := &faultySender{faultyMailbox: newFaultyMailbox(mb, 0, 1), log: newSendLog()}
	return startProducer(t, fs, cfg), fs
}

func startProducer(t *testing.T, mb sqsloop.Mailbox, cfg producer.Config) *producer.Producer {
	t.Helper()
	p, err := producer.New(mb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drainBodies receives and deletes everything mb holds, until a long poll
// longer than its lease comes back empty, and counts each body's messages
// by message ID: a message received twice (a receive whose answer was lost
// on a loaded machine: it comes back after its short lease) counts once;
// copies a sender made have IDs of their own. It returns the messages
// received, each once, in the order first received.
func drainBodies(ctx context.Context, t *testing.T, mb sqsloop.Mailbox) (map[string]int, []*sqsloop.Message) {
	t.Helper()
	got := map[string]int{}
	seen := map[string]bool{}
	var all []*sqsloop.Message
	for {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: shortLease, WaitTime: shortLease + time.Second})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		if len(msgs) == 0 {
			return got, all
		}
		hs := make([]string, len(msgs))
		for i, m := range msgs {
			if !seen[m.ID] {
				seen[m.ID] = true
				got[m.Body]++
				all = append(all, m)
			}
			hs[i] = m.ReceiptHandle
		}
		if _, err := mb.Delete(ctx, hs); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
}

// sendFrom sends n messages "p-0".."p-(n-1)" through p from senders
// goroutines, each taking the next message (so all of them stay busy to
// the end), each enqueuing its share and then waiting for every result.
// It returns each message's error (nil: sent).
func sendFrom(ctx context.Context, p *producer.Producer, n, senders int) []error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			type pending struct {
				i  int
				pd *producer.Pending
			}
			var mine []pending
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint("p-", i)})
				if err != nil {
					errs[i] = err
					continue
				}
				mine = append(mine, pending{i, pd})
			}
			for _, m := range mine {
				_, errs[m.i] = m.pd.Wait(ctx)
			}
		})
	}
	wg.Wait()
	return errs
}

// The producer's promise on both backends: 2,000 messages sent with Send
// from 32 goroutines arrive exactly once each (by body), in at most 210
// SendMessageBatch calls (full batches but for 10), each Send returning the
// ID the message arrives with.
func TestE2EProducerSendsEachOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
		defer cleanup()
		// The bound is about coalescing, not the linger's length: 50 ms
		// rather than the default 5 ms, so that a sender a loaded machine
		// deschedules for a few milliseconds still finds its batch open
		// (with 5 ms, CI made 1,015–1,025 calls for 10,000 messages, bound
		// 1,010, once in a while).
		p, counted := newProducer(t, q.Mailbox, 0, 1, producer.Config{Linger: 50 * time.Millisecond})
		log := counted.log
		const n, senders = 2_000, 32
		ids := make([]string, n)
		var next atomic.Int64
		var wg sync.WaitGroup
		began := time.Now()
		for range senders {
			wg.Go(func() {
				for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
					res, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprint("p-", i)})
					if err != nil {
						t.Errorf("Send p-%d: %v", i, err)
					}
					ids[i] = res.MessageID
				}
			})
		}
		wg.Wait()
		took := time.Since(began)
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		got, all := drainBodies(ctx, t, q.Mailbox)
		st := p.Stats()
		t.Logf("%s: %d messages from %d goroutines in %v: %d SendMessageBatch calls (%.2f entries each); stats %+v",
			h.Name(), n, senders, took.Round(time.Millisecond), log.calls, float64(st.Entries)/float64(st.Calls), st)
		if limit := n/sqsloop.MaxBatchSize + 10; log.calls > limit {
			t.Errorf("%s: %d SendMessageBatch calls, want at most %d", h.Name(), log.calls, limit)
		}
		for i := range n {
			if c := got[fmt.Sprint("p-", i)]; c != 1 {
				t.Errorf("%s: p-%d arrived %d times, want once", h.Name(), i, c)
			}
		}
		for _, m := range all {
			var i int
			if _, err := fmt.Sscanf(m.Body, "p-%d", &i); err != nil || ids[i] != m.ID {
				t.Errorf("%s: %s arrived with ID %s, its Send returned %s", h.Name(), m.Body, m.ID, ids[i])
				break
			}
		}
	})
}

// With 30 % of SendMessageBatch calls failing (half before the queue, half
// after it applied them) and 30 % of the entries of the others failing
// alone, every one of 2,000 messages sent from 32 goroutines (600-860
// calls, some 100 failing before the queue, 100 after it, and 850 entries
// alone) either arrives or has its Send return an error; a message whose
// Send succeeded arrives; the producer never sends a message again after a
// call answered that it was sent; the only copies are those of calls whose
// answer was lost (SQS's at least once, counted and reported).
func TestE2EProducerUnderFaults(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
		defer cleanup()
		p, fs := newProducer(t, q.Mailbox, faultRate, 20261125, producer.Config{})
		log := fs.log
		// Each message's fate is checked, so what counts is that the faults
		// hit every path many times, not the number of messages.
		const n, senders = 2_000, 32
		began := time.Now()
		errs := sendFrom(ctx, p, n, senders)
		took := time.Since(began)
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		got, _ := drainBodies(ctx, t, q.Mailbox)
		failed, copies, lostButArrived := 0, 0, 0
		for i := range n {
			body := fmt.Sprint("p-", i)
			answered, lost, arrived := log.answered[body], log.lost[body], got[body]
			if answered > 1 {
				t.Errorf("%s: %s was sent again after a call answered it was sent (%d answered sends)", h.Name(), body, answered)
			}
			if arrived != answered+lost {
				t.Errorf("%s: %s arrived %d times, but %d sends were applied", h.Name(), body, arrived, answered+lost)
			}
			switch {
			case errs[i] == nil && answered != 1:
				t.Errorf("%s: Send of %s succeeded but no call answered it was sent (%d applied with the answer lost)", h.Name(), body, lost)
			case errs[i] != nil:
				failed++
				if arrived > 0 {
					lostButArrived++
				}
			}
			if arrived > 1 {
				copies += arrived - 1
			}
		}
		t.Logf("%s: %d messages from %d goroutines under %.0f %% faults in %v: %d Sends failed (%d of them arrived all the same: an attempt's answer was lost), %d copies from lost answers (SQS-side duplicates); %d SendMessageBatch calls",
			h.Name(), n, senders, 100*faultRate, took.Round(time.Millisecond), failed, lostButArrived, copies, log.calls)
		t.Logf("%s: faults: send %v; producer stats %+v", h.Name(), &fs.send, p.Stats())
		if failed > n/100 {
			t.Errorf("%s: %d of %d Sends failed, want well under 1 %% with 10 attempts", h.Name(), failed, n)
		}
		for _, err := range errs {
			if err != nil {
				t.Logf("%s: one failed Send: %v", h.Name(), err)
				break
			}
		}
	})
}

// A FIFO queue's message groups arrive in the order sent under the same
// faults: 8 groups of 25 messages, each group enqueued in order from a
// goroutine of its own. Deduplication (content-based) drops the copies of
// lost answers, so each message arrives once; every Send reports its
// sequence number.
func TestE2EProducerFIFOOrderUnderFaults(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{FIFO: true, ContentBasedDeduplication: true})
		defer cleanup()
		p, fs := newProducer(t, q.Mailbox, faultRate, 7, producer.Config{MaxAttempts: producer.MaxMaxAttempts})
		const groups, each = 8, 25 // a group's messages go one per round trip, retries included: about 25 s on fauxqs
		var wg sync.WaitGroup
		began := time.Now()
		for g := range groups {
			wg.Go(func() {
				var pds []*producer.Pending
				for i := range each {
					pd, err := p.Enqueue(ctx, sqsloop.OutgoingMessage{Body: fmt.Sprintf("g%d-%03d", g, i), MessageGroupID: fmt.Sprint("g", g)})
					if err != nil {
						t.Errorf("Enqueue: %v", err)
						return
					}
					pds = append(pds, pd)
				}
				for _, pd := range pds {
					res, err := pd.Wait(ctx)
					if err != nil || res.SequenceNumber == "" {
						t.Errorf("group g%d: result %+v, %v; want sent with a sequence number", g, res, err)
					}
				}
			})
		}
		wg.Wait()
		took := time.Since(began)
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		_, all := drainBodies(ctx, t, q.Mailbox)
		next := map[string]int{}
		for _, m := range all {
			want := fmt.Sprintf("%s-%03d", m.MessageGroupID, next[m.MessageGroupID])
			if m.Body != want {
				t.Fatalf("%s: group %s: got %s, want %s (order broken)", h.Name(), m.MessageGroupID, m.Body, want)
			}
			next[m.MessageGroupID]++
		}
		t.Logf("%s: %d FIFO messages in %d groups under %.0f %% faults in %v, in order; faults %v; stats %+v",
			h.Name(), len(all), groups, 100*faultRate, took.Round(time.Millisecond), &fs.send, p.Stats())
		if len(all) != groups*each {
			t.Errorf("%s: %d messages arrived, want %d, each once", h.Name(), len(all), groups*each)
		}
	})
}

// Sizes on the wire: a message over 1 MiB is refused before any call,
// naming its size; three of 400 KiB (1.2 MiB in all) go in two
// SendMessageBatch calls and all arrive (through Send on every mailbox: a
// database's bulk path takes them in one). The linger is the longest, 1 s, so that the three are
// pending together however slowly the test enqueues them on a loaded
// machine (with 5 ms, one may go alone before the next is enqueued).
func TestE2EProducerSizeLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, h mailboxtest.Harness) {
		ctx := t.Context()
		q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{})
		defer cleanup()
		p, counted := newBatchProducer(t, q.Mailbox, producer.Config{Linger: producer.MaxLinger})
		log := counted.log
		_, err := p.Send(ctx, sqsloop.OutgoingMessage{Body: strings.Repeat("x", sqsloop.MaxMessageSize+1)})
		if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "got 1048577") {
			t.Errorf("%s: Send of 1 MiB + 1 byte = %v, want ErrInvalidArgument naming the size", h.Name(), err)
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
				t.Errorf("%s: %v", h.Name(), err)
			}
		}
		if err := p.Close(ctx); err != nil {
			t.Error(err)
		}
		got, _ := drainBodies(ctx, t, q.Mailbox)
		if log.calls != 2 || len(got) != 3 {
			t.Errorf("%s: %d calls, %d messages arrived; want 2 calls (1.2 MiB split), 3 messages", h.Name(), log.calls, len(got))
		}
	})
}
