// Package mailboxtest is the conformance suite every [sqsloop.Mailbox] runs
// from its own tests: named scenarios (TestNackRevealsAtOnce,
// TestStaleReceiptHandleAfterRedelivery, …) that check the Mailbox contract
// and the SQS semantics the consumer relies on, the same for every
// implementation.
//
// It imports no mailbox and nothing outside package sqsloop, package testing
// and the standard library: a Mailbox's tests supply a [Harness] that makes
// fresh queues on their implementation and declares its [Features], and
// [Run] runs every scenario on it. Package memmailbox runs the suite in
// plain `go test`, in virtual time; package sqsmailbox runs it against the
// SQS-compatible server SQS_ENDPOINT names. Their harnesses, in the
// project's internal/harness package (mem.go, sqs.go), are complete ones to
// start from.
//
// A harness for a Mailbox "mymailbox", in that package's tests:
//
//	type harness struct{}
//
//	func (harness) Name() string { return "mymailbox" }
//
//	// Features: FIFO queues, SQS's lease ceiling and FIFO batches; no
//	// redrive (DLQ false: the redrive scenario skips).
//	func (harness) Features() mailboxtest.Features {
//		return mailboxtest.Features{FIFO: true, LeaseCeiling: true, FIFOBatchesWithinGroup: true, RedriveKeepsMessageID: true}
//	}
//
//	// Run runs one scenario; synctest.Test(t, body) gives it virtual time.
//	func (harness) Run(t *testing.T, body func(*testing.T)) { body(t) }
//
//	func (harness) NewQueue(ctx context.Context, t testing.TB, opts mailboxtest.QueueOptions) (mailboxtest.Queue, func()) {
//		mb, err := mymailbox.Open(ctx, mymailbox.Config{
//			VisibilityTimeout: opts.VisibilityTimeout, Delay: opts.Delay, FIFO: opts.FIFO,
//			ContentBasedDeduplication: opts.ContentBasedDeduplication,
//		})
//		if err != nil {
//			t.Fatalf("creating a queue: %v", err)
//		}
//		return mailboxtest.Queue{Mailbox: mb}, func() { mb.Close() }
//	}
//
//	func (harness) Sleep(ctx context.Context, d time.Duration) error {
//		select {
//		case <-time.After(d):
//			return nil
//		case <-ctx.Done():
//			return ctx.Err()
//		}
//	}
//
//	func TestConformance(t *testing.T) { mailboxtest.Run(t, harness{}) }
//
// A harness declares where its implementation knowingly departs from Amazon
// SQS (fauxqs enforces no 12-hour lease ceiling, and returns every message
// attribute to a receive that asked for none); a scenario that meets a
// declared difference logs it by name instead of failing or silently passing, so `go test -v` piped into
// `grep "declared difference"` lists them all.
//
// The helpers [SendBodies], [SendAll], [ReceiveN], [ExpectNone] and [AckAll]
// are exported for end-to-end tests that work on the same queues. Like
// t.Fatal, which they call on a failure, they must be called from the
// goroutine running the test; they are otherwise safe for concurrent use.
// They wait with long polls of whole seconds, never a fixed sleep, so on a
// real server a wait ends as soon as the awaited message is visible.
//
// The package imports no goroutine-leak checker; a harness's tests may (the
// scenarios leave no goroutine behind once Run returns, provided the
// harness's cleanups close what NewQueue opened).
package mailboxtest
