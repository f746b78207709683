package sqsmailbox

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// sendZeros is a per-call option for ReceiveMessage that makes
// WaitTimeSeconds and VisibilityTimeout reach the wire even when they are 0.
//
// The SDK serializes an int32 field only when it is not 0, and SQS reads an
// absent WaitTimeSeconds as the queue's ReceiveMessageWaitTimeSeconds and an
// absent VisibilityTimeout as the queue's default visibility timeout: a short
// poll would silently become a long poll, and a visibility of 0 would become
// the queue's 30 s or more. The option wraps the input just before the
// operation serializer, so it works for whichever protocol (JSON or query)
// the client speaks. Clients other than *sqs.Client ignore it.
func sendZeros(o *sqs.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Serialize.Insert(zeroFields{}, "OperationSerializer", middleware.Before)
	})
}

// zeroFields is the Serialize-step middleware that sendZeros inserts.
type zeroFields struct{}

func (zeroFields) ID() string { return "sqsmailbox.SendZeroFields" }

func (zeroFields) HandleSerialize(ctx context.Context, in middleware.SerializeInput, next middleware.SerializeHandler) (middleware.SerializeOutput, middleware.Metadata, error) {
	if p, ok := in.Parameters.(*sqs.ReceiveMessageInput); ok {
		in.Parameters = receiveWithZeros{p}
	}
	return next.HandleSerialize(ctx, in)
}

// receiveWithZeros serializes a ReceiveMessageInput like the SDK does, then
// adds the zero-valued WaitTimeSeconds and VisibilityTimeout the SDK left out.
type receiveWithZeros struct{ *sqs.ReceiveMessageInput }

var _ smithy.Serializable = receiveWithZeros{}

func (r receiveWithZeros) Serialize(s smithy.ShapeSerializer) {
	s.WriteStruct(schemas.ReceiveMessageRequest)
	r.SerializeMembers(s)
	if r.VisibilityTimeout == 0 {
		s.WriteInt32(schemas.ReceiveMessageRequest_VisibilityTimeout, 0)
	}
	if r.WaitTimeSeconds == 0 {
		s.WriteInt32(schemas.ReceiveMessageRequest_WaitTimeSeconds, 0)
	}
	s.CloseStruct()
}
