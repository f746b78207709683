package visibility

import (
	"errors"
	"fmt"
)

var (
	// ErrLeaseLost matches (errors.Is) every LeaseLostError: the message's
	// lease is gone and another worker may receive the message.
	ErrLeaseLost = errors.New("visibility: lease lost")

	// ErrLeaseLapsed is the reason of a lease that ran out because its
	// handler did not beat since the previous extension (HeartbeatGated), or
	// because extension is disabled.
	ErrLeaseLapsed = errors.New("visibility: lease lapsed without a heartbeat")
)

// LeaseLost reports one lost lease to Config.OnLeaseLost.
type LeaseLost struct {
	// MessageID is the lost message's ID.
	MessageID string
	// ReceiveCount is the message's approximate receive count at this receive.
	ReceiveCount int
	// Err is a *LeaseLostError; its reason is one of
	// sqsloop.ErrReceiptHandleExpired (the handle went stale),
	// ErrLeaseLapsed (no beat), sqsloop.ErrLeaseCeiling (12 hours or
	// Config.MaxExtension reached), another permanent error of an
	// extension (sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed,
	// sqsloop.ErrInvalidArgument), or the last transient error of the
	// extensions that kept failing until the deadline.
	Err error
}

// LeaseLostError is the error a lost lease is reported with, and the cause
// of the handler's context when Config.CancelOnLeaseLost is set. It matches
// ErrLeaseLost and its Reason with errors.Is.
type LeaseLostError struct {
	// MessageID is the lost message's ID.
	MessageID string
	// Reason is why the lease was lost (see LeaseLost.Err).
	Reason error
}

// Error implements error.
func (e *LeaseLostError) Error() string {
	return fmt.Sprintf("visibility: lease of message %s lost: %v", e.MessageID, e.Reason)
}

// Is reports whether target is ErrLeaseLost.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// Unwrap returns the reason.
func (e *LeaseLostError) Unwrap() error { return e.Reason }
