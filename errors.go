package sqsloop

import "errors"

// Sentinel errors. Mailbox implementations wrap them with %w (keeping the
// underlying SDK error reachable with errors.As), so callers match them with
// errors.Is, never by string.
var (
	// ErrReceiptHandleExpired means the lease behind a receipt handle is gone:
	// the message was deleted, its visibility timeout lapsed and another
	// receive produced a newer handle, or the handle is unknown. SQS reports it
	// as ReceiptHandleIsInvalid or MessageNotInflight. Stop extending that
	// message. (A delete with such a handle may still report success on a
	// standard queue, while deleting nothing.)
	ErrReceiptHandleExpired = errors.New("sqsloop: receipt handle expired")

	// ErrMailboxClosed is returned by every Mailbox method called after
	// Close, and by a Receive that was waiting when Close was called.
	ErrMailboxClosed = errors.New("sqsloop: mailbox closed")

	// ErrQueueNotFound means the queue does not exist (SQS:
	// QueueDoesNotExist). Implementations wrap it with the queue's name or URL.
	ErrQueueNotFound = errors.New("sqsloop: queue does not exist")

	// ErrLeaseCeiling means a visibility change asked to keep a message hidden
	// past MaxVisibilityTimeout (12 hours) counted from the receive that
	// produced its receipt handle. SQS rejects such a request with
	// InvalidParameterValue.
	ErrLeaseCeiling = errors.New("sqsloop: visibility past the 12-hour ceiling")

	// ErrAccessDenied means the caller is not allowed to make the call, or
	// could not prove who it is: SQS answered AccessDenied,
	// InvalidClientTokenId, UnrecognizedClientException,
	// SignatureDoesNotMatch, IncompleteSignature, MissingAuthenticationToken,
	// InvalidSecurity, ExpiredToken, RequestExpired (a wrong local clock) or
	// a KMS key error (KmsAccessDenied, KmsDisabled, KmsNotFound, …; not
	// KmsThrottled), or the SDK found no credentials to sign with. It does
	// not heal by retrying at once (an IAM change may take a few seconds to
	// propagate, no more), so the consumer and the lease owner try again
	// and give up after visibility.MaxAccessDenied (5) consecutive failures
	// of one kind of call; consumer.Consumer.Run then returns an error
	// wrapping it. Only sqsmailbox returns it; memmailbox never does.
	ErrAccessDenied = errors.New("sqsloop: access denied")

	// ErrAlreadyRunning is wrapped by the error that a Run that may be
	// called only once returns on every later call, even one made after
	// the first returned: consumer.Consumer.Run, lifecycle.LoopGroup.Run
	// (and LoopGroup.Add once Run was called).
	ErrAlreadyRunning = errors.New("sqsloop: already running")

	// ErrNoDeadLetterQueue means the queue has no redrive policy, so there
	// is no dead-letter queue to open (DeadLetterQueueOpener) or to move a
	// poison message to.
	ErrNoDeadLetterQueue = errors.New("sqsloop: queue has no dead-letter queue")

	// ErrInvalidArgument means a request was malformed: caught before it
	// reached the queue by the request rules (ReceiveRequest.Validate,
	// ValidateDelete, ValidateChangeVisibility, ValidateSend: an empty
	// batch, more than MaxBatchSize entries, a duration out of the range SQS
	// accepts, …; the wrapping error names the field), or rejected by the
	// queue as malformed; and every argument or Config field out of its
	// range that a package of sqsloop refuses (New, Validate, Add, …),
	// the wrapping error naming it. Retrying will not help.
	ErrInvalidArgument = errors.New("sqsloop: invalid argument")
)
