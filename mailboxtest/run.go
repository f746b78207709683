package mailboxtest

import (
	"sync"
	"testing"
)

// A scenario is one named behaviour every Mailbox must show.
type scenario struct {
	name string
	run  func(t *testing.T, h Harness)
}

// scenarios lists the suite. Names are the same for every harness, so one
// implementation's failure can be compared with another's run by name.
var scenarios = []scenario{
	{"TestRoundTripWithAttributes", testRoundTripWithAttributes},
	{"TestVisibilityHidesThenReveals", testVisibilityHidesThenReveals},
	{"TestExtendKeepsHiddenPastOriginalTimeout", testExtendKeepsHiddenPastOriginalTimeout},
	{"TestNackRevealsAtOnce", testNackRevealsAtOnce},
	{"TestStaleReceiptHandleAfterRedelivery", testStaleReceiptHandleAfterRedelivery},
	{"TestLeaseCeiling", testLeaseCeiling},
	{"TestPartialBatchFailurePerEntry", testPartialBatchFailurePerEntry},
	{"TestBatchEntriesNamingOneMessage", testBatchEntriesNamingOneMessage},
	{"TestBatchLimits", testBatchLimits},
	{"TestSendBulk", testSendBulk},
	{"TestRequestRulesAreSqsloops", testRequestRulesAreSqsloops},
	{"TestLongPollingReturnsEarly", testLongPollingReturnsEarly},
	{"TestVisibilityChangeWakesLongPoll", testVisibilityChangeWakesLongPoll},
	{"TestDeleteFreeingAFIFOGroupWakesLongPoll", testDeleteFreeingAFIFOGroupWakesLongPoll},
	{"TestReceiveChoosesMessageAttributes", testReceiveChoosesMessageAttributes},
	{"TestApproximateReceiveCountIncrements", testApproximateReceiveCountIncrements},
	{"TestRedriveToDLQ", testRedriveToDLQ},
	{"TestReceiveGoesOnPastDeadLetters", testReceiveGoesOnPastDeadLetters},
	{"TestStandardQueueKeepsGroupID", testStandardQueueKeepsGroupID},
	{"TestReceiveSkipsGroups", testReceiveSkipsGroups},
	{"TestFIFOOrderWithinGroup", testFIFOOrderWithinGroup},
	{"TestFIFOReceiveFillsFromOneGroupFirst", testFIFOReceiveFillsFromOneGroupFirst},
	{"TestConcurrentReceiversNeverShareAMessage", testConcurrentReceiversNeverShareAMessage},
	{"TestConcurrentFIFOReceiversKeepGroupsApart", testConcurrentFIFOReceiversKeepGroupsApart},
	{"TestCloseStopsEveryCall", testCloseStopsEveryCall},
	{"TestQueueAttributes", testQueueAttributes},
	{"TestOpenDeadLetterQueue", testOpenDeadLetterQueue},
	{"TestPriorityOrdersReceives", testPriorityOrdersReceives},
	{"TestPriorityOrdersFIFOGroups", testPriorityOrdersFIFOGroups},
}

// ScenarioNames returns the names of the conformance scenarios, in the order
// Run starts them. The slice is a copy; the function is safe for concurrent
// use.
func ScenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// Run runs the conformance suite against h: every scenario, each as a
// subtest of t named as in ScenarioNames, each on queues of its own, all at
// once. Each subtest runs in a goroutine of its own and Run returns when they
// all have. The scenarios spend their time waiting on queues, not computing,
// so they do not go through t.Parallel, whose limit (-parallel, GOMAXPROCS
// by default) would run them two at a time on a two-core machine.
//
// A scenario skips when h lacks a feature it needs (Features.FIFO,
// Features.DLQ, Features.AttributesReader, Features.Priority), and logs a declared difference by
// name (see the Diff… constants) where h's Features say it departs from SQS.
// On a real server the suite takes about as long as its longest scenario
// (about 5 s); under a virtual-time harness, next to no wall-clock time.
//
// Call Run from the test's goroutine; h must be safe for concurrent use.
func Run(t *testing.T, h Harness) {
	var wg sync.WaitGroup
	for _, s := range scenarios {
		wg.Go(func() {
			t.Run(s.name, func(t *testing.T) {
				h.Run(t, func(t *testing.T) { s.run(t, h) })
			})
		})
	}
	wg.Wait()
}
