package mailboxtest

import (
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// promptly bounds, on the wall clock, how long after the call that makes a
// message receivable a waiting long poll may take to return it: far more
// than a wake-up takes (milliseconds; fauxqs under the race detector up to
// 200 ms), on a loaded machine too, and less than a poll that only looked
// again on its own would take (a mailbox that looks every 2 s, acted on
// half a second into the poll: 1.5 s).
const promptly = time.Second

// waiting is how long into a long poll the scenarios act: the poll is
// waiting by then.
const waiting = 500 * time.Millisecond

// expectWoken reads a waiting long poll's result and fails t unless it
// returned the message id, when the call made at acted (wait after the
// poll's start) made it receivable: exactly then in virtual time,
// within promptly of it on the wall clock. what names the call.
func expectWoken(t *testing.T, h Harness, pending <-chan receiveResult, acted time.Time, wait time.Duration, id, what string) *sqsloop.Message {
	t.Helper()
	r := <-pending
	late := time.Since(acted)
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ID != id {
		t.Fatalf("20 s long poll waiting at %s: %s, %v; want message %s", what, describe(r.msgs), r.err, id)
	}
	switch {
	case h.Features().VirtualTime && r.elapsed != wait:
		t.Errorf("20 s long poll waiting at %s returned %v after it began, want %v (at once)", what, r.elapsed, wait)
	case !h.Features().VirtualTime && late >= promptly:
		t.Errorf("20 s long poll waiting at %s returned %v after it, want within %v: the wake-up did not reach it", what, late.Round(time.Millisecond), promptly)
	case !h.Features().VirtualTime:
		t.Logf("%s: the waiting long poll returned %v after %s", h.Name(), late.Round(time.Millisecond), what)
	}
	return r.msgs[0]
}

// testVisibilityChangeWakesLongPoll: a visibility change that makes a
// message receivable sooner reaches a long poll already waiting: a nack in
// a batch (beside an extend) returns the message to it at once, and a lease
// shortened to 2 s returns the message to it when those 2 s end, not when
// the old lease would have.
func testVisibilityChangeWakesLongPoll(t *testing.T, h Harness) {
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{})
	defer cleanup()
	mb := q.Mailbox

	SendBodies(ctx, t, mb, "kept", "nacked")
	held := ReceiveN(ctx, t, mb, 2, patience, longLease)
	kept, nacked := held[0], held[1]
	if kept.Body != "kept" {
		kept, nacked = nacked, kept
	}
	req := sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime}
	pending := receiveAsync(ctx, mb, req)
	if err := h.Sleep(ctx, waiting); err != nil { // the poll waits: both messages are in flight
		t.Fatal(err)
	}
	acted := time.Now()
	errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{
		{ReceiptHandle: kept.ReceiptHandle, Timeout: longLease},
		{ReceiptHandle: nacked.ReceiptHandle, Timeout: 0},
	})
	mustAllOK(t, "ChangeVisibility (an extend and a nack)", errs, err, 2)
	back := expectWoken(t, h, pending, acted, waiting, nacked.ID, "a nack in a batch")

	pending = receiveAsync(ctx, mb, req)
	if err := h.Sleep(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	const shorter = 2 * time.Second
	if err := change(ctx, mb, back, shorter); err != nil {
		t.Fatalf("shortening a lease to %v: %v", shorter, err)
	}
	expectWoken(t, h, pending, time.Now().Add(shorter), waiting+shorter, nacked.ID, "a lease shortened to 2 s")
}

// testDeleteFreeingAFIFOGroupWakesLongPoll: on a FIFO queue, the delete
// of the message in flight at the head of a group makes the group's next
// message receivable, and a long poll already waiting gets it at once.
func testDeleteFreeingAFIFOGroupWakesLongPoll(t *testing.T, h Harness) {
	ctx := t.Context()
	if !h.Features().FIFO {
		t.Skipf("%s: Features.FIFO is false", h.Name())
	}
	q, cleanup := h.NewQueue(ctx, t, QueueOptions{FIFO: true})
	defer cleanup()
	mb := q.Mailbox

	ids := SendAll(ctx, t, mb,
		sqsloop.OutgoingMessage{Body: "head", MessageGroupID: "g", DeduplicationID: "head"},
		sqsloop.OutgoingMessage{Body: "next", MessageGroupID: "g", DeduplicationID: "next"})
	msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: settle})
	if err != nil || len(msgs) != 1 || msgs[0].ID != ids[0] {
		t.Fatalf("Receive: %s, %v; want the group's head %s", describe(msgs), err, ids[0])
	}
	pending := receiveAsync(ctx, mb, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: longLease, WaitTime: sqsloop.MaxWaitTime})
	if err := h.Sleep(ctx, waiting); err != nil { // the poll waits: the group is in flight
		t.Fatal(err)
	}
	acted := time.Now()
	AckAll(ctx, t, mb, msgs...)
	next := expectWoken(t, h, pending, acted, waiting, ids[1], "the delete of its group's head")
	AckAll(ctx, t, mb, next)
}
