package rules

import (
	"errors"

	"github.com/sqsloop/sqsloop"
)

// Fault says what an error of a queue call means for the next attempt at
// the same call: the one classification of the sqsloop sentinels that the
// lease owner, the consumer's receive loop, the producer and sqslambda's
// queue check read. Where they treat a fault differently, the difference
// is the caller's, and written beside its use:
//
//   - Denied does not heal by trying again at once, but an IAM change may
//     still be propagating: the receive loop and the lease owner try again,
//     and give up after visibility.MaxAccessDenied denied calls of one kind
//     in a row; the producer fails the message; sqslambda turns the queue's
//     client off until the next cold start.
//   - HandleGone ends one lease (the lease owner reports it lost) but says
//     nothing of the queue; it only comes from calls about a receipt handle.
//   - QueueGone and Invalid end a receive loop (Run returns the error); the
//     lease owner gives up for good on QueueGone only, since an invalid
//     entry is about one message.
type Fault uint8

const (
	// Transient: anything else (throttling, a timeout, a network error, a
	// 5xx): try again after a back-off.
	Transient Fault = iota
	// Denied: sqsloop.ErrAccessDenied (permissions, credentials, KMS).
	Denied
	// HandleGone: sqsloop.ErrReceiptHandleExpired or sqsloop.ErrLeaseCeiling:
	// this receipt handle can do no more.
	HandleGone
	// Invalid: sqsloop.ErrInvalidArgument: the same request fails again.
	Invalid
	// QueueGone: sqsloop.ErrQueueNotFound or sqsloop.ErrMailboxClosed: no
	// call to this queue through this mailbox will work.
	QueueGone
)

// faults is the table FaultOf reads, in order: the first sentinel err
// matches (errors.Is) decides. The handle's faults come first (a visibility
// change past the 12-hour ceiling is about that handle, whatever else its
// error says), then the queue's (no attempt at it can succeed), then a
// denied call (which may heal in seconds).
var faults = [...]struct {
	target error
	fault  Fault
}{
	{sqsloop.ErrReceiptHandleExpired, HandleGone},
	{sqsloop.ErrLeaseCeiling, HandleGone},
	{sqsloop.ErrQueueNotFound, QueueGone},
	{sqsloop.ErrMailboxClosed, QueueGone},
	{sqsloop.ErrAccessDenied, Denied},
	{sqsloop.ErrInvalidArgument, Invalid},
}

// FaultOf classifies err, an error of a Mailbox call or of one of its batch
// entries (nil: Transient, though no caller asks).
func FaultOf(err error) Fault {
	if err == nil {
		return Transient
	}
	for _, f := range faults {
		if errors.Is(err, f.target) {
			return f.fault
		}
	}
	return Transient
}

// Permanent reports whether err will not heal by trying the same call again
// soon: any fault but Transient.
func Permanent(err error) bool { return FaultOf(err) != Transient }
