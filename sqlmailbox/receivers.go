package sqlmailbox

import (
	"context"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// ReceiverRetention is how long a row of the receiver registry that is no
// longer renewed stays listed (shown dead) before Sweep deletes it: 1 hour.
const ReceiverRetention = time.Hour

// Receiver is one row of the receiver registry: a Mailbox that receives,
// in some process, and what it holds.
type Receiver struct {
	// ID is the Mailbox's receiver ID (Mailbox.ReceiverID).
	ID string
	// Queue is the name of the queue it receives from.
	Queue string
	// Host and PID are its process's host name and process ID.
	Host string
	PID  int
	// StartedAt is its first receive; LastSeen its latest renewal, at most
	// a third of Config.ReceiverTTL old while it receives.
	StartedAt, LastSeen time.Time
	// SinceSeen is how long ago LastSeen was, by the database's clock
	// (postgres) or this process's (sqlite).
	SinceSeen time.Duration
	// InFlight counts the messages its receives hold in flight now, as
	// Store.InFlight lists them (not those whose failure was recorded:
	// their visibility timeout is a back-off, not a lease).
	InFlight int
	// Alive reports a receiver seen within Config.ReceiverTTL (of the
	// Store that lists it).
	Alive bool
}

// Receivers lists the receiver registry: every Mailbox that has received
// and not been closed, in any process, with what it holds in flight, and
// whether it is alive (its receives, acks and lease extensions renew its
// row; one that stops them all, or whose process died, is shown dead once
// Config.ReceiverTTL has passed, and Sweep deletes its row after
// ReceiverRetention). It only reads the database (on SQLite it takes no
// write lock), counting what each holds from the messages in flight.
//
// Errors: sqsloop.ErrMailboxClosed after Close; ctx's error; or the
// database's. Safe for concurrent use.
func (s *Store) Receivers(ctx context.Context) ([]Receiver, error) {
	if err := s.check("Receivers"); err != nil {
		return nil, err
	}
	rows, err := s.d.Receivers(ctx, time.Now())
	if err != nil {
		return nil, s.callError(ctx, "list the receivers of", "*", err)
	}
	out := make([]Receiver, len(rows))
	for i, r := range rows {
		out[i] = s.receiver(r)
	}
	return out, nil
}

// receiver returns the Receiver of row r, alive when seen within
// Config.ReceiverTTL.
func (s *Store) receiver(r driver.ReceiverRow) Receiver {
	return Receiver{ID: r.ID, Queue: r.Queue, Host: r.Host, PID: r.PID, StartedAt: r.StartedAt, LastSeen: r.LastSeen,
		SinceSeen: r.SinceSeen, InFlight: r.InFlight, Alive: r.SinceSeen < s.cfg.ReceiverTTL}
}
