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
// A receive from a standard queue is one statement: it picks the oldest
// visible messages by an index on (queue, priority, visibility deadline)
// with FOR UPDATE SKIP LOCKED, so concurrent receivers neither wait on nor
// take each other's messages, and updates them in place; only a receive
// that took nothing asks a second statement when to look again, and one
// that moved messages to the dead-letter queue takes the next in their
// places with another (a dead letter takes no place in the batch). Its
// limit is a constant of the statement, one statement per batch size, so
// that the server plans each once per connection, not at every call (with
// a parameter there, a prepared statement's generic plan is costed for a
// tenth of the table and the server plans every call afresh, which cost as
// much as the receive itself). A receive from a FIFO queue first locks the
// queue's row for its transaction, so that two receives never take
// messages of one group: a FIFO queue's receivers take turns. An ack is
// one DELETE for the batch.
//
// No deadlocks (PostgreSQL's 40P01): every statement that locks messages
// and waits for them (acks, visibility changes, FIFO receives, sweeps,
// purges) locks them in the order of their ids, and a FIFO send claims its
// deduplication IDs in key order, so none waits for another that waits for
// it. A standard receive locks in the order of delivery and skips what
// others hold, but SKIP LOCKED does not keep it out of a cycle (a row
// whose last change committed while it looked is locked in its newest
// version, waiting for whoever holds that, whatever the wait policy), so
// its statement gives up a lock it waited for after 100 ms, ten times
// sooner than the server looks for deadlocks (deadlock_timeout, 1 s by
// default), and runs again: a cycle through a receive ends with the
// receive, which had taken nothing, never with an ack.
//
// A change that makes a message receivable (a send, a nack, a FIFO ack
// that frees a group, a move to the dead-letter queue) notifies the channel "sqsloop" (LISTEN/NOTIFY),
// so a long poll in another process wakes at once; a Store sends at most
// one such NOTIFY per queue per 2 ms, carried by the statement that made
// the change, and one at the window's end for the changes it held back
// (a NOTIFY takes a lock of the whole server at commit and wakes every
// listener: a burst of sends costs at most two per window, not one each).
// Its payload counts the messages, so that a listening Store wakes as many
// long polls as they need, and names the Store, whose own listener leaves
// it out. The Store
// listens on one connection taken out of its pool. Leases follow the
// server's clock (statement_timestamp()), so machines whose clocks differ
// still agree on when a lease ends. The server going away is transient:
// calls fail, the consumer retries, and the pool reconnects when it is back.
// A session the server ends under a receive, an ack or a visibility change
// (pg_terminate_backend, SQLSTATE 57P01; a connection lost before the
// statement was sent) is not a failure of the call: it is sent again at
// once on another connection of the pool, up to 3 times in all, as an SDK
// sends a request again when its connection broke.
//
// SQL lives in queries.go, next to the schema's versions in migrations.go.
package postgres
