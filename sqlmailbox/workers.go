package sqlmailbox

import (
	"context"
	"time"
)

// Worker is one row of the worker registry: a Mailbox that receives, in
// some process, and what it holds.
type Worker struct {
	// ID is the Mailbox's worker ID (Mailbox.WorkerID).
	ID string
	// Queue is the name of the queue it receives from.
	Queue string
	// Host and PID are its process's host name and process ID.
	Host string
	PID  int
	// StartedAt is its first receive; LastSeen its latest renewal, at most
	// Config.WorkerHeartbeat old while it receives.
	StartedAt, LastSeen time.Time
	// SinceSeen is how long ago LastSeen was, by the database's clock
	// (postgres) or this process's (sqlite).
	SinceSeen time.Duration
	// InFlight counts the messages its receives hold in flight now.
	InFlight int
	// Alive reports a worker seen within DeadAfterBeats (3) heartbeats
	// (Config.WorkerHeartbeat of the Store that lists it).
	Alive bool
}

// Workers lists the worker registry: every Mailbox that has received and
// not been closed, in any process, with what it holds in flight, and
// whether it is alive (its receives, acks and lease extensions renew its
// row; one that stops them all, or whose process died, is shown dead, and
// Sweep deletes its row after WorkerRetention). Counting what each holds
// reads the messages in flight.
//
// Errors: sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (s *Store) Workers(ctx context.Context) ([]Worker, error) {
	if err := s.check("Workers"); err != nil {
		return nil, err
	}
	ws, err := s.d.Workers(ctx, time.Now())
	if err != nil {
		return nil, s.callError(ctx, "list the workers of", "*", err)
	}
	dead := DeadAfterBeats * s.cfg.WorkerHeartbeat
	for i := range ws {
		ws[i].Alive = ws[i].SinceSeen < dead
	}
	return ws, nil
}
