package jobstate

import "context"

// Store keeps Records by key. Implementations: Memory,
// jobstate/sqlitestate, jobstate/pgstate, jobstate/dynamostore; jobstate/storetest is the
// conformance suite every one passes.
//
// Every method is safe for concurrent use, by several processes where the
// store is shared. Each is one atomic operation on one key (one statement
// or one conditional write; a Store may need a second read only to report
// the record that made a Claim fail). Errors: ErrNotFound and ErrClaimed
// as each method says; an error wrapping sqsloop.ErrInvalidArgument for a
// Record outside its limits (Record.Validate), before any call; ctx's
// error; anything else is the store's, to be taken as transient (the
// caller may try again) unless it wraps sqsloop.ErrAccessDenied.
type Store interface {
	// Get returns the live record under key; ErrNotFound when there is
	// none or it has expired.
	Get(ctx context.Context, key string) (Record, error)

	// Put writes rec under rec.Key, replacing whatever stands there.
	Put(ctx context.Context, rec Record) error

	// Claim writes rec, an InProgress record, when no live record stands
	// under rec.Key or the one standing is Claimable by rec.Owner (its
	// lease lapsed, or rec.Owner holds it: a renewal). Otherwise it writes
	// nothing and returns the record standing and an error wrapping
	// ErrClaimed. Two Claims of one key at once never both succeed unless
	// they have the same Owner.
	Claim(ctx context.Context, rec Record) (standing Record, err error)

	// Delete deletes the record under key. With owner "" it deletes
	// whatever stands; with an owner, only an InProgress record that owner
	// holds, and returns an error wrapping ErrClaimed when another live
	// record stands. Nothing under key is not an error.
	Delete(ctx context.Context, key, owner string) error
}
