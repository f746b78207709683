package mailboxtest

import (
	"errors"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testBatchEntriesNamingOneMessage: the entries of a ChangeVisibility batch
// that name one message take effect in order, each with a result of its own
// ("The result of the action on each message is reported individually in
// the response", SQS's ChangeMessageVisibilityBatch): a stale handle beside
// the newest one fails alone; a nack then an extend with one handle leaves
// the message visible (the extend finds it no longer in flight); two
// extends with one handle both succeed and the second stands; an extend past
// the 12-hour ceiling beside a nack fails alone, and the nack stands. A
// Delete batch naming one message twice is answered the same way: on a
// standard queue both entries succeed (the second is a stale delete), on a
// FIFO queue the second fails (its message is gone), and the message is
// deleted once either way.
func testBatchEntriesNamingOneMessage(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	mb := q.Mailbox

	SendBodies(ctx, t, mb, "one message")
	stale := receiveOne(ctx, t, mb, patience, longLease)
	if err := change(ctx, mb, stale, 0); err != nil {
		t.Fatalf("nack: %v", err)
	}
	m := receiveOne(ctx, t, mb, patience, longLease)

	entries := func(what string, changes []sqsloop.VisibilityChange, want ...error) {
		t.Helper()
		errs, err := mb.ChangeVisibility(ctx, changes)
		if err != nil || len(errs) != len(want) {
			t.Fatalf("%s: call %v, %d entry results; want %d", what, err, len(errs), len(want))
		}
		for i := range want {
			if (want[i] == nil) != (errs[i] == nil) || (want[i] != nil && !errors.Is(errs[i], want[i])) {
				t.Errorf("%s: entry %d: %v, want %v", what, i, errs[i], want[i])
			}
		}
	}

	entries("a stale handle beside the newest", []sqsloop.VisibilityChange{
		{ReceiptHandle: stale.ReceiptHandle, Timeout: longLease},
		{ReceiptHandle: m.ReceiptHandle, Timeout: longLease},
	}, sqsloop.ErrReceiptHandleExpired, nil)

	entries("one handle: a nack, then an extend", []sqsloop.VisibilityChange{
		{ReceiptHandle: m.ReceiptHandle, Timeout: 0},
		{ReceiptHandle: m.ReceiptHandle, Timeout: longLease},
	}, nil, sqsloop.ErrReceiptHandleExpired)
	start := time.Now()
	m = receiveOne(ctx, t, mb, patience, longLease) // the nack stood: visible at once, not in 30 s
	if f.VirtualTime && time.Since(start) != 0 {
		t.Errorf("after a nack and a refused extend the message came back %v later, want at once", time.Since(start))
	}

	entries("one handle: two extends", []sqsloop.VisibilityChange{
		{ReceiptHandle: m.ReceiptHandle, Timeout: longLease},
		{ReceiptHandle: m.ReceiptHandle, Timeout: shortLease},
	}, nil, nil)
	start = time.Now()
	m = receiveOne(ctx, t, mb, patience, longLease) // the second extend stood: back in 2 s, not 30 s
	if f.VirtualTime && time.Since(start) != shortLease {
		t.Errorf("after extends to %v and then %v the message came back %v later, want %v", longLease, shortLease, time.Since(start), shortLease)
	}

	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	past := []sqsloop.VisibilityChange{
		{ReceiptHandle: m.ReceiptHandle, Timeout: sqsloop.MaxVisibilityTimeout}, // 12 h + 1 s after the receive
		{ReceiptHandle: m.ReceiptHandle, Timeout: 0},
	}
	if f.LeaseCeiling {
		entries("one handle: past the ceiling, then a nack", past, sqsloop.ErrLeaseCeiling, nil)
	} else {
		entries("one handle: past the ceiling, then a nack", past, nil, nil)
		declared(t, h, DiffNoLeaseCeiling, "an extend reaching 12 h + 1 s past the receive was accepted beside a nack")
	}
	m = receiveOne(ctx, t, mb, patience, longLease) // the nack stood

	errs, err := mb.Delete(ctx, []string{stale.ReceiptHandle, m.ReceiptHandle, m.ReceiptHandle})
	mustAllOK(t, "Delete with a stale handle and the newest one twice (a standard queue)", errs, err, 3)
	ExpectNone(ctx, t, mb, settle)

	if !f.FIFO {
		return
	}
	fq, fcleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer fcleanup()
	SendAll(ctx, t, fq.Mailbox, sqsloop.OutgoingMessage{Body: "fifo", MessageGroupID: "g", DeduplicationID: "fifo"})
	fm := receiveOne(ctx, t, fq.Mailbox, patience, longLease)
	errs, err = fq.Mailbox.Delete(ctx, []string{fm.ReceiptHandle, fm.ReceiptHandle})
	switch {
	case err != nil || len(errs) != 2 || errs[0] != nil:
		t.Errorf("Delete naming one FIFO message twice: %v, %v; want the first entry to delete it", errs, err)
	case f.FIFODeleteExpires && !errors.Is(errs[1], sqsloop.ErrReceiptHandleExpired):
		t.Errorf("Delete naming one FIFO message twice: second entry %v, want ErrReceiptHandleExpired (it finds the message gone)", errs[1])
	case !f.FIFODeleteExpires && errs[1] != nil:
		t.Errorf("Delete naming one FIFO message twice: second entry %v, want nil (Features.FIFODeleteExpires is false)", errs[1])
	case !f.FIFODeleteExpires:
		declared(t, h, DiffFIFODeleteAlwaysSucceeds, "the second delete of one FIFO message in a batch succeeded")
	}
	ExpectNone(ctx, t, fq.Mailbox, settle)
}
