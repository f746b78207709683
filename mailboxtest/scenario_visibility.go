package mailboxtest

import (
	"errors"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// testVisibilityHidesThenReveals: a received message stays hidden for the
// visibility timeout the receive asked for, then comes back with a new
// receipt handle and a higher receive count.
func testVisibilityHidesThenReveals(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	SendBodies(ctx, t, q.Mailbox, "hide me")
	m := receiveOne(ctx, t, q.Mailbox, patience, shortLease)
	start := time.Now()
	ExpectNone(ctx, t, q.Mailbox, settle)
	again := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if again.ID != m.ID {
		t.Fatalf("redelivered message ID = %s, want %s", again.ID, m.ID)
	}
	if again.ReceiptHandle == m.ReceiptHandle {
		t.Errorf("redelivery kept the receipt handle %q; every receive must give a new one", m.ReceiptHandle)
	}
	if again.ReceiveCount != 2 {
		t.Errorf("ReceiveCount on redelivery = %d, want 2", again.ReceiveCount)
	}
	if f.VirtualTime {
		if got := time.Since(start); got != shortLease {
			t.Errorf("message reappeared %v after the receive, want exactly the %v visibility timeout", got, shortLease)
		}
	}
	AckAll(ctx, t, q.Mailbox, again)

	if !f.VirtualTime {
		return // the rounding below is checked to the millisecond, in virtual time only
	}
	// SQS counts whole seconds: a 1.5 s lease hides the message for 2 s.
	const frac, whole = 1500 * time.Millisecond, 2 * time.Second
	SendBodies(ctx, t, q.Mailbox, "sub-second")
	m = receiveOne(ctx, t, q.Mailbox, patience, frac)
	if err := h.Sleep(ctx, whole-time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease}); err != nil || len(msgs) != 0 {
		t.Fatalf("1 ms before a %v lease (rounded up to %v) ends: Receive = %d messages, %v; want none", frac, whole, len(msgs), err)
	}
	if err := h.Sleep(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Mailbox.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease})
	if err != nil || len(msgs) != 1 || msgs[0].ID != m.ID {
		t.Fatalf("when a %v lease (rounded up to %v) ends: Receive = %s, %v; want message %s", frac, whole, describe(msgs), err, m.ID)
	}
	AckAll(ctx, t, q.Mailbox, msgs...)
}

// testExtendKeepsHiddenPastOriginalTimeout: an extend, counted from the
// moment it is made, keeps the message hidden past the end of the original
// lease; the message comes back when the extended lease ends.
func testExtendKeepsHiddenPastOriginalTimeout(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	SendBodies(ctx, t, q.Mailbox, "extend me")
	m := receiveOne(ctx, t, q.Mailbox, patience, shortLease)
	start := time.Now()
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	// Hidden until start+1s+3s = start+4s; the original lease ended at start+2s.
	const extension = 3 * time.Second
	if err := change(ctx, q.Mailbox, m, extension); err != nil {
		t.Fatalf("extend: %v", err)
	}
	ExpectNone(ctx, t, q.Mailbox, 2*time.Second) // until start+3s, past the original start+2s
	again := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if again.ID != m.ID || again.ReceiveCount != 2 {
		t.Fatalf("after the extended lease: got %s, want message %s with ReceiveCount 2", describe([]*sqsloop.Message{again}), m.ID)
	}
	if h.Features().VirtualTime {
		if got, want := time.Since(start), time.Second+extension; got != want {
			t.Errorf("message reappeared %v after the receive, want %v (extension counted from when it was made)", got, want)
		}
	}
	AckAll(ctx, t, q.Mailbox, again)
}

// testNackRevealsAtOnce: a nack (visibility 0) makes the message visible at
// once, well before its lease would have ended; a nack with a back-off hides
// it for that long.
func testNackRevealsAtOnce(t *testing.T, h Harness) {
	ctx := t.Context()
	f := h.Features()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	SendBodies(ctx, t, q.Mailbox, "nack me")
	m := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if err := change(ctx, q.Mailbox, m, 0); err != nil {
		t.Fatalf("nack: %v", err)
	}
	start := time.Now()
	again := receiveOne(ctx, t, q.Mailbox, patience, longLease) // the lease had 30 s left
	if again.ID != m.ID || again.ReceiveCount != 2 {
		t.Fatalf("after a nack: got %s, want message %s with ReceiveCount 2", describe([]*sqsloop.Message{again}), m.ID)
	}
	if f.VirtualTime {
		if got := time.Since(start); got != 0 {
			t.Errorf("nacked message reappeared after %v, want at once", got)
		}
	}

	const backoff = 2 * time.Second
	if err := change(ctx, q.Mailbox, again, backoff); err != nil {
		t.Fatalf("nack with a %v back-off: %v", backoff, err)
	}
	start = time.Now()
	ExpectNone(ctx, t, q.Mailbox, settle)
	third := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if third.ID != m.ID || third.ReceiveCount != 3 {
		t.Fatalf("after a nack with back-off: got %s, want message %s with ReceiveCount 3", describe([]*sqsloop.Message{third}), m.ID)
	}
	if f.VirtualTime {
		if got := time.Since(start); got != backoff {
			t.Errorf("message nacked with a %v back-off reappeared after %v", backoff, got)
		}
	}
	AckAll(ctx, t, q.Mailbox, third)
}

// testStaleReceiptHandleAfterRedelivery: once a lapsed message is received
// again, the old receipt handle can no longer extend it
// (ErrReceiptHandleExpired), nor delete it: as SQS documents for
// DeleteMessage, a delete with an old handle succeeds but deletes nothing,
// so the message survives and is delivered again. The new handle still
// extends and deletes it.
func testStaleReceiptHandleAfterRedelivery(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	SendBodies(ctx, t, q.Mailbox, "stale")
	first := receiveOne(ctx, t, q.Mailbox, patience, time.Second)
	second := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if second.ID != first.ID || second.ReceiptHandle == first.ReceiptHandle {
		t.Fatalf("redelivery: got %s with handle equal to the old one: %v", describe([]*sqsloop.Message{second}), second.ReceiptHandle == first.ReceiptHandle)
	}

	if err := change(ctx, q.Mailbox, first, longLease); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
		t.Errorf("ChangeVisibility with the stale handle: %v, want ErrReceiptHandleExpired", err)
	}
	err := oneEntry(q.Mailbox.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "sqsloop-unknown-receipt-handle", Timeout: longLease}}))
	if !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
		t.Errorf("ChangeVisibility with an unknown handle: %v, want ErrReceiptHandleExpired", err)
	}

	if err := ack(ctx, q.Mailbox, first); err != nil {
		t.Errorf("Delete with the stale handle: %v, want nil (SQS accepts it and deletes nothing)", err)
	}

	// The message survived the stale delete: the newest handle still holds
	// it, and once given back it is delivered again.
	if err := change(ctx, q.Mailbox, second, longLease); err != nil {
		t.Fatalf("extend with the newest handle after a stale delete: %v (the stale delete must not delete)", err)
	}
	if err := change(ctx, q.Mailbox, second, 0); err != nil {
		t.Fatalf("nack with the newest handle: %v", err)
	}
	third := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if third.ID != first.ID || third.ReceiveCount != 3 {
		t.Fatalf("after the stale delete: got %s, want message %s delivered a third time", describe([]*sqsloop.Message{third}), first.ID)
	}
	if err := ack(ctx, q.Mailbox, third); err != nil {
		t.Fatalf("Delete with the newest handle: %v", err)
	}
	ExpectNone(ctx, t, q.Mailbox, settle)
}

// testLeaseCeiling: a message cannot stay hidden more than 12 hours after the
// receive that produced its handle; asking past that fails the entry with
// ErrLeaseCeiling, while a shorter extension still works.
func testLeaseCeiling(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()

	SendBodies(ctx, t, q.Mailbox, "ceiling")
	m := receiveOne(ctx, t, q.Mailbox, patience, longLease)
	if err := h.Sleep(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	err := change(ctx, q.Mailbox, m, sqsloop.MaxVisibilityTimeout) // ends 12 h + 1 s after the receive
	switch {
	case h.Features().LeaseCeiling && !errors.Is(err, sqsloop.ErrLeaseCeiling):
		t.Errorf("extending to 12 h one second after the receive: %v, want ErrLeaseCeiling", err)
	case !h.Features().LeaseCeiling && err != nil:
		t.Errorf("extending to 12 h one second after the receive: %v, want nil (Features.LeaseCeiling is false)", err)
	case !h.Features().LeaseCeiling:
		declared(t, h, DiffNoLeaseCeiling, "an extend reaching 12 h + 1 s past the receive was accepted")
	}
	if err := change(ctx, q.Mailbox, m, time.Hour); err != nil {
		t.Errorf("extending by 1 h, well inside the ceiling: %v", err)
	}
	AckAll(ctx, t, q.Mailbox, m)
}
