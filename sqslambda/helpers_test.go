package sqslambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// logs collects log records: the tests read what the Handler reports.
// Safe for concurrent use.
type logs struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

// at returns the messages logged at level, in order.
func (l *logs) at(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level == level {
			out = append(out, r.Message)
		}
	}
	return out
}

// errors returns the "error" attributes of the records logged at level,
// in order.
func (l *logs) errors(level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		r.Attrs(func(a slog.Attr) bool {
			if r.Level == level && a.Key == "error" {
				out = append(out, a.Value.String())
			}
			return true
		})
	}
	return out
}

// newLogger returns a logger into a fresh logs.
func newLogger() (*slog.Logger, *logs) {
	l := &logs{}
	return slog.New(l), l
}

// fixture reads testdata/name, an SQS event as Lambda delivers it.
func fixture(t *testing.T, name string) events.SQSEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// byBody is the tests' handler: a body that starts with "fail" fails,
// one that starts with "panic" panics, any other succeeds. Each run is
// recorded in r, if not nil.
func byBody(r *runs) func(ctx context.Context, m *sqsloop.Message) error {
	return func(ctx context.Context, m *sqsloop.Message) error {
		if r != nil {
			r.add(m.Body)
		}
		switch {
		case strings.HasPrefix(m.Body, "fail"):
			return errors.New(m.Body)
		case strings.HasPrefix(m.Body, "panic"):
			panic(m.Body)
		}
		return nil
	}
}

// runs records the bodies handlers ran, in order. Safe for concurrent use.
type runs struct {
	mu     sync.Mutex
	bodies []string
}

func (r *runs) add(body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, body)
}

func (r *runs) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bodies)
}

// ofGroup returns the bodies run whose second word is group's letter
// ("ok A1" is of group A), in order.
func (r *runs) ofGroup(group string) []string {
	var out []string
	for _, b := range r.get() {
		if _, id, ok := strings.Cut(b, " "); ok && strings.HasPrefix(id, group) {
			out = append(out, b)
		}
	}
	return out
}

// mustNew returns a Handler, failing the test on a config error.
func mustNew(t *testing.T, h func(context.Context, *sqsloop.Message) error, cfg Config) *Handler {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger, _ = newLogger()
	}
	hd, err := New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hd
}

// ids returns the item identifiers of resp.
func ids(resp events.SQSEventResponse) []string {
	out := make([]string, len(resp.BatchItemFailures))
	for i, f := range resp.BatchItemFailures {
		out[i] = f.ItemIdentifier
	}
	return out
}

// idsOf returns the message IDs of the records of ev at the given 1-based
// positions, as the fixtures number them.
func idsOf(ev events.SQSEvent, positions ...int) []string {
	out := make([]string, len(positions))
	for i, p := range positions {
		out[i] = ev.Records[p-1].MessageId
	}
	return out
}

// invocation returns a context as Lambda gives one, with its deadline
// after timeout.
func invocation(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// The queue the lease tests use: a memmailbox queue, and the event source
// ARN whose URL (QueueURL) opens it.
const (
	testARN = "arn:aws:sqs:us-east-1:000000000000:jobs"
	testURL = "https://sqs.us-east-1.amazonaws.com/000000000000/jobs"
)

// newQueue returns a memmailbox queue named as testARN says ("jobs", or
// "jobs.fifo"), with a dead-letter queue when spec has a MaxReceiveCount.
func newQueue(t *testing.T, spec sqsloop.QueueSpec) *memmailbox.Queue {
	t.Helper()
	b := new(memmailbox.Broker)
	t.Cleanup(func() { b.Close() })
	spec.Name = "jobs"
	if spec.FIFO {
		spec.Name = "jobs.fifo"
	}
	q, err := b.CreateQueue(spec)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// send enqueues one message per body; on a FIFO queue a body's group is
// its second word's first letter ("ok A1" goes to group A).
func send(t *testing.T, q sqsloop.Mailbox, fifo bool, bodies ...string) {
	t.Helper()
	for len(bodies) > 0 {
		n := min(len(bodies), sqsloop.MaxBatchSize)
		out := make([]sqsloop.OutgoingMessage, n)
		for i, b := range bodies[:n] {
			out[i] = sqsloop.OutgoingMessage{Body: b}
			if fifo {
				_, id, _ := strings.Cut(b, " ")
				out[i].MessageGroupID = id[:1]
				out[i].DeduplicationID = strings.ReplaceAll(b, " ", "-")
			}
		}
		res, err := q.Send(t.Context(), out)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		bodies = bodies[n:]
	}
}

// receiveEvent receives n messages from q with the queue's visibility
// timeout vt, as the event source mapping does, and returns them as the
// event Lambda would hand the function (eventSourceARN testARN).
func receiveEvent(t *testing.T, q sqsloop.Mailbox, n int, vt time.Duration) events.SQSEvent {
	t.Helper()
	var ev events.SQSEvent
	for len(ev.Records) < n {
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: min(n-len(ev.Records), 10), VisibilityTimeout: vt})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			t.Fatalf("received %d messages, want %d", len(ev.Records), n)
		}
		for _, m := range msgs {
			ev.Records = append(ev.Records, record(m, testARN))
		}
	}
	return ev
}

// record is m as a record of an event from the queue arn names.
func record(m *sqsloop.Message, arn string) events.SQSMessage {
	r := events.SQSMessage{
		MessageId: m.ID, ReceiptHandle: m.ReceiptHandle, Body: m.Body,
		Attributes: map[string]string{}, EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: "us-east-1",
	}
	for k, v := range m.Attributes {
		r.Attributes[k] = v
	}
	r.Attributes[sqsloop.AttrApproximateReceiveCount] = strconv.Itoa(m.ReceiveCount)
	for name, a := range m.MessageAttributes {
		if r.MessageAttributes == nil {
			r.MessageAttributes = map[string]events.SQSMessageAttribute{}
		}
		ea := events.SQSMessageAttribute{DataType: a.DataType, BinaryValue: a.BinaryValue}
		if a.BinaryValue == nil {
			ea.StringValue = &a.StringValue
		}
		r.MessageAttributes[name] = ea
	}
	return r
}

// opener returns a Config.OpenQueue that opens q for testURL, and counts
// its calls.
func opener(t *testing.T, q Queue, calls *int) func(string) (Queue, error) {
	return func(url string) (Queue, error) {
		if calls != nil {
			*calls++
		}
		if url != testURL {
			t.Errorf("OpenQueue(%q), want %q", url, testURL)
			return nil, fmt.Errorf("unknown queue %s", url)
		}
		return q, nil
	}
}

// visible returns the bodies receivable from q now (hiding them for an
// hour, so a second call does not see them again).
func visible(t *testing.T, q sqsloop.Mailbox) []string {
	t.Helper()
	var out []string
	for _, m := range receiveNow(t, q) {
		out = append(out, m.Body)
	}
	return out
}

// receiveNow returns the messages receivable from q now, hiding them for
// an hour.
func receiveNow(t *testing.T, q sqsloop.Mailbox) []*sqsloop.Message {
	t.Helper()
	var out []*sqsloop.Message
	for {
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return out
		}
		out = append(out, msgs...)
	}
}
