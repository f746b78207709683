package sqsmailbox

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

// errNoResult marks a batch entry that the answer listed neither under
// Successful nor under Failed: its outcome is unknown, so it is reported as
// a (transient) failure.
var errNoResult = errors.New("no result for entry")

// typedErrors maps the SDK's typed errors, and credentialsError, to
// sentinels. They are checked before the code table because the SDK may
// report such an error under an overridden code (the query-protocol code from
// the x-amzn-query-error header). KmsThrottled is not here: it is transient.
var typedErrors = []struct {
	match    func(error) bool
	sentinel error
}{
	{as[*types.ReceiptHandleIsInvalid], sqsloop.ErrReceiptHandleExpired},
	{as[*types.MessageNotInflight], sqsloop.ErrReceiptHandleExpired},
	{as[*types.InvalidIdFormat], sqsloop.ErrReceiptHandleExpired},
	{as[*types.QueueDoesNotExist], sqsloop.ErrQueueNotFound},
	{as[*types.InvalidAddress], sqsloop.ErrInvalidArgument},
	{as[*types.InvalidAttributeName], sqsloop.ErrInvalidArgument},
	{as[*types.InvalidAttributeValue], sqsloop.ErrInvalidArgument},
	{as[*types.InvalidMessageContents], sqsloop.ErrInvalidArgument},
	{as[*types.InvalidBatchEntryId], sqsloop.ErrInvalidArgument},
	{as[*types.BatchEntryIdsNotDistinct], sqsloop.ErrInvalidArgument},
	{as[*types.EmptyBatchRequest], sqsloop.ErrInvalidArgument},
	{as[*types.TooManyEntriesInBatchRequest], sqsloop.ErrInvalidArgument},
	{as[*types.BatchRequestTooLong], sqsloop.ErrInvalidArgument},
	{as[*types.UnsupportedOperation], sqsloop.ErrInvalidArgument},
	{as[*types.InvalidSecurity], sqsloop.ErrAccessDenied},
	{as[*types.KmsAccessDenied], sqsloop.ErrAccessDenied},
	{as[*types.KmsDisabled], sqsloop.ErrAccessDenied},
	{as[*types.KmsInvalidKeyUsage], sqsloop.ErrAccessDenied},
	{as[*types.KmsInvalidState], sqsloop.ErrAccessDenied},
	{as[*types.KmsNotFound], sqsloop.ErrAccessDenied},
	{as[*types.KmsOptInRequired], sqsloop.ErrAccessDenied},
	{as[*credentialsError], sqsloop.ErrAccessDenied},
}

func as[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// codeSentinels maps SQS error codes to sentinels: the JSON-protocol codes
// (the error shape's name, or for errors common to all AWS services the
// "…Exception" name in the body's __type), and the query-protocol codes that
// SQS sends in the x-amzn-query-error header (the SDK reports those when
// present), that some servers still use, and that Failed entries of batch
// answers carry. InvalidParameterValue is not here: its meaning depends on its
// message (see sentinelForCode).
//
// ErrAccessDenied: a permission, signature or credential failure, or a KMS
// key this caller cannot use; retrying does not heal it, an operator must
// act. RequestExpired is among them: SQS says it when the request's signing
// time is more than 15 minutes from its own clock, which, as the SDK signs
// every attempt as it sends it, means the local clock is wrong, and stays
// wrong until someone fixes it. (The SDK corrects a skew it sees in the
// answer's Date header, and retries, for a few codes only, SignatureDoesNotMatch
// among them; RequestExpired is not one of them.)
//
// NotAuthorized ("You do not have permission to perform this action") and
// OptInRequired ("The AWS access key ID needs a subscription for the
// service") are in SQS's list of the errors common to all AWS services (API
// Reference, Common Errors), beside AccessDeniedException and
// InvalidClientTokenId.
//
// Codes not listed get no sentinel: throttling (KMS.ThrottlingException and
// KmsThrottled included), InternalError, ServiceUnavailable, OverLimit and
// anything unknown are transient.
var codeSentinels = map[string]error{
	"ReceiptHandleIsInvalid":                    sqsloop.ErrReceiptHandleExpired,
	"MessageNotInflight":                        sqsloop.ErrReceiptHandleExpired,
	"AWS.SimpleQueueService.MessageNotInflight": sqsloop.ErrReceiptHandleExpired,
	"InvalidIdFormat":                           sqsloop.ErrReceiptHandleExpired,

	"QueueDoesNotExist":                       sqsloop.ErrQueueNotFound,
	"AWS.SimpleQueueService.NonExistentQueue": sqsloop.ErrQueueNotFound,

	"MissingParameter":                                    sqsloop.ErrInvalidArgument,
	"InvalidAddress":                                      sqsloop.ErrInvalidArgument,
	"InvalidAttributeName":                                sqsloop.ErrInvalidArgument,
	"InvalidAttributeValue":                               sqsloop.ErrInvalidArgument,
	"InvalidMessageContents":                              sqsloop.ErrInvalidArgument,
	"InvalidBatchEntryId":                                 sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.InvalidBatchEntryId":          sqsloop.ErrInvalidArgument,
	"BatchEntryIdsNotDistinct":                            sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.BatchEntryIdsNotDistinct":     sqsloop.ErrInvalidArgument,
	"EmptyBatchRequest":                                   sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.EmptyBatchRequest":            sqsloop.ErrInvalidArgument,
	"TooManyEntriesInBatchRequest":                        sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.TooManyEntriesInBatchRequest": sqsloop.ErrInvalidArgument,
	"BatchRequestTooLong":                                 sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.BatchRequestTooLong":          sqsloop.ErrInvalidArgument,
	"UnsupportedOperation":                                sqsloop.ErrInvalidArgument,
	"AWS.SimpleQueueService.UnsupportedOperation":         sqsloop.ErrInvalidArgument,

	"AccessDenied":                        sqsloop.ErrAccessDenied,
	"AccessDeniedException":               sqsloop.ErrAccessDenied,
	"InvalidClientTokenId":                sqsloop.ErrAccessDenied,
	"UnrecognizedClientException":         sqsloop.ErrAccessDenied,
	"SignatureDoesNotMatch":               sqsloop.ErrAccessDenied,
	"InvalidSignatureException":           sqsloop.ErrAccessDenied,
	"IncompleteSignature":                 sqsloop.ErrAccessDenied,
	"IncompleteSignatureException":        sqsloop.ErrAccessDenied,
	"MissingAuthenticationToken":          sqsloop.ErrAccessDenied,
	"MissingAuthenticationTokenException": sqsloop.ErrAccessDenied,
	"InvalidSecurity":                     sqsloop.ErrAccessDenied,
	"ExpiredToken":                        sqsloop.ErrAccessDenied,
	"ExpiredTokenException":               sqsloop.ErrAccessDenied,
	"RequestExpired":                      sqsloop.ErrAccessDenied,
	"NotAuthorized":                       sqsloop.ErrAccessDenied,
	"OptInRequired":                       sqsloop.ErrAccessDenied,
	"KmsAccessDenied":                     sqsloop.ErrAccessDenied,
	"KMS.AccessDeniedException":           sqsloop.ErrAccessDenied,
	"KmsDisabled":                         sqsloop.ErrAccessDenied,
	"KMS.DisabledException":               sqsloop.ErrAccessDenied,
	"KmsInvalidKeyUsage":                  sqsloop.ErrAccessDenied,
	"KMS.InvalidKeyUsageException":        sqsloop.ErrAccessDenied,
	"KmsInvalidState":                     sqsloop.ErrAccessDenied,
	"KMS.InvalidStateException":           sqsloop.ErrAccessDenied,
	"KmsNotFound":                         sqsloop.ErrAccessDenied,
	"KMS.NotFoundException":               sqsloop.ErrAccessDenied,
	"KmsOptInRequired":                    sqsloop.ErrAccessDenied,
	"KMS.OptInRequired":                   sqsloop.ErrAccessDenied,
}

// sentinelFor returns the sentinel that err means, or nil for an error
// without one (transient, or unknown).
func sentinelFor(err error) error {
	for _, t := range typedErrors {
		if t.match(err) {
			return t.sentinel
		}
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return sentinelForCode(apiErr.ErrorCode(), apiErr.ErrorMessage())
	}
	return nil
}

// sentinelForCode maps an SQS error code and message to a sentinel, or nil.
//
// InvalidParameterValue covers three different cases, told apart by the
// message SQS sends with it:
//   - "Value … for parameter ReceiptHandle is invalid. Reason: The receipt
//     handle has expired." (or "Message does not exist or is not available
//     for visibility timeout change"): ErrReceiptHandleExpired;
//   - "Value … for parameter VisibilityTimeout is invalid. Reason: Total
//     VisibilityTimeout for the message is beyond the limit [43200 seconds]":
//     ErrLeaseCeiling;
//   - anything else: ErrInvalidArgument.
func sentinelForCode(code, message string) error {
	if s, ok := codeSentinels[code]; ok {
		return s
	}
	if code != "InvalidParameterValue" && code != "InvalidParameterValueException" {
		return nil
	}
	msg := strings.ToLower(message)
	switch {
	case strings.Contains(msg, "receipthandle") || strings.Contains(msg, "receipt handle"):
		return sqsloop.ErrReceiptHandleExpired
	case (strings.Contains(msg, "visibilitytimeout") || strings.Contains(msg, "visibility timeout")) &&
		(strings.Contains(msg, "beyond the limit") || strings.Contains(msg, "exceed") ||
			strings.Contains(msg, "maximum") || strings.Contains(msg, "12 hours")):
		return sqsloop.ErrLeaseCeiling
	default:
		return sqsloop.ErrInvalidArgument
	}
}

// callError wraps the error of a whole call: what was done to which queue,
// the sentinel it means (if any) and the SDK's error, all reachable with
// errors.Is and errors.As.
func (m *Mailbox) callError(op string, err error) error {
	return wrapCall(op+" "+m.queueURL, err)
}

// wrapCall wraps the error of a whole call with what was done, and the
// sentinel it means (if any).
func wrapCall(what string, err error) error {
	if s := sentinelFor(err); s != nil {
		return fmt.Errorf("sqsmailbox: %s: %w: %w", what, s, err)
	}
	return fmt.Errorf("sqsmailbox: %s: %w", what, err)
}

// entryError turns a Failed entry of a batch answer into the error of entry
// i. The entry's code and message become a *smithy.GenericAPIError, so a
// per-entry error can be inspected like a call error (errors.As with
// smithy.APIError); its fault is the client's when SQS says SenderFault.
func (m *Mailbox) entryError(op string, i int, f types.BatchResultErrorEntry) error {
	fault := smithy.FaultServer
	if f.SenderFault {
		fault = smithy.FaultClient
	}
	cause := &smithy.GenericAPIError{Code: aws.ToString(f.Code), Message: aws.ToString(f.Message), Fault: fault}
	if s := sentinelForCode(cause.Code, cause.Message); s != nil {
		return fmt.Errorf("sqsmailbox: %s %s: entry %d: %w: %w", op, m.queueURL, i, s, cause)
	}
	return fmt.Errorf("sqsmailbox: %s %s: entry %d: %w", op, m.queueURL, i, cause)
}
