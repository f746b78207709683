package jobstate

import (
	"errors"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Limits of a Record, the same for every Store. A value's bound keeps a
// DynamoDB item under its 400 KB limit with room for the rest, and a save
// cheap: a DynamoDB write costs one unit per KB.
const (
	// MaxKeySize is the longest key, in bytes: 1,024.
	MaxKeySize = 1024
	// MaxValueSize is the largest Value, in bytes: 64 KiB (65,536).
	MaxValueSize = 64 << 10
	// MaxOwnerSize is the longest Owner, in bytes: 128.
	MaxOwnerSize = 128
)

// What the middlewares on a Store (packages checkpoint and idempotency)
// share, written once here.
const (
	// DefaultRetention is how long their records are kept by default:
	// 14 days, the longest retention period SQS allows, so that a record
	// never expires before its message could.
	DefaultRetention = 14 * 24 * time.Hour
	// MinRetention is the shortest retention they accept: 1 minute.
	MinRetention = time.Minute
	// MaxNamespace bounds the namespace (a queue's name or URL) they put
	// in front of every key: 256 bytes (an SQS queue URL is shorter).
	MaxNamespace = 256
)

// State is what a Record says about its key.
type State string

// The states of a Record.
const (
	// Saved: Value is a value kept for the key (a checkpoint).
	Saved State = "saved"
	// InProgress: Owner works on the key until LeaseUntil, unless it
	// renews the claim (Store.Claim again) before then.
	InProgress State = "in_progress"
	// Completed: the work of the key is done; Value is its result, if any.
	Completed State = "completed"
	// Failed: the work of the key failed for good (a permanent failure,
	// sqsloop.Permanent); Value says why, if anything.
	Failed State = "failed"
)

// Record is what a Store keeps under one key.
type Record struct {
	// Key is the record's key: 1 to MaxKeySize bytes.
	Key string
	// State is Saved, InProgress, Completed or Failed.
	State State
	// Owner is, for an InProgress record, who holds the claim: a token of
	// one run (the idempotency middleware makes a random one per handler
	// run), at most MaxOwnerSize bytes. Kept as written for other states.
	Owner string
	// Value is the saved value or the result: at most MaxValueSize bytes;
	// nil or empty for none (a Store may return either).
	Value []byte
	// LeaseUntil is, for an InProgress record, when the claim lapses: from
	// then on another owner may claim the key. Required for InProgress.
	LeaseUntil time.Time
	// ExpiresAt is when the record stops counting: from then on every
	// method treats the key as absent (a Store deletes it some time after:
	// DynamoDB's TTL within days, the SQL stores' Sweep, Memory on later
	// writes). Zero: never. Stores keep it to the millisecond at least
	// (DynamoDB's TTL reads whole seconds of it).
	ExpiresAt time.Time
}

// Errors of a Store.
var (
	// ErrNotFound: no live record under the key (Get).
	ErrNotFound = errors.New("jobstate: no record")
	// ErrClaimed: a live record stands that the caller may not replace
	// (Claim), or delete (Delete with an owner): another owner's claim
	// whose lease has not lapsed, or a Saved, Completed or Failed record.
	ErrClaimed = errors.New("jobstate: the key is claimed or completed")
)

// Validate returns an error wrapping sqsloop.ErrInvalidArgument that names
// every field of r outside its range, or nil.
func (r Record) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("jobstate: Record."+format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if len(r.Key) == 0 || len(r.Key) > MaxKeySize {
		bad("Key: %d bytes, want 1-%d", len(r.Key), MaxKeySize)
	}
	switch r.State {
	case Saved, Completed, Failed:
	case InProgress:
		if r.LeaseUntil.IsZero() {
			bad("LeaseUntil: zero, want the time an in-progress claim lapses")
		}
	default:
		bad("State: %q, want %q, %q, %q or %q", r.State, Saved, InProgress, Completed, Failed)
	}
	if len(r.Owner) > MaxOwnerSize {
		bad("Owner: %d bytes, want at most %d", len(r.Owner), MaxOwnerSize)
	}
	if len(r.Value) > MaxValueSize {
		bad("Value: %d bytes, want at most %d (MaxValueSize)", len(r.Value), MaxValueSize)
	}
	return errors.Join(errs...)
}

// ValidateClaim is Validate for Store.Claim's record, which must also be
// InProgress.
func (r Record) ValidateClaim() error {
	err := r.Validate()
	if r.State != InProgress {
		err = errors.Join(err, fmt.Errorf("jobstate: Claim: State %q, want %q: %w", r.State, InProgress, sqsloop.ErrInvalidArgument))
	}
	return err
}

// Live reports whether r still counts at now: its ExpiresAt is zero or
// after now.
func (r Record) Live(now time.Time) bool { return r.ExpiresAt.IsZero() || r.ExpiresAt.After(now) }

// Claimable reports whether a Claim by owner at now may replace r, a live
// record: r is an InProgress claim whose lease lapsed (LeaseUntil at or
// before now) or that owner holds. The rule every Store's Claim applies.
func (r Record) Claimable(owner string, now time.Time) bool {
	return r.State == InProgress && (!r.LeaseUntil.After(now) || r.Owner == owner)
}
