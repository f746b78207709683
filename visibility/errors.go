package visibility

import "errors"

var (
	// ErrLeaseLost matches (errors.Is) every error a lost lease is
	// reported with (Config.OnLeaseLost, sqsloop.LeaseLostEvent.Err, and
	// the cause of the handler's context with Config.CancelOnLeaseLost):
	// the message's lease is gone and another worker may receive the
	// message. The same error also matches its reason:
	// sqsloop.ErrReceiptHandleExpired (the handle went stale),
	// ErrLeaseLapsed (no beat), sqsloop.ErrLeaseCeiling (12 hours or
	// Config.MaxExtension reached), another permanent error of an
	// extension (sqsloop.ErrQueueNotFound, sqsloop.ErrMailboxClosed,
	// sqsloop.ErrInvalidArgument), or the last transient error of the
	// extensions or acks that kept failing until the deadline.
	ErrLeaseLost = errors.New("visibility: lease lost")

	// ErrLeaseLapsed is the reason of a lease that ran out because its
	// handler did not beat since the previous extension (heartbeat-gated),
	// or because extension is disabled.
	ErrLeaseLapsed = errors.New("visibility: lease lapsed without a heartbeat")
)
