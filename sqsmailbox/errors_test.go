package sqsmailbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

const (
	ceilingMessage = "Value 600 for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]."
	expiredMessage = "Value AQEB for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired."
)

// errorCases is the error table: what SQS (or an SQS-compatible server)
// answers, and the sentinel it must become (nil: none, transient).
var errorCases = []struct {
	name string
	err  error
	want error
}{
	// The SDK's typed errors.
	{"typed ReceiptHandleIsInvalid", &types.ReceiptHandleIsInvalid{Message: aws.String("bad handle")}, sqsloop.ErrReceiptHandleExpired},
	{"typed MessageNotInflight", &types.MessageNotInflight{}, sqsloop.ErrReceiptHandleExpired},
	{"typed InvalidIdFormat", &types.InvalidIdFormat{}, sqsloop.ErrReceiptHandleExpired},
	{"typed QueueDoesNotExist", &types.QueueDoesNotExist{}, sqsloop.ErrQueueNotFound},
	{"typed QueueDoesNotExist, query code", &types.QueueDoesNotExist{ErrorCodeOverride: aws.String("AWS.SimpleQueueService.NonExistentQueue")}, sqsloop.ErrQueueNotFound},
	{"typed MessageNotInflight, unknown code", &types.MessageNotInflight{ErrorCodeOverride: aws.String("Whatever")}, sqsloop.ErrReceiptHandleExpired},
	{"typed TooManyEntriesInBatchRequest", &types.TooManyEntriesInBatchRequest{}, sqsloop.ErrInvalidArgument},
	{"typed BatchEntryIdsNotDistinct", &types.BatchEntryIdsNotDistinct{}, sqsloop.ErrInvalidArgument},
	{"typed RequestThrottled", &types.RequestThrottled{}, nil},
	{"typed InvalidSecurity", &types.InvalidSecurity{}, sqsloop.ErrAccessDenied},
	{"typed KmsAccessDenied", &types.KmsAccessDenied{}, sqsloop.ErrAccessDenied},
	{"typed KmsAccessDenied, query code", &types.KmsAccessDenied{ErrorCodeOverride: aws.String("KMS.AccessDeniedException")}, sqsloop.ErrAccessDenied},
	{"typed KmsDisabled", &types.KmsDisabled{ErrorCodeOverride: aws.String("KMS.DisabledException")}, sqsloop.ErrAccessDenied},
	{"typed KmsInvalidKeyUsage", &types.KmsInvalidKeyUsage{ErrorCodeOverride: aws.String("KMS.InvalidKeyUsageException")}, sqsloop.ErrAccessDenied},
	{"typed KmsInvalidState", &types.KmsInvalidState{ErrorCodeOverride: aws.String("KMS.InvalidStateException")}, sqsloop.ErrAccessDenied},
	{"typed KmsNotFound", &types.KmsNotFound{ErrorCodeOverride: aws.String("KMS.NotFoundException")}, sqsloop.ErrAccessDenied},
	{"typed KmsOptInRequired", &types.KmsOptInRequired{ErrorCodeOverride: aws.String("KMS.OptInRequired")}, sqsloop.ErrAccessDenied},
	{"typed KmsThrottled is transient", &types.KmsThrottled{ErrorCodeOverride: aws.String("KMS.ThrottlingException")}, nil},
	{"credentials provider failed", &credentialsError{err: errors.New("no EC2 IMDS role found")}, sqsloop.ErrAccessDenied},
	{"typed OverLimit", &types.OverLimit{}, nil},
	// Raw codes, as a generic API error.
	{"code ReceiptHandleIsInvalid", generic("ReceiptHandleIsInvalid", "The input receipt handle is not valid."), sqsloop.ErrReceiptHandleExpired},
	{"code MessageNotInflight", generic("MessageNotInflight", ""), sqsloop.ErrReceiptHandleExpired},
	{"query code MessageNotInflight", generic("AWS.SimpleQueueService.MessageNotInflight", ""), sqsloop.ErrReceiptHandleExpired},
	{"code QueueDoesNotExist", generic("QueueDoesNotExist", ""), sqsloop.ErrQueueNotFound},
	{"query code NonExistentQueue", generic("AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist for this wsdl version."), sqsloop.ErrQueueNotFound},
	{"12-hour ceiling", generic("InvalidParameterValue", ceilingMessage), sqsloop.ErrLeaseCeiling},
	{"12-hour ceiling, JSON code", generic("InvalidParameterValueException", ceilingMessage), sqsloop.ErrLeaseCeiling},
	{"ceiling, other wording", generic("InvalidParameterValue", "VisibilityTimeout would exceed the maximum of 12 hours"), sqsloop.ErrLeaseCeiling},
	{"expired handle as InvalidParameterValue", generic("InvalidParameterValue", expiredMessage), sqsloop.ErrReceiptHandleExpired},
	{"not available for visibility change", generic("InvalidParameterValue", "Value x for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change."), sqsloop.ErrReceiptHandleExpired},
	{"visibility out of range is not the ceiling", generic("InvalidParameterValue", "Value 50000 for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200."), sqsloop.ErrInvalidArgument},
	{"other InvalidParameterValue", generic("InvalidParameterValue", "Value -1 for parameter MaxNumberOfMessages is invalid."), sqsloop.ErrInvalidArgument},
	{"MissingParameter", generic("MissingParameter", "The request must contain the parameter QueueUrl."), sqsloop.ErrInvalidArgument},
	{"query code TooManyEntries", generic("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", ""), sqsloop.ErrInvalidArgument},
	{"code AccessDenied", generic("AccessDenied", ""), sqsloop.ErrAccessDenied},
	{"code AccessDeniedException", generic("AccessDeniedException", ""), sqsloop.ErrAccessDenied},
	{"code InvalidClientTokenId", generic("InvalidClientTokenId", ""), sqsloop.ErrAccessDenied},
	{"code UnrecognizedClientException", generic("UnrecognizedClientException", ""), sqsloop.ErrAccessDenied},
	{"code SignatureDoesNotMatch", generic("SignatureDoesNotMatch", ""), sqsloop.ErrAccessDenied},
	{"code InvalidSignatureException", generic("InvalidSignatureException", ""), sqsloop.ErrAccessDenied},
	{"code IncompleteSignature", generic("IncompleteSignature", ""), sqsloop.ErrAccessDenied},
	{"code IncompleteSignatureException", generic("IncompleteSignatureException", ""), sqsloop.ErrAccessDenied},
	{"code MissingAuthenticationToken", generic("MissingAuthenticationToken", ""), sqsloop.ErrAccessDenied},
	{"code MissingAuthenticationTokenException", generic("MissingAuthenticationTokenException", ""), sqsloop.ErrAccessDenied},
	{"code InvalidSecurity", generic("InvalidSecurity", ""), sqsloop.ErrAccessDenied},
	{"code ExpiredToken", generic("ExpiredToken", ""), sqsloop.ErrAccessDenied},
	{"code ExpiredTokenException", generic("ExpiredTokenException", ""), sqsloop.ErrAccessDenied},
	{"code RequestExpired", generic("RequestExpired", ""), sqsloop.ErrAccessDenied},
	{"code NotAuthorized", generic("NotAuthorized", "You do not have permission to perform this action."), sqsloop.ErrAccessDenied},
	{"code OptInRequired", generic("OptInRequired", "The AWS access key ID needs a subscription for the service."), sqsloop.ErrAccessDenied},
	{"code KmsAccessDenied", generic("KmsAccessDenied", ""), sqsloop.ErrAccessDenied},
	{"code KMS.AccessDeniedException", generic("KMS.AccessDeniedException", ""), sqsloop.ErrAccessDenied},
	{"code KmsDisabled", generic("KmsDisabled", ""), sqsloop.ErrAccessDenied},
	{"code KMS.DisabledException", generic("KMS.DisabledException", ""), sqsloop.ErrAccessDenied},
	{"code KmsInvalidKeyUsage", generic("KmsInvalidKeyUsage", ""), sqsloop.ErrAccessDenied},
	{"code KMS.InvalidKeyUsageException", generic("KMS.InvalidKeyUsageException", ""), sqsloop.ErrAccessDenied},
	{"code KmsInvalidState", generic("KmsInvalidState", ""), sqsloop.ErrAccessDenied},
	{"code KMS.InvalidStateException", generic("KMS.InvalidStateException", ""), sqsloop.ErrAccessDenied},
	{"code KmsNotFound", generic("KmsNotFound", ""), sqsloop.ErrAccessDenied},
	{"code KMS.NotFoundException", generic("KMS.NotFoundException", ""), sqsloop.ErrAccessDenied},
	{"code KmsOptInRequired", generic("KmsOptInRequired", ""), sqsloop.ErrAccessDenied},
	{"code KMS.OptInRequired", generic("KMS.OptInRequired", ""), sqsloop.ErrAccessDenied},
	{"code KmsThrottled is transient", generic("KmsThrottled", ""), nil},
	{"code KMS.ThrottlingException is transient", generic("KMS.ThrottlingException", ""), nil},
	{"throttling", generic("ThrottlingException", "Rate exceeded"), nil},
	{"RequestThrottled", generic("RequestThrottled", ""), nil},
	{"internal error", generic("InternalError", ""), nil},
	{"not an API error", errors.New("connection reset by peer"), nil},
}

func generic(code, msg string) error {
	return &smithy.GenericAPIError{Code: code, Message: msg}
}

// The whole-call error of every method: the sentinel is matched with
// errors.Is, the SDK's error is still reachable with errors.As, and the
// queue URL is in the message.
func TestCallErrorTable(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			sdkErr := &smithy.OperationError{ServiceID: "SQS", OperationName: "Op", Err: c.err}
			f := &fakeAPI{
				onReceive: func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) { return nil, sdkErr },
				onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
					return nil, sdkErr
				},
				onChange: func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
					return nil, sdkErr
				},
				onSend: func(context.Context, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
					return nil, sdkErr
				},
				onAttrs: func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
					return nil, sdkErr
				},
			}
			m := newTestMailbox(t, f)
			ctx := t.Context()
			msgs, errReceive := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
			res, errDelete := m.Delete(ctx, []string{"rh"})
			res2, errChange := m.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: "rh"}})
			res3, errSend := m.Send(ctx, []sqsloop.OutgoingMessage{{Body: "b"}})
			_, errAttrs := m.QueueAttributes(ctx)
			if msgs != nil || res != nil || res2 != nil || res3 != nil {
				t.Errorf("a failed call returned per-entry results")
			}
			for name, err := range map[string]error{"Receive": errReceive, "Delete": errDelete, "ChangeVisibility": errChange, "Send": errSend, "QueueAttributes": errAttrs} {
				checkMapped(t, name, err, c.err, c.want)
				var opErr *smithy.OperationError
				if !errors.As(err, &opErr) {
					t.Errorf("%s: errors.As cannot reach the SDK's OperationError: %v", name, err)
				}
				if !strings.Contains(err.Error(), testQueueURL) {
					t.Errorf("%s: %q does not name the queue URL", name, err)
				}
			}
		})
	}
}

// Per-entry failures carry only a code and a message; they map by the same
// table (its raw-code rows: an entry has no SDK type to match).
func TestEntryErrorTable(t *testing.T) {
	for _, c := range errorCases {
		apiErr, ok := c.err.(*smithy.GenericAPIError)
		if !ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAPI{onChange: func(context.Context, *sqs.ChangeMessageVisibilityBatchInput) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
				return &sqs.ChangeMessageVisibilityBatchOutput{
					Successful: []types.ChangeMessageVisibilityBatchResultEntry{{Id: aws.String("0")}},
					Failed:     []types.BatchResultErrorEntry{failure("1", apiErr.ErrorCode(), apiErr.ErrorMessage(), true)},
				}, nil
			}}
			m := newTestMailbox(t, f)
			errs, err := m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{ReceiptHandle: "a"}, {ReceiptHandle: "b"}})
			if err != nil {
				t.Fatalf("ChangeVisibility: %v", err)
			}
			if errs[0] != nil {
				t.Errorf("entry 0 = %v, want nil", errs[0])
			}
			if errs[1] == nil {
				t.Fatal("entry 1 = nil, want its failure")
			}
			if c.want == nil {
				if s := sentinelFor(errs[1]); s != nil {
					t.Errorf("entry 1 = %v, want no sentinel", errs[1])
				}
			} else if !errors.Is(errs[1], c.want) {
				t.Errorf("entry 1 = %v, want %v", errs[1], c.want)
			}
			var got smithy.APIError
			if !errors.As(errs[1], &got) || got.ErrorCode() != apiErr.ErrorCode() {
				t.Errorf("entry 1 does not carry code %q: %v", apiErr.ErrorCode(), errs[1])
			}
		})
	}
}

func checkMapped(t *testing.T, name string, err, cause, want error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: nil error", name)
		return
	}
	sentinels := []error{sqsloop.ErrReceiptHandleExpired, sqsloop.ErrLeaseCeiling, sqsloop.ErrQueueNotFound, sqsloop.ErrInvalidArgument, sqsloop.ErrAccessDenied, sqsloop.ErrMailboxClosed}
	for _, s := range sentinels {
		if got, wantIt := errors.Is(err, s), s == want; got != wantIt {
			t.Errorf("%s: errors.Is(%v, %v) = %v, want %v", name, err, s, got, wantIt)
		}
	}
	if !errors.Is(err, cause) {
		t.Errorf("%s: the SDK's error is lost: %v", name, err)
	}
}

func TestTypedErrorReachableWithAs(t *testing.T) {
	f := &fakeAPI{onDelete: func(context.Context, *sqs.DeleteMessageBatchInput) (*sqs.DeleteMessageBatchOutput, error) {
		return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "DeleteMessageBatch", Err: &types.QueueDoesNotExist{Message: aws.String("gone")}}
	}}
	m := newTestMailbox(t, f)
	_, err := m.Delete(t.Context(), []string{"rh"})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) || aws.ToString(qdne.Message) != "gone" {
		t.Fatalf("errors.As(*types.QueueDoesNotExist) failed on %v", err)
	}
	if !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Fatalf("err = %v, want ErrQueueNotFound", err)
	}
}
