// Package postgres is sqlmailbox on PostgreSQL: one queue that any number of
// worker processes on any number of machines share. It is the only package
// of sqsloop that imports a PostgreSQL driver, github.com/jackc/pgx/v5.
//
// [Migrate] creates or upgrades the schema (under an advisory lock, so
// processes migrating together migrate once): a step of its own, run
// before the workers start by a role that may create tables, as with any
// migration tool. [New] returns a Store on a pgx pool the program made and
// configured (tracing, TLS, RDS IAM authentication in BeforeConnect,
// sizes); [Open] makes the pool from a DSN. Both check the schema's version
// and change nothing, so the workers' role needs only SELECT, INSERT,
// UPDATE and DELETE on the tables and USAGE on their sequences.
//
// A receive from a standard queue is one statement when nobody competes
// with it: it reads the oldest visible messages by an index on (queue,
// priority, visibility deadline), locks them in the order of their ids
// with SKIP LOCKED, and updates them in place; when some of them were held
// by another receive, or moved to the dead-letter queue, it looks again
// further on (up to three more statements, each reading four times as
// many), so that competing receivers share the head of the queue and a
// dead letter takes no place in the batch. Only a receive that took
// nothing asks one more statement when to look again. Its limits are
// constants of the statement, one statement per batch size, so that the
// server plans each once per connection, not at every call (with a
// parameter there, a prepared statement's generic plan is costed for a
// tenth of the table and the server plans every call afresh, which cost as
// much as the receive itself). A receive from a FIFO queue first locks the
// queue's row for its transaction, so that two receives never take
// messages of one group: a FIFO queue's receivers take turns. An ack is
// one DELETE for the batch.
//
// Every statement that locks messages (receives, acks, visibility
// changes, sweeps, purges) locks them in the order of their ids, and none
// locks a queue's row after messages in a way another transaction waits
// for, so they cannot deadlock (PostgreSQL's 40P01): SKIP LOCKED alone does
// not keep a receive out of a cycle, since a row whose last change
// committed while the receive looked at it is locked in its newest
// version, waiting for whoever holds that, whatever the wait policy.
//
// A change that makes a message receivable (a send, a nack, a FIFO ack
// that frees a group, a move to the dead-letter queue) notifies the channel "sqsloop" (LISTEN/NOTIFY),
// so a long poll in another process wakes at once; a Store sends at most
// one such NOTIFY per queue per 10 ms, carried by the statement that made
// the change, and one at the window's end for the changes it held back
// (a NOTIFY takes a lock of the whole server at commit and wakes every
// listener: a burst of sends costs at most two per window, not one each). The Store
// listens on one connection taken out of its pool. Leases follow the
// server's clock (statement_timestamp()), so machines whose clocks differ
// still agree on when a lease ends. The server going away is transient:
// calls fail, the consumer retries, and the pool reconnects when it is back.
//
// SQL lives in queries.go, next to the schema's versions in migrations.go.
package postgres
