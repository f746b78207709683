package mailboxtest

import (
	"context"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Harness gives the conformance suite fresh queues on one Mailbox
// implementation. A Mailbox's own tests implement it and pass it to [Run]. A
// Harness must be safe for concurrent use: scenarios run in parallel, each on
// its own queues.
type Harness interface {
	// Name names the implementation in test logs ("memmailbox",
	// "sqsmailbox/fauxqs").
	Name() string

	// Features declares what the implementation supports and where it
	// knowingly differs from Amazon SQS.
	Features() Features

	// Run runs one scenario's body. A virtual-time harness runs it inside a
	// testing/synctest bubble (synctest.Test(t, body)), so every wait in body
	// (Sleep, a long poll, a visibility timeout) costs no wall-clock time; a
	// real-server harness calls body(t) directly. Queues are created inside
	// body, by NewQueue.
	Run(t *testing.T, body func(t *testing.T))

	// NewQueue creates a fresh queue configured by opts (and its dead-letter
	// queue when opts.MaxReceiveCount > 0) and returns mailboxes for them.
	// cleanup closes the mailboxes and deletes the queues; call it before body
	// returns. On a failure NewQueue calls t.Fatal (so call it from the
	// test's goroutine), and returns only usable queues; it may call t.Skip
	// when the harness lacks a feature opts needs.
	NewQueue(ctx context.Context, t testing.TB, opts QueueOptions) (q Queue, cleanup func())

	// Sleep waits for d or until ctx is done, whichever comes first, and
	// returns ctx's error in the second case. Inside a virtual-time bubble it
	// advances the fake clock; on a real server it waits on the wall clock,
	// which scenarios use only where no long poll can stand in for it.
	Sleep(ctx context.Context, d time.Duration) error
}

// QueueOptions configures a queue made by Harness.NewQueue. The zero value is
// a standard queue with a 30 s visibility timeout, no delay and no redrive.
type QueueOptions struct {
	// VisibilityTimeout is the queue's default visibility timeout, 0–12 h;
	// 0 means SQS's default of 30 s. Real servers count whole seconds.
	VisibilityTimeout time.Duration

	// Delay is the queue's delivery delay (DelaySeconds), 0–15 min.
	Delay time.Duration

	// FIFO makes a FIFO queue (on SQS its name ends in ".fifo"); its DLQ, if
	// any, is FIFO too.
	FIFO bool

	// ContentBasedDeduplication lets FIFO sends omit a deduplication ID.
	ContentBasedDeduplication bool

	// MaxReceiveCount, when above 0, creates a dead-letter queue and a redrive
	// policy that moves a message there after this many receives (SQS allows
	// 1–1000).
	MaxReceiveCount int

	// Priority makes a queue with priorities (sqsloop.QueueSpec.Priority),
	// which only a harness with Features.Priority can make.
	Priority bool
}

// Queue is what Harness.NewQueue returns: the queue's mailbox and, with a
// redrive policy, its dead-letter queue's mailbox.
type Queue struct {
	// Mailbox is the queue under test.
	Mailbox sqsloop.Mailbox

	// DLQ is the dead-letter queue's mailbox; nil without a redrive policy.
	DLQ sqsloop.Mailbox

	// DeadLetterQueue is the DLQ as QueueAttributes reports it (its ARN on
	// SQS, its name in memmailbox); empty without a redrive policy.
	DeadLetterQueue string
}

// Features declares a harness's capabilities, which scenarios skip on, and
// its declared differences from Amazon SQS, which scenarios log by name (see
// the Diff… constants) instead of failing on.
//
// A capability left false (FIFO, DLQ, AttributesReader) makes the scenarios
// that need it skip. A behaviour left false (LeaseCeiling,
// FIFOBatchesWithinGroup, RedriveKeepsMessageID, OmitsUnaskedAttributes,
// FIFODeleteExpires)
// declares a difference: a scenario that meets it logs it by name, and may expect the
// departure (a harness without LeaseCeiling whose mailbox does refuse an
// extend past 12 hours fails TestLeaseCeiling). Amazon SQS has every field
// true but VirtualTime and Priority.
type Features struct {
	// VirtualTime: Run uses testing/synctest, so scenarios may check exact
	// instants (a message reappears exactly when its visibility timeout ends).
	VirtualTime bool

	// FIFO: the implementation supports FIFO queues.
	FIFO bool

	// DLQ: the implementation supports a redrive policy and dead-letter queue.
	DLQ bool

	// AttributesReader: the mailbox implements sqsloop.AttributesReader.
	AttributesReader bool

	// Priority: the implementation keeps queues with priorities
	// (sqsloop.QueueSpec.Priority), which SQS has not: a capability beyond
	// SQS's, not a difference from it.
	Priority bool

	// LeaseCeiling: ChangeVisibility reaching past 12 h after the receive
	// fails its entry with sqsloop.ErrLeaseCeiling, as SQS does.
	LeaseCeiling bool

	// FIFOBatchesWithinGroup: one Receive on a FIFO queue may return several
	// messages of one message group, in order, as SQS does. Without it, a
	// Receive returns at most one message per group.
	FIFOBatchesWithinGroup bool

	// RedriveKeepsMessageID: a message moved to the DLQ keeps its message ID,
	// as on SQS.
	RedriveKeepsMessageID bool

	// OmitsUnaskedAttributes: a receive asking for no message attributes
	// (an empty ReceiveRequest.MessageAttributeNames) gets none, as on SQS.
	OmitsUnaskedAttributes bool

	// FIFODeleteExpires: on a FIFO queue a delete whose receipt handle no
	// longer holds its message (already deleted, received again, or its
	// lease over) fails its entry with sqsloop.ErrReceiptHandleExpired, as
	// SQS does ("The receipt handle has expired").
	FIFODeleteExpires bool

	// StandardGroupID: a message sent with a MessageGroupID to a standard
	// queue (a fair queue's tenant) comes back with it, as on SQS.
	StandardGroupID bool
}

// Names of the declared differences, as scenarios log them:
// "declared difference <name> on <harness>: <what happened>". Each goes with
// a Features field; grep a test log for "declared difference" to list them.
const (
	// DiffNoLeaseCeiling: the harness lacks Features.LeaseCeiling; an extend
	// reaching past 12 h after the receive was accepted.
	DiffNoLeaseCeiling = "NoLeaseCeiling"

	// DiffFIFOOnePerGroupReceive: the harness lacks
	// Features.FIFOBatchesWithinGroup; a FIFO receive returned at most one
	// message per message group.
	DiffFIFOOnePerGroupReceive = "FIFOOnePerGroupReceive"

	// DiffRedriveNewMessageID: the harness lacks
	// Features.RedriveKeepsMessageID; the DLQ gave a redriven message a new ID.
	DiffRedriveNewMessageID = "RedriveNewMessageID"

	// DiffReturnsUnaskedAttributes: the harness lacks
	// Features.OmitsUnaskedAttributes; a receive that asked for no message
	// attributes got them all.
	DiffReturnsUnaskedAttributes = "ReturnsUnaskedAttributes"

	// DiffFIFODeleteAlwaysSucceeds: the harness lacks
	// Features.FIFODeleteExpires; a FIFO delete with a handle whose message
	// was gone succeeded.
	DiffFIFODeleteAlwaysSucceeds = "FIFODeleteAlwaysSucceeds"

	// DiffStandardQueueDropsGroupID: the harness lacks
	// Features.StandardGroupID; a standard queue's message came back
	// without the MessageGroupID it was sent with.
	DiffStandardQueueDropsGroupID = "StandardQueueDropsGroupID"
)

// declared logs a declared difference by name, so a reader of the test log
// (and the lead's notes) can collect every place two implementations differ.
func declared(t testing.TB, h Harness, name, format string, args ...any) {
	t.Helper()
	t.Logf("declared difference %s on %s: "+format, append([]any{name, h.Name()}, args...)...)
}
