// Package jobstate is the store behind checkpoints and idempotency
// (packages checkpoint and idempotency): what a handler leaves behind about
// a message's job, kept outside the queue so that a later delivery can read
// it. One small contract, Store, and its implementations, each in a package
// of its own so that a program compiles only the driver it uses:
//
//   - Memory, here: one process, tests (nothing survives the process);
//   - jobstate/sqlitestate and jobstate/pgstate: a SQLite file or a
//     PostgreSQL database (a sqlmailbox Store's, in tables of their own,
//     or any other), usable also by consumers of SQS queues;
//   - jobstate/dynamostore: a DynamoDB table (aws-sdk-go-v2), with
//     conditional writes, for a fleet on AWS.
//
// From configuration, Open opens any of them from a URL (mem://,
// sqlite:state.db, postgres://host/db, dynamodb://TABLE), each store
// package registering its scheme as it is imported.
//
// A Store keeps Records by key. Four kinds of record share one key space
// (the middlewares prefix their keys so that they never meet): a Saved
// value (a checkpoint), a claim InProgress until its LeaseUntil (an
// idempotency key being worked on), a Completed key, with its optional
// result (an idempotency key done, a checkpointed job done), and a Failed
// one, with why (a checkpointed job that failed for good). Every record
// may expire (ExpiresAt): from then on it counts as absent, whether or not
// the store has deleted it yet.
//
// The one write that must be atomic across processes is Claim: it writes
// an in-progress record only where no live record stands, or where the one
// standing is an in-progress claim whose lease lapsed or that the same
// owner holds. Two processes claiming one key at once: one wins, the other
// gets ErrClaimed and the winner's record. The conformance suite
// (jobstate/storetest) checks every Store against it, and races claims.
//
// Times: a Store compares a record's LeaseUntil and ExpiresAt with the
// clock of the process calling it (time.Now), as the callers compute them
// from theirs; the processes sharing a store must have clocks that agree
// (NTP keeps them within milliseconds) far better than a lease is long.
//
// The package imports only the root package.
package jobstate
