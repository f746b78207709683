package sqsloop

import "context"

// MaxSkipGroups bounds the message groups one receive may skip
// (GroupSkipper): 100.
const MaxSkipGroups = 100

// GroupSkipper is implemented by a Mailbox whose receive can leave the
// messages of some message groups where they are: a consumer's groups at
// their limit (consumer.Config.GroupLimit), so that it receives around a
// busy tenant instead of receiving its messages and sending them back
// with a delay (a receive and a visibility change each, and a receive count
// on each message). sqlmailbox's and memmailbox's mailboxes are one, in the
// receive's query; SQS has no such call (a fair queue orders its delivery
// by group itself).
type GroupSkipper interface {
	// ReceiveSkipping is Receive, but on a standard queue it takes no
	// message whose MessageGroupID is one of skip (at most MaxSkipGroups,
	// none empty), and its long poll waits as if they were not there; on a
	// FIFO queue it is Receive. Errors are Receive's, and an error wrapping
	// ErrInvalidArgument for more groups than MaxSkipGroups or an empty one.
	ReceiveSkipping(ctx context.Context, req ReceiveRequest, skip []string) ([]*Message, error)
}

// ValidateSkip returns an error wrapping ErrInvalidArgument when skip is
// not a list a GroupSkipper takes (see GroupSkipper), nil otherwise: the
// rule every GroupSkipper checks.
func ValidateSkip(skip []string) error {
	if len(skip) > MaxSkipGroups {
		return invalid("ReceiveSkipping: skip: must name at most %d message groups, got %d", MaxSkipGroups, len(skip))
	}
	for i, g := range skip {
		if g == "" {
			return invalid("ReceiveSkipping: skip[%d]: must not be empty", i)
		}
	}
	return nil
}
