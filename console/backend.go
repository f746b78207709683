package console

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop"
)

// backend is where the queues are: SQS (sqsBackend) or a database
// (sqlBackend). The pages and the actions speak to it only.
type backend interface {
	// where names the backend for the pages ("SQS at …", "database").
	where() string
	// queues lists every queue with its counts now.
	queues(ctx context.Context) ([]queueInfo, error)
	// browse returns up to limit of the queue's messages matching f, from
	// cursor ("" for the first page).
	browse(ctx context.Context, q *queueInfo, f filter, cursor string, limit int) (page, error)
	// count counts the queue's messages matching f.
	count(ctx context.Context, q *queueInfo, f filter) (count, error)
	// message returns one message's record, by its key, and its history
	// where the backend keeps one; nil when there is no such message.
	message(ctx context.Context, q *queueInfo, key string) (*record, []historyEntry, error)
	// act runs an action (redrive, delete, export to w), reporting its
	// progress on j; it returns when done, failed, or ctx ended.
	act(ctx context.Context, j *job, w io.Writer) error
	// leases returns what the backend knows of the messages in flight and
	// their holders (a database's receivers); nil when it knows nothing.
	leases(ctx context.Context, queues []queueInfo) (*dbLeases, error)
}

// queueInfo is one queue as the queue list shows it.
type queueInfo struct {
	Name string
	URL  string // SQS
	ARN  string // SQS
	FIFO bool
	// The counts: visible, in flight, delayed (SQS: approximate).
	Visible, InFlight, Delayed int
	// DLQ names the dead-letter queue of its redrive policy ("" for
	// none), with MaxReceiveCount; DLQDepth its messages (-1 unknown).
	DLQ             string
	DLQDepth        int
	MaxReceiveCount int
	// Sources are the queues whose redrive policy names this one: it is
	// their dead-letter queue.
	Sources []string
	// Oldest is when its oldest message was sent (zero: empty, or not
	// known: SQS reports it to CloudWatch only).
	Oldest time.Time
	// GroupsInFlight counts its message groups with a message in flight;
	// -1 when not known (SQS).
	GroupsInFlight int
	// Acked counts the messages acked since the console started; -1 when
	// not known (SQS). The chart's throughput.
	Acked int64
	// Err is why its attributes could not be read.
	Err string
}

// depth is the queue's messages in every state.
func (q *queueInfo) depth() int { return q.Visible + q.InFlight + q.Delayed }

// isDLQ reports a queue that is another's dead-letter queue.
func (q *queueInfo) isDLQ() bool { return len(q.Sources) > 0 }

// record is one message as the pages show it and filters match it.
type record struct {
	// Key names it in the console's links: a database message's Seq, an
	// SQS message's ID.
	Key  string
	ID   string
	Body string
	// Attributes are its message attributes; System its system
	// attributes (SQS's, or what a database keeps in their stead).
	Attributes map[string]sqsloop.MessageAttribute
	System     map[string]string
	// ReceiveCount is how often it was received before the console looked
	// (on SQS the console's own receive is not counted).
	ReceiveCount int
	SentAt       time.Time
	// FirstReceivedAt is zero when never received.
	FirstReceivedAt time.Time
	GroupID         string
	// State is a database message's: visible, in flight or delayed.
	State string
	// size is its body's and attributes' bytes, for the scan's bound.
	size int
}

// newRecord returns the record of a message received from SQS: its
// receive count without this receive, which was the console's.
func newRecord(m *sqsloop.Message) *record {
	r := &record{Key: m.ID, ID: m.ID, Body: m.Body, Attributes: m.MessageAttributes, System: m.Attributes,
		ReceiveCount: max(m.ReceiveCount-1, 0), SentAt: m.SentAt, FirstReceivedAt: m.FirstReceivedAt, GroupID: m.MessageGroupID}
	r.size = sqsloop.OutgoingMessage{Body: m.Body, MessageAttributes: m.MessageAttributes}.Size()
	return r
}

// page is one page of messages.
type page struct {
	Records []*record
	// Next is the cursor of the next page; "" when this one is the last.
	Next string
}

// count is how many messages matched a filter.
type count struct {
	N int
	// Exact is false when N counts only what the console read of the
	// queue (an SQS scan that stopped at its bound).
	Exact bool
	// Of is the number of messages the count looked at.
	Of int
}

// historyEntry is one event of a message's past (a database's audit row).
type historyEntry struct {
	At           time.Time
	Queue        string
	Kind         string
	ReceiveCount int
	Reason       string
}

// exportLine is one message of an export: a line of JSON, the shape of
// `sqsloop peek --json`.
type exportLine struct {
	ID                string                   `json:"id"`
	Body              string                   `json:"body"`
	ReceiveCount      int                      `json:"receive_count"`
	SentAt            *time.Time               `json:"sent_at,omitempty"`
	FirstReceivedAt   *time.Time               `json:"first_received_at,omitempty"`
	MessageGroupID    string                   `json:"message_group_id,omitempty"`
	Attributes        map[string]string        `json:"attributes,omitempty"`
	MessageAttributes map[string]attributeLine `json:"message_attributes,omitempty"`
}

// attributeLine is a message attribute in an export (a Binary value in
// base64).
type attributeLine struct {
	DataType    string `json:"data_type"`
	StringValue string `json:"string_value,omitempty"`
	BinaryValue []byte `json:"binary_value,omitempty"`
}

// writeExport writes r as one line of JSON to enc.
func writeExport(enc *json.Encoder, r *record) error {
	l := exportLine{ID: r.ID, Body: r.Body, ReceiveCount: r.ReceiveCount, MessageGroupID: r.GroupID, Attributes: r.System}
	if !r.SentAt.IsZero() {
		t := r.SentAt.UTC()
		l.SentAt = &t
	}
	if !r.FirstReceivedAt.IsZero() {
		t := r.FirstReceivedAt.UTC()
		l.FirstReceivedAt = &t
	}
	if len(r.Attributes) > 0 {
		l.MessageAttributes = make(map[string]attributeLine, len(r.Attributes))
		for k, a := range r.Attributes {
			l.MessageAttributes[k] = attributeLine{DataType: a.DataType, StringValue: a.StringValue, BinaryValue: a.BinaryValue}
		}
	}
	return enc.Encode(l)
}

// newExportEncoder returns the encoder of an export to w: no HTML
// escaping (bodies as sent).
func newExportEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// redriven returns the message to send in r's place to another queue: its
// body, message group and message attributes but those the consumer adds
// to a poison message's copy (sqsloop.poison.*), which would be stale
// there.
func redriven(r *record) sqsloop.OutgoingMessage {
	out := sqsloop.OutgoingMessage{Body: r.Body, MessageGroupID: r.GroupID}
	for _, k := range slices.Sorted(maps.Keys(r.Attributes)) {
		if k == sqsloop.AttrPoisonReason || k == sqsloop.AttrPoisonMessageID || k == sqsloop.AttrPoisonReceiveCount {
			continue
		}
		if out.MessageAttributes == nil {
			out.MessageAttributes = map[string]sqsloop.MessageAttribute{}
		}
		out.MessageAttributes[k] = r.Attributes[k]
	}
	return out
}
