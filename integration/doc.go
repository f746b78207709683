// Package integration holds one conformance suite that every
// [sqsloop.Mailbox] must pass, and the harnesses that run it: package
// memmailbox in virtual time ([MemHarness]) and package sqsmailbox on a real
// SQS-compatible server ([SQSHarness], started by [StartSQSServer]).
//
// A [Harness] creates a fresh queue per scenario and declares its
// [Features]: capabilities (FIFO, redrive to a DLQ) and declared differences
// from Amazon SQS (sub-second visibility timeouts, no 12-hour lease
// ceiling). [RunConformance] runs the same named scenarios on
// every harness; a scenario that meets a declared difference says so by name
// in the test log instead of failing or silently passing.
//
// Helpers that scenarios share (ReceiveOne, ReceiveN, ExpectNone, SendAll,
// AckAll, …) fail their testing.TB with t.Fatal, so, like t.Fatal itself,
// they must be called from the goroutine running the test; they are
// otherwise safe for concurrent use. They poll with long polls of whole
// seconds, never with a fixed sleep, so on a real server a wait ends as soon
// as the awaited message is visible.
//
// End-to-end consumer scenarios live in consumer_e2e_test.go. They get queues
// from the same harnesses (NewMemQueue, NewSQSQueue, or a Harness's
// NewQueue), so each scenario can run on memmailbox in virtual time and on a
// real server alike.
//
// The package is test support: it imports package testing, and
// [StartSQSServer] may start a child process (the fauxqs emulator) or a
// container (LocalStack).
package integration
