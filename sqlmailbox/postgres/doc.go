// Package postgres is sqlmailbox on PostgreSQL: one queue that any number of
// worker processes on any number of machines share. It is the only package
// of sqsloop that imports a PostgreSQL driver, github.com/jackc/pgx/v5.
//
// [Open] connects a pgx pool and migrates the schema (under an advisory
// lock, so processes starting together migrate once). A receive from a
// standard queue is one statement: it picks the oldest visible messages by
// an index on (queue, visibility deadline) with FOR UPDATE SKIP LOCKED, so
// concurrent receivers neither wait on nor take each other's messages, and
// updates them in place. A receive from a FIFO queue first locks the
// queue's row for its transaction (two statements), so that two receives
// never take messages of one group: a FIFO queue's receivers take turns.
// An ack is one DELETE for the batch. A send notifies the channel
// "sqsloop" (LISTEN/NOTIFY), so a long poll in another process wakes at once;
// the Store listens on one connection of its own. Leases follow the
// server's clock (statement_timestamp()), so machines whose clocks differ
// still agree on when a lease ends. The server going away is transient:
// calls fail, the consumer retries, and the pool reconnects when it is back.
//
// SQL lives in queries.go, next to the schema's versions in migrations.go.
package postgres
