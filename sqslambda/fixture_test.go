package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// The fixtures in testdata are SQS events as Lambda delivers them (the
// shape of the Lambda developer guide's examples): standard.json, a
// standard queue's batch of 7 records (4 good, 2 failing, 1 panicking, one
// redelivered, one with an AWSTraceHeader); fifo.json, a FIFO queue's batch
// of 9 records in 3 message groups, interleaved; attributes.json, one
// record with a message attribute of every data type and every system
// attribute.

// The standard batch is answered with exactly its failing and panicking
// records, in the event's order, whatever the concurrency.
func TestStandardBatchReportsExactlyItsFailures(t *testing.T) {
	ev := fixture(t, "standard.json")
	want := idsOf(ev, 2, 4, 6)
	for _, concurrency := range []int{1, 3, 10} {
		t.Run(fmt.Sprint("concurrency ", concurrency), func(t *testing.T) {
			var r runs
			h := mustNew(t, byBody(&r), Config{Concurrency: concurrency})
			resp, err := h.Handle(invocation(t, time.Minute), ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(resp); !slices.Equal(got, want) {
				t.Errorf("batchItemFailures %v, want %v", got, want)
			}
			if n := len(r.get()); n != 7 {
				t.Errorf("%d records ran, want 7", n)
			}
			st := h.Stats()
			if st.Received != 7 || st.Redelivered != 1 || st.Started != 7 || st.Succeeded != 4 || st.Failed != 3 ||
				st.Panics != 1 || st.Acked != 4 || st.ItemFailures != 3 || st.Invocations != 1 || st.Nacked != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// On a FIFO queue a failure stops the rest of its message group, which is
// reported failed without running; the other groups go on; each group
// runs in the event's order.
func TestFIFOFailureStopsItsGroup(t *testing.T) {
	ev := fixture(t, "fifo.json")
	// A: ok A1, fail A2, ok A3, ok A4 (records 1, 3, 6, 9); B: all ok (2, 4,
	// 8); C: panic C1, ok C2 (5, 7).
	want := idsOf(ev, 3, 5, 6, 7, 9)
	for _, concurrency := range []int{1, 2, 10} {
		t.Run(fmt.Sprint("concurrency ", concurrency), func(t *testing.T) {
			var r runs
			h := mustNew(t, byBody(&r), Config{Concurrency: concurrency})
			resp, err := h.Handle(invocation(t, time.Minute), ev)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(resp); !slices.Equal(got, want) {
				t.Errorf("batchItemFailures %v, want %v", got, want)
			}
			for group, ran := range map[string][]string{"A": {"ok A1", "fail A2"}, "B": {"ok B1", "ok B2", "ok B3"}, "C": {"panic C1"}} {
				if got := r.ofGroup(group); !slices.Equal(got, ran) {
					t.Errorf("group %s ran %v, want %v", group, got, ran)
				}
			}
			if st := h.Stats(); st.Skipped != 3 || st.Failed != 2 || st.Succeeded != 4 || st.ItemFailures != 5 {
				t.Errorf("stats %+v: want 3 skipped, 2 failed, 4 succeeded", st)
			}
		})
	}
}

// With FIFOStopOnFailure the first failure stops the whole batch: with one
// record at a time (groups in the order they first appear: A, B, C), A1
// runs, A2 fails, and every other record is reported failed unrun.
func TestFIFOFailureStopsTheBatch(t *testing.T) {
	ev := fixture(t, "fifo.json")
	var r runs
	h := mustNew(t, byBody(&r), Config{Concurrency: 1, FIFOStopOnFailure: true})
	resp, err := h.Handle(invocation(t, time.Minute), ev)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(resp), idsOf(ev, 2, 3, 4, 5, 6, 7, 8, 9); !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want %v", got, want)
	}
	if got := r.get(); !slices.Equal(got, []string{"ok A1", "fail A2"}) {
		t.Errorf("ran %v, want A1 and A2 only", got)
	}
	if st := h.Stats(); st.Skipped != 7 || st.Started != 2 {
		t.Errorf("stats %+v: want 7 skipped, 2 started", st)
	}
}

// With several groups at once and FIFOStopOnFailure, a group already
// running finishes its record, but no record starts after the failure:
// A1 waits for B1 and C1 to start, B1 and C1 run until A2 has failed (in
// virtual time they return only once A's goroutine is idle), and then B2,
// B3 and C2 never run; every record is either run or reported failed, and
// a record reported processed always ran.
func TestFIFOFailureStopsTheBatchAcrossGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := fixture(t, "fifo.json")
		var r runs
		var othersStarted sync.WaitGroup
		othersStarted.Add(2)
		a2Failed := make(chan struct{})
		h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
			switch m.Body {
			case "ok A1":
				othersStarted.Wait()
			case "fail A2":
				defer close(a2Failed)
			case "ok B1", "panic C1":
				othersStarted.Done()
				<-a2Failed
				time.Sleep(time.Millisecond) // ends once every other goroutine waits: A's sequence has gone on
			}
			return byBody(&r)(ctx, m)
		}, Config{Concurrency: 3, FIFOStopOnFailure: true})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		failedIDs := ids(resp)
		ran := r.get()
		for _, rec := range ev.Records {
			if !slices.Contains(failedIDs, rec.MessageId) && !slices.Contains(ran, rec.Body) {
				t.Errorf("record %q reported processed but never ran", rec.Body)
			}
		}
		if got, want := failedIDs, idsOf(ev, 3, 4, 5, 6, 7, 8, 9); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want %v: all but A1 and B1", got, want)
		}
		slices.Sort(ran)
		if want := []string{"fail A2", "ok A1", "ok B1", "panic C1"}; !slices.Equal(ran, want) {
			t.Errorf("ran %v, want %v: nothing started after A2 failed", ran, want)
		}
	})
}

// A record becomes the Message a consumer's handler gets: every message
// attribute data type with its value (binary ones decoded), only the
// system attributes sqsloop names (SenderId and DeadLetterQueueSourceArn
// left out, AWSTraceHeader kept), the typed fields parsed; its context
// carries a heartbeat and the invocation's values.
func TestRecordBecomesTheConsumersMessage(t *testing.T) {
	ev := fixture(t, "attributes.json")
	var got *sqsloop.Message
	var hasBeat, hasLambda bool
	h := mustNew(t, func(ctx context.Context, m *sqsloop.Message) error {
		got = m
		hasBeat = heartbeat.FromContext(ctx) != nil
		_, hasLambda = lambdacontext.FromContext(ctx)
		return nil
	}, Config{})
	ctx := lambdacontext.NewContext(invocation(t, time.Minute), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	start := time.Now()
	if _, err := h.Handle(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if got == nil || !hasBeat || !hasLambda {
		t.Fatalf("message %v, heartbeat %v, lambda context %v", got, hasBeat, hasLambda)
	}
	want := &sqsloop.Message{
		ID:            "0f3a6c2e-5b1d-4e8f-9a7c-000000000001",
		Body:          "attributes",
		ReceiptHandle: "AQEB0001Fv2yQ8mKx+3ZtR0Lw==",
		MessageAttributes: map[string]sqsloop.MessageAttribute{
			"customer":  {DataType: "String", StringValue: "Ada Lovelace"},
			"attempt":   {DataType: "Number", StringValue: "3"},
			"price":     {DataType: "Number.float", StringValue: "-12.50"},
			"thumbnail": {DataType: "Binary", BinaryValue: []byte("\x89PNG\r\n\x1a\n")},
			"signature": {DataType: "Binary.sha", BinaryValue: []byte{0, 1, 2, 3, 0xff}},
			"locale":    {DataType: "String.bcp47", StringValue: "fr-CH"},
			"empty":     {DataType: "String", StringValue: ""},
		},
		Attributes: map[string]string{
			sqsloop.AttrApproximateReceiveCount:          "2",
			sqsloop.AttrSentTimestamp:                    "1767225601000",
			sqsloop.AttrApproximateFirstReceiveTimestamp: "1767225601017",
			sqsloop.AttrAWSTraceHeader:                   "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
		},
		ReceiveCount:    2,
		SentAt:          time.UnixMilli(1767225601000),
		FirstReceivedAt: time.UnixMilli(1767225601017),
	}
	// A redelivery: received when the invocation started, as far as the
	// event tells.
	if got.ReceivedAt.Before(start) || got.ReceivedAt.After(time.Now()) {
		t.Errorf("ReceivedAt %v, want the invocation's start", got.ReceivedAt)
	}
	got.ReceivedAt = time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("message\n got %+v\nwant %+v", got, want)
	}
}

// A first delivery's receive is its ApproximateFirstReceiveTimestamp,
// earlier than the invocation: its lease counts from there.
func TestFirstDeliveryReceivedAtItsFirstReceive(t *testing.T) {
	ev := fixture(t, "standard.json")
	m := message(&ev.Records[0], time.Now(), 0)
	if want := time.UnixMilli(1767225601017); !m.ReceivedAt.Equal(want) {
		t.Errorf("ReceivedAt %v, want the first receive %v", m.ReceivedAt, want)
	}
	if m.Attributes[sqsloop.AttrAWSTraceHeader] != "" || ev.Records[4].Attributes[sqsloop.AttrAWSTraceHeader] == "" {
		t.Fatal("fixture: record 5, not record 1, carries a trace header")
	}
	if tr := message(&ev.Records[4], time.Now(), 0).Attributes[sqsloop.AttrAWSTraceHeader]; tr != ev.Records[4].Attributes[sqsloop.AttrAWSTraceHeader] {
		t.Errorf("AWSTraceHeader %q lost", tr)
	}
}

// A panic in the handler or in a middleware is a failure of its record
// alone; the middleware runs as under a consumer (Middleware[0] outermost,
// inside the recovery), with the heartbeat in the context.
func TestPanicsAndMiddleware(t *testing.T) {
	ev := fixture(t, "standard.json")
	var order []string // appended to by record 5's run only
	mw := func(name string) sqsloop.Middleware {
		return func(next sqsloop.Handler) sqsloop.Handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				if heartbeat.FromContext(ctx) == nil {
					t.Error("middleware: no heartbeat in the context")
				}
				if m.Body == "ok third" {
					order = append(order, name)
					if name == "inner" {
						panic("a middleware panics")
					}
				}
				return next(ctx, m)
			}
		}
	}
	h := mustNew(t, byBody(nil), Config{Middleware: []sqsloop.Middleware{mw("outer"), mw("inner")}})
	resp, err := h.Handle(invocation(t, time.Minute), ev)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(resp), idsOf(ev, 2, 4, 5, 6); !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want %v (record 5's middleware panics)", got, want)
	}
	if fmt.Sprint(order) != "[outer inner]" {
		t.Errorf("middleware order %v, want [outer inner]", order)
	}
	if st := h.Stats(); st.Panics != 2 {
		t.Errorf("panics %d, want 2 (the handler's and the middleware's)", st.Panics)
	}
}

// By default, as Powertools' batch processors: an error when every record
// failed, none when one succeeded; none with NoErrorWhenAllFail.
func TestErrorWhenAllFail(t *testing.T) {
	all := events.SQSEvent{Records: fixture(t, "standard.json").Records[1:2]}
	all.Records = append(all.Records, fixture(t, "standard.json").Records[3])
	h := mustNew(t, byBody(nil), Config{})
	resp, err := h.Handle(invocation(t, time.Minute), all)
	if !errors.Is(err, ErrAllFailed) || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("every record failed: err %v, %d failures; want ErrAllFailed and both listed", err, len(resp.BatchItemFailures))
	}
	if _, err := h.Handle(invocation(t, time.Minute), fixture(t, "standard.json")); err != nil {
		t.Fatalf("some records succeeded: err %v, want nil", err)
	}
	quiet := mustNew(t, byBody(nil), Config{NoErrorWhenAllFail: true})
	if resp, err := quiet.Handle(invocation(t, time.Minute), all); err != nil || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("with NoErrorWhenAllFail: err %v, %d failures; want nil and both listed", err, len(resp.BatchItemFailures))
	}
}

// A record without a message ID could not be reported alone: the
// invocation fails before anything runs, so Lambda retries the batch and
// deletes nothing. A message ID twice is reported once.
func TestMessageIDs(t *testing.T) {
	ev := fixture(t, "standard.json")
	var r runs
	h := mustNew(t, byBody(&r), Config{})
	bad := events.SQSEvent{Records: slices.Clone(ev.Records)}
	bad.Records[3].MessageId = ""
	if _, err := h.Handle(invocation(t, time.Minute), bad); !errors.Is(err, sqsloop.ErrInvalidArgument) || len(r.get()) != 0 {
		t.Fatalf("err %v after %d runs, want ErrInvalidArgument before any", err, len(r.get()))
	}
	twice := events.SQSEvent{Records: []events.SQSMessage{ev.Records[1], ev.Records[1], ev.Records[0]}}
	resp, err := h.Handle(invocation(t, time.Minute), twice)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(resp), idsOf(ev, 2); !slices.Equal(got, want) {
		t.Errorf("batchItemFailures %v, want %v once", got, want)
	}
	if resp, err := h.Handle(invocation(t, time.Minute), events.SQSEvent{}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("empty event: %v, %v", resp, err)
	}
}
