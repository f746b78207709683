package sqsmailbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

// Receive calls ReceiveMessage once and returns up to req.MaxMessages
// messages, each hidden for req.VisibilityTimeout.
//
// Ranges, checked before the call by req.Validate, whose error is returned
// unchanged (wrapping sqsloop.ErrInvalidArgument, naming every bad field):
// MaxMessages 1–10 (MaxNumberOfMessages), VisibilityTimeout 0–12 h, WaitTime
// 0–20 s (SQS's long-poll limit). Durations are rounded up to whole seconds
// (sqsloop.WholeSeconds). WaitTimeSeconds and VisibilityTimeout are always
// sent, 0 included: SQS reads a missing one as the queue's default
// (ReceiveMessageWaitTimeSeconds, VisibilityTimeout), and the SDK drops zero
// values unless told otherwise. Message.VisibilityTimeout is the rounded-up
// value that was sent.
//
// The system attributes asked for are the sqsloop.Attr… ones (those Message
// reads, the FIFO ones and AWSTraceHeader), not All; the message attributes
// are those req.MessageAttributeNames names: nil asks for All, an empty
// slice for none (MessageAttributeNames is then not sent), and names are
// sent as they are ("order.*" is a prefix, as SQS reads it).
//
// Message.ReceivedAt is as close as the Mailbox can tell to the moment SQS
// started this receive's visibility timeout, never later: SQS starts it when
// it hands the message out, which in a long poll is when the answer is sent,
// up to WaitTime after the request. Receive notes sentAt just before the call
// and arrivedAt just after it returns, and stamps
//
//	ReceivedAt = max(sentAt, arrivedAt - rto)
//
// where rto is the Mailbox's bound on one network round trip, estimated as in
// RFC 6298 from the calls that do not wait on the server (Delete,
// ChangeVisibility, Send, QueueAttributes, and Receive with WaitTime 0) that
// got an answer; until the first such call it is 1 s (RFC 6298 §2.1). So a
// fast answer keeps ReceivedAt = sentAt, and a long poll that waited gets
// arrivedAt - rto. Either way ReceivedAt is no later than SQS's start (the
// answer's way back takes less than a round trip, which rto bounds) and
// earlier by at most rto: one round trip, or 1 s before a round trip has
// been measured. The lease deadline ReceivedAt+VisibilityTimeout and the
// 12-hour ceiling ReceivedAt+12 h are thus never later than SQS's own. A
// malformed system attribute leaves its typed field zero (the raw value stays
// in Attributes); it never drops the message.
//
// Receive blocks for at most WaitTime plus the network round trip (and the
// SDK's retries). When ctx is done it returns at once with ctx's error; when
// Close is called meanwhile it returns at once with an error wrapping
// sqsloop.ErrMailboxClosed. If SQS answered with messages before either took
// effect, they are returned, never dropped. Other errors are mapped as
// described on Mailbox. Safe for concurrent use.
func (m *Mailbox) Receive(ctx context.Context, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	const op = "receive from"
	if err := m.checkOpen(op); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqsmailbox: %s %s: %w", op, m.queueURL, err)
	}
	callCtx, done, err := m.startReceive(ctx)
	if err != nil {
		return nil, err
	}
	defer done()

	visibility, wait := seconds(req.VisibilityTimeout), seconds(req.WaitTime)
	sentAt := time.Now()
	out, err := m.client.ReceiveMessage(callCtx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(m.queueURL),
		MaxNumberOfMessages:         int32(req.MaxMessages),
		VisibilityTimeout:           visibility,
		WaitTimeSeconds:             wait,
		MessageSystemAttributeNames: systemAttributes,
		MessageAttributeNames:       messageAttributeNames(req.MessageAttributeNames),
	}, receiveOptions...)
	arrivedAt := time.Now()
	if wait == 0 {
		// A short poll does not wait on the server: its duration is a
		// round trip, taken before the stamp so that a network that just
		// became slow widens the bound this answer is stamped with.
		m.observe(sentAt, err)
	}
	if err != nil {
		switch {
		case errors.Is(context.Cause(callCtx), sqsloop.ErrMailboxClosed):
			return nil, m.errClosed(op)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("sqsmailbox: %s %s: %w", op, m.queueURL, ctx.Err())
		}
		return nil, m.callError(op, err)
	}
	if out == nil || len(out.Messages) == 0 {
		return nil, nil
	}
	receivedAt := stamp(sentAt, arrivedAt, m.rtt.rto())
	msgs := make([]*sqsloop.Message, len(out.Messages))
	for i, sm := range out.Messages {
		msgs[i] = toMessage(sm, receivedAt, time.Duration(visibility)*time.Second)
	}
	return msgs, nil
}

// stamp returns the ReceivedAt of an answer to a ReceiveMessage call sent at
// sentAt that came back at arrivedAt, given rto, a bound on one round trip:
// max(sentAt, arrivedAt - rto). SQS started the visibility timeout between
// the two, at least the return half of a round trip before arrivedAt, so the
// result is never later than that start, and earlier by at most rto.
func stamp(sentAt, arrivedAt time.Time, rto time.Duration) time.Time {
	if t := arrivedAt.Add(-rto); t.After(sentAt) {
		return t
	}
	return sentAt
}

// seconds is d in the whole seconds SQS counts, rounded up
// (sqsloop.WholeSeconds): 1.2 s is sent as 2, so a message is never hidden,
// delayed or waited on for less than asked. d has passed its rule, so it
// fits an int32.
func seconds(d time.Duration) int32 {
	return int32(sqsloop.WholeSeconds(d) / time.Second)
}

// toMessage maps one received SQS message. receivedAt and visibility are the
// receive's; the typed fields are parsed from the system attributes
// (sqsloop.Message.ParseSystemAttributes).
func toMessage(sm types.Message, receivedAt time.Time, visibility time.Duration) *sqsloop.Message {
	msg := &sqsloop.Message{
		ID:                aws.ToString(sm.MessageId),
		Body:              aws.ToString(sm.Body),
		Attributes:        sm.Attributes,
		ReceiptHandle:     aws.ToString(sm.ReceiptHandle),
		ReceivedAt:        receivedAt,
		VisibilityTimeout: visibility,
	}
	if msg.Attributes == nil {
		msg.Attributes = map[string]string{}
	}
	if len(sm.MessageAttributes) > 0 {
		msg.MessageAttributes = make(map[string]sqsloop.MessageAttribute, len(sm.MessageAttributes))
		for name, v := range sm.MessageAttributes {
			msg.MessageAttributes[name] = sqsloop.MessageAttribute{
				DataType:    aws.ToString(v.DataType),
				StringValue: aws.ToString(v.StringValue),
				BinaryValue: v.BinaryValue,
			}
		}
	}
	msg.ParseSystemAttributes()
	return msg
}

// systemAttributes are the system attributes Receive asks for: the
// sqsloop.Attr… ones, not All (fewer bytes to transfer and decode on every
// receive). The SDK does not modify the slice it is given.
var systemAttributes = []types.MessageSystemAttributeName{
	sqsloop.AttrApproximateReceiveCount,
	sqsloop.AttrApproximateFirstReceiveTimestamp,
	sqsloop.AttrSentTimestamp,
	sqsloop.AttrMessageGroupID,
	sqsloop.AttrMessageDeduplicationID,
	sqsloop.AttrSequenceNumber,
	sqsloop.AttrAWSTraceHeader,
}

// allMessageAttributes asks SQS for every message attribute.
var allMessageAttributes = []string{"All"}

// messageAttributeNames turns ReceiveRequest.MessageAttributeNames into
// SQS's: nil means All, an empty slice none.
func messageAttributeNames(names []string) []string {
	switch {
	case names == nil:
		return allMessageAttributes
	case len(names) == 0:
		return nil
	}
	return names
}
