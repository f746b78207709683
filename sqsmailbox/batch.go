package sqsmailbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

// Delete acks 1–10 messages by receipt handle with one DeleteMessageBatch
// call (SQS caps a batch at 10 entries). Entry i has Id "i".
//
// The call returns an error, and no per-entry results, when it fails as a
// whole: an empty or oversized batch (sqsloop.ValidateDelete's error,
// unchanged, wrapping sqsloop.ErrInvalidArgument), a closed Mailbox
// (sqsloop.ErrMailboxClosed), a missing queue (sqsloop.ErrQueueNotFound), a
// refusal of permissions or credentials (sqsloop.ErrAccessDenied), ctx's
// error, or a transient failure (see Mailbox for the table).
//
// Otherwise it returns one error per receipt handle, in input order, read
// from both the Successful and the Failed lists of the answer:
// sqsloop.ValidateDelete's error (wrapping sqsloop.ErrInvalidArgument) for
// an empty receipt handle, which is not sent while the others are (no call
// at all when none is valid); nil for an entry SQS lists as successful; for
// a Failed entry, an error mapped by its code with the same table (e.g.
// sqsloop.ErrReceiptHandleExpired for a handle SQS rejects,
// sqsloop.ErrAccessDenied for a permission or KMS code, no sentinel for a
// transient one), from which errors.As reaches a smithy.APIError with the
// entry's code and fault; and an error wrapping "no result for entry" for an
// entry the answer did not mention. An old handle of a standard-queue
// message is not rejected: SQS reports it deleted while deleting nothing.
// Receipt handles are never put in error messages. Safe for concurrent use.
func (m *Mailbox) Delete(ctx context.Context, receiptHandles []string) ([]error, error) {
	const op = "delete from"
	if err := m.checkOpen(op); err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateDelete(receiptHandles)
	if err != nil {
		return nil, err
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, 0, len(receiptHandles))
	for i, h := range receiptHandles {
		if invalid[i] != nil {
			continue
		}
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: entryID(i), ReceiptHandle: aws.String(h)})
	}
	if len(entries) == 0 {
		return invalid, nil
	}
	start := time.Now()
	out, err := m.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(m.queueURL), Entries: entries}, callOptions...)
	m.observe(start, err)
	if err != nil {
		return nil, m.callError(op, err)
	}
	if out == nil {
		out = &sqs.DeleteMessageBatchOutput{}
	}
	ok := make([]*string, len(out.Successful))
	for i, s := range out.Successful {
		ok[i] = s.Id
	}
	return m.entryErrors(op, "DeleteMessageBatch", invalid, ok, out.Failed), nil
}

// ChangeVisibility sets the visibility timeout of 1–10 in-flight messages,
// counted from now, with one ChangeMessageVisibilityBatch call: a Timeout of
// 0 nacks (the message is visible again at once; the 0 is sent on the wire,
// not left to a default), more extends. Each Timeout must lie in 0–12 h
// (sqsloop.MaxVisibilityTimeout) and is rounded up to whole seconds
// (sqsloop.WholeSeconds). Entry i has Id "i".
//
// Call errors are as for Delete (sqsloop.ValidateChangeVisibility's for the
// batch size). Per-entry errors, in input order:
// sqsloop.ValidateChangeVisibility's error (wrapping
// sqsloop.ErrInvalidArgument, naming changes[i].Timeout or
// changes[i].ReceiptHandle) for an invalid entry (not sent; the others are),
// nil on success, and for a Failed entry its code mapped as for Delete:
// sqsloop.ErrReceiptHandleExpired for a stale handle, sqsloop.ErrLeaseCeiling
// when the new timeout would keep the message hidden past 12 hours after the
// receive that produced its receipt handle, sqsloop.ErrAccessDenied for a
// permission or KMS code; and "no result for entry" for an entry the answer
// did not mention. Safe for concurrent use.
func (m *Mailbox) ChangeVisibility(ctx context.Context, changes []sqsloop.VisibilityChange) ([]error, error) {
	const op = "change visibility in"
	if err := m.checkOpen(op); err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateChangeVisibility(changes)
	if err != nil {
		return nil, err
	}
	entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, 0, len(changes))
	for i, c := range changes {
		if invalid[i] != nil {
			continue
		}
		entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{
			Id:                entryID(i),
			ReceiptHandle:     aws.String(c.ReceiptHandle),
			VisibilityTimeout: seconds(c.Timeout), // a value field the SDK always serializes, 0 included
		})
	}
	if len(entries) == 0 {
		return invalid, nil
	}
	start := time.Now()
	out, err := m.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(m.queueURL), Entries: entries}, callOptions...)
	m.observe(start, err)
	if err != nil {
		return nil, m.callError(op, err)
	}
	if out == nil {
		out = &sqs.ChangeMessageVisibilityBatchOutput{}
	}
	ok := make([]*string, len(out.Successful))
	for i, s := range out.Successful {
		ok[i] = s.Id
	}
	return m.entryErrors(op, "ChangeMessageVisibilityBatch", invalid, ok, out.Failed), nil
}

// Send enqueues 1–10 messages with one SendMessageBatch call. Entry i has Id
// "i". Each message must pass sqsloop.ValidateSend (a body of 1 byte to
// 1 MiB with its message attributes, of the characters SQS accepts; at most
// 10 well-formed message attributes; Delay 0–15 min; well-formed
// MessageGroupID and DeduplicationID). Delay is rounded up to whole seconds
// (sqsloop.WholeSeconds); a Delay of 0 sends no
// DelaySeconds, so the queue's default delay applies (and FIFO queues, which
// refuse a per-message delay, accept the entry). MessageGroupID and
// DeduplicationID are sent when not empty (DeduplicationID: FIFO queues;
// MessageGroupID: FIFO queues, and standard queues as fair-queue groups).
//
// Call errors are as for Delete, plus sqsloop.ValidateSend's for valid
// entries adding up to more than 1 MiB. Otherwise there is one SendResult
// per message, in input order: MessageID (and, on a FIFO queue,
// SequenceNumber) on success, else Err
// (sqsloop.ValidateSend's error, unchanged, wrapping
// sqsloop.ErrInvalidArgument and naming the field, for an entry invalid on
// any queue, which is not sent while the others are; for a Failed entry its
// code mapped as for Delete, e.g. sqsloop.ErrInvalidArgument when SQS
// rejected the entry as malformed (a FIFO rule), sqsloop.ErrAccessDenied for
// a KMS key the caller may not use; or "no result for entry"). Safe for
// concurrent use.
func (m *Mailbox) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	const op = "send to"
	if err := m.checkOpen(op); err != nil {
		return nil, err
	}
	invalid, err := sqsloop.ValidateSend(msgs)
	if err != nil {
		return nil, err
	}
	entries := make([]types.SendMessageBatchRequestEntry, 0, len(msgs))
	for i, msg := range msgs {
		if invalid[i] != nil {
			continue
		}
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id:                     entryID(i),
			MessageBody:            aws.String(msg.Body),
			DelaySeconds:           seconds(msg.Delay),
			MessageAttributes:      toSQSAttributes(msg.MessageAttributes),
			MessageGroupId:         nonEmpty(msg.MessageGroupID),
			MessageDeduplicationId: nonEmpty(msg.DeduplicationID),
		})
	}
	results := make([]sqsloop.SendResult, len(msgs))
	if len(entries) == 0 {
		for i := range results {
			results[i].Err = invalid[i]
		}
		return results, nil
	}
	start := time.Now()
	out, err := m.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(m.queueURL), Entries: entries}, callOptions...)
	m.observe(start, err)
	if err != nil {
		return nil, m.callError(op, err)
	}
	if out == nil {
		out = &sqs.SendMessageBatchOutput{}
	}
	ok := make([]*string, len(out.Successful))
	for i, s := range out.Successful {
		ok[i] = s.Id
	}
	errs := m.entryErrors(op, "SendMessageBatch", invalid, ok, out.Failed)
	for i := range results {
		results[i].Err = errs[i]
	}
	for _, s := range out.Successful {
		if i, found := entryIndex(s.Id, len(msgs)); found && results[i].Err == nil {
			results[i].MessageID, results[i].SequenceNumber = aws.ToString(s.MessageId), aws.ToString(s.SequenceNumber)
		}
	}
	return results, nil
}

// entryErrors matches a batch answer to the entries of the input (Id "i" is
// input entry i): invalid[i], when not nil, for an entry that failed local
// validation and was not sent; nil for an entry listed as successful, its
// error for one listed as failed (failed wins if both), and errNoResult for
// one listed in neither. Ids the request did not carry are ignored.
func (m *Mailbox) entryErrors(op, call string, invalid []error, succeeded []*string, failed []types.BatchResultErrorEntry) []error {
	n := len(invalid)
	errs := make([]error, n)
	seen := make([]bool, n)
	for i, e := range invalid {
		if e != nil {
			errs[i], seen[i] = e, true
		}
	}
	for _, id := range succeeded {
		if i, ok := entryIndex(id, n); ok && invalid[i] == nil {
			seen[i] = true
		}
	}
	for _, f := range failed {
		if i, ok := entryIndex(f.Id, n); ok && invalid[i] == nil {
			seen[i] = true
			errs[i] = m.entryError(op, i, f)
		}
	}
	for i, s := range seen {
		if !s {
			errs[i] = fmt.Errorf("sqsmailbox: %s %s: entry %d: %w in the %s answer", op, m.queueURL, i, errNoResult, call)
		}
	}
	return errs
}

// entryIDs are the batch entry Ids "0".."9", built once: the SDK only reads
// them, so every request points at these.
var entryIDs = func() (ids [sqsloop.MaxBatchSize]string) {
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return ids
}()

// entryID returns the Id of entry i of a batch request: "i".
func entryID(i int) *string { return &entryIDs[i] }

// entryIndex parses a batch entry Id written by entryID, reporting false
// for anything that is not one of "0".."n-1".
func entryIndex(id *string, n int) (int, bool) {
	s := aws.ToString(id)
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != s {
		return 0, false
	}
	return i, true
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return aws.String(s)
}

// toSQSAttributes converts message attributes for sending: a DataType of
// Binary (or Binary.suffix) carries BinaryValue, any other (String, Number,
// with or without a custom suffix) carries StringValue.
func toSQSAttributes(attrs map[string]sqsloop.MessageAttribute) map[string]types.MessageAttributeValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(attrs))
	for name, a := range attrs {
		v := types.MessageAttributeValue{DataType: aws.String(a.DataType)}
		if isBinary(a.DataType) {
			v.BinaryValue = a.BinaryValue
		} else {
			v.StringValue = aws.String(a.StringValue)
		}
		out[name] = v
	}
	return out
}

func isBinary(dataType string) bool {
	return dataType == "Binary" || strings.HasPrefix(dataType, "Binary.")
}
