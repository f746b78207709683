package sqsmailbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sqsloop/sqsloop"
)

// Mailbox is one SQS queue seen through the [sqsloop.Mailbox] contract. Build
// it with [New]. All methods are safe for concurrent use; none starts a
// goroutine or retries (the SDK's retryer handles throttling and 5xx answers
// inside each call).
//
// Errors, matched with errors.Is, wrap both a sentinel and the SDK's error
// (still reachable with errors.As, e.g. *types.QueueDoesNotExist or
// smithy.APIError):
//
//   - sqsloop.ErrReceiptHandleExpired: ReceiptHandleIsInvalid,
//     MessageNotInflight (also as AWS.SimpleQueueService.MessageNotInflight),
//     InvalidIdFormat, and InvalidParameterValue about the ReceiptHandle
//     parameter ("The receipt handle has expired").
//   - sqsloop.ErrLeaseCeiling: InvalidParameterValue about VisibilityTimeout
//     going past the limit ("Total VisibilityTimeout for the message is
//     beyond the limit [43200 seconds]"): SQS keeps a message hidden at most
//     12 hours after the receive that produced its receipt handle.
//   - sqsloop.ErrQueueNotFound: QueueDoesNotExist or
//     AWS.SimpleQueueService.NonExistentQueue; the message names the queue URL.
//   - sqsloop.ErrInvalidArgument: bad input caught before the call (the
//     message names the field and its range), or a request SQS rejected as
//     malformed (any other InvalidParameterValue, MissingParameter,
//     InvalidAttributeName/Value, InvalidMessageContents, batch-shape errors).
//   - sqsloop.ErrAccessDenied: the caller may not make the call, could not
//     prove who it is, or may not use the queue's KMS key; retrying does not
//     heal it. Codes AccessDenied, InvalidClientTokenId,
//     UnrecognizedClientException, SignatureDoesNotMatch,
//     IncompleteSignature, MissingAuthenticationToken, InvalidSecurity,
//     ExpiredToken, and their JSON spellings AccessDeniedException,
//     InvalidSignatureException, IncompleteSignatureException,
//     MissingAuthenticationTokenException, ExpiredTokenException;
//     NotAuthorized and OptInRequired; RequestExpired (the request was signed more than 15 minutes from SQS's
//     clock: the local clock is wrong, and retrying does not fix it); the KMS
//     errors KmsAccessDenied, KmsDisabled, KmsInvalidKeyUsage,
//     KmsInvalidState, KmsNotFound and KmsOptInRequired, as typed errors and
//     as codes in both spellings (KMS.AccessDeniedException,
//     KMS.DisabledException, KMS.InvalidKeyUsageException,
//     KMS.InvalidStateException, KMS.NotFoundException, KMS.OptInRequired);
//     and, with a *sqs.Client, a failure of its credentials provider (no
//     credentials found, or a refresh that failed), in which case nothing
//     was sent (the provider's error stays reachable with errors.Is). An
//     anonymous client (aws.AnonymousCredentials) sends unsigned requests,
//     and SQS's refusal maps by its code.
//   - sqsloop.ErrMailboxClosed: any call after Close, and a Receive that was
//     waiting when Close was called.
//
// The same table applies to the Failed entries of batch answers, by code.
// Anything else (throttling after the SDK's retries, KmsThrottled, 5xx,
// network) carries no sentinel and is transient: the caller may retry it.
type Mailbox struct {
	client   API
	queueURL string
	rtt      rttEstimator // bounds one round trip, for Receive's ReceivedAt

	mu       sync.Mutex
	closed   bool
	nextID   uint64
	receives map[uint64]context.CancelCauseFunc // in-flight Receives, cancelled by Close
}

var (
	_ sqsloop.Mailbox          = (*Mailbox)(nil)
	_ sqsloop.AttributesReader = (*Mailbox)(nil)
)

// New returns a Mailbox for the queue at queueURL (as CreateQueue or
// GetQueueUrl return it), calling SQS through client — usually a *sqs.Client
// from [NewClient]. It makes no call: a queue that does not exist shows up as
// sqsloop.ErrQueueNotFound on the first one.
//
// A nil client or an empty queueURL is an error wrapping
// sqsloop.ErrInvalidArgument that names the field.
func New(client API, queueURL string) (*Mailbox, error) {
	var errs []error
	if client == nil {
		errs = append(errs, fmt.Errorf("sqsmailbox: client: must not be nil: %w", sqsloop.ErrInvalidArgument))
	}
	if queueURL == "" {
		errs = append(errs, fmt.Errorf("sqsmailbox: queueURL: must not be empty: %w", sqsloop.ErrInvalidArgument))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Mailbox{client: client, queueURL: queueURL, receives: make(map[uint64]context.CancelCauseFunc)}, nil
}

// QueueURL returns the URL of the queue the Mailbox works on. Safe for
// concurrent use.
func (m *Mailbox) QueueURL() string { return m.queueURL }

// Close releases the Mailbox: a Receive waiting in a long poll returns at
// once with an error wrapping sqsloop.ErrMailboxClosed (its HTTP request is
// cancelled), and every later call returns sqsloop.ErrMailboxClosed. Delete,
// ChangeVisibility and Send calls already under way are left to finish, so
// that an ack sent just before Close is not thrown away. Close does not wait,
// does not delete the queue or its messages, and does not close the SDK
// client (which holds nothing that needs closing). It is idempotent, safe for
// concurrent use, and always returns nil.
func (m *Mailbox) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	for id, cancel := range m.receives {
		cancel(sqsloop.ErrMailboxClosed)
		delete(m.receives, id)
	}
	return nil
}

// errClosed is the error every call returns after Close.
func (m *Mailbox) errClosed(op string) error {
	return fmt.Errorf("sqsmailbox: %s %s: %w", op, m.queueURL, sqsloop.ErrMailboxClosed)
}

// checkOpen returns errClosed once Close has been called.
func (m *Mailbox) checkOpen(op string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return m.errClosed(op)
	}
	return nil
}

// startReceive registers a Receive so that Close can cancel it. It returns
// the context to call SQS with and the function that unregisters it, or
// errClosed.
func (m *Mailbox) startReceive(ctx context.Context) (context.Context, func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, nil, m.errClosed("receive from")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	id := m.nextID
	m.nextID++
	m.receives[id] = cancel
	done := func() {
		m.mu.Lock()
		delete(m.receives, id)
		m.mu.Unlock()
		cancel(nil)
	}
	return ctx, done, nil
}
