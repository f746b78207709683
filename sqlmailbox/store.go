package sqlmailbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Store is one database holding queues: the handle a program opens once
// (sqlite.Open; postgres.Open or postgres.New) and takes its queues'
// Mailboxes from. It owns what its database package opened for it (the
// database's connections, except a pool the program passed to
// postgres.New) and, on a database that can announce new messages
// (postgres), the one goroutine that listens for them; Close stops it and
// waits for it. Safe for concurrent use.
type Store struct {
	d     driver.Driver
	cfg   Config
	hub   hub
	looks looks
	acks  tally
	host  string
	pid   int

	mu          sync.Mutex
	closed      bool
	done        chan struct{}   // closed by Close
	receivers   map[string]bool // IDs of the receiver rows its Mailboxes wrote
	registering sync.WaitGroup  // receiver rows being written
	listen      struct {
		started bool
		cancel  context.CancelFunc
		wg      sync.WaitGroup
	}
}

func init() { driver.SetOpen(open) }

// open returns a Store on d once it has checked that the database's schema
// is the version d needs, so that a database that cannot be used fails
// here, not at the first call; it closes d when it fails. It is what
// sqlite.Open, postgres.Open and postgres.New end with (driver.Open).
//
// Errors: cfg.Validate's (wrapping sqsloop.ErrInvalidArgument, naming every
// bad field); ErrSchemaOutdated when the database has no schema, or an
// older one (migrate it first); ErrSchemaTooNew when a newer sqsloop
// migrated it; ctx's error; or the database's.
func open(ctx context.Context, d driver.Driver, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		_ = d.Close()
		return nil, err
	}
	if err := checkSchema(ctx, d); err != nil {
		_ = d.Close()
		return nil, err
	}
	host, _ := os.Hostname()
	return &Store{d: d, cfg: cfg.withDefaults(d.DefaultPollInterval()), acks: tally{add: d.AddAcked}, host: host, pid: os.Getpid(),
		done: make(chan struct{})}, nil
}

// CreateQueue creates the queue spec describes, with its dead-letter queue
// first when spec.MaxReceiveCount is above 0 (spec.DeadLetterSpec), and
// returns its Mailbox. Like SQS's CreateQueue it is idempotent: a queue
// that exists with the same attributes is reused; one that exists with
// other attributes fails with an error wrapping sqsloop.ErrInvalidArgument
// that names each attribute that differs.
//
// Errors: spec.Validate's (wrapping sqsloop.ErrInvalidArgument, naming
// every bad field), sqsloop.ErrMailboxClosed after Close, ctx's error, or
// the database's. Safe for concurrent use, from several processes too.
func (s *Store) CreateQueue(ctx context.Context, spec sqsloop.QueueSpec) (*Mailbox, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := s.check("CreateQueue"); err != nil {
		return nil, err
	}
	spec = spec.WithDefaults()
	want := driver.QueueRecord{Spec: spec}
	if spec.MaxReceiveCount > 0 {
		dlq, err := s.ensure(ctx, driver.QueueRecord{Spec: spec.DeadLetterSpec().WithDefaults()})
		if err != nil {
			return nil, err
		}
		want.DeadLetterQueueID, want.DeadLetterQueue = dlq.ID, dlq.Spec.Name
	}
	q, err := s.ensure(ctx, want)
	if err != nil {
		return nil, err
	}
	return s.mailbox(q), nil
}

// ensure creates the queue want describes, or checks that the one of its
// name has the same attributes.
func (s *Store) ensure(ctx context.Context, want driver.QueueRecord) (driver.QueueRecord, error) {
	want.Key = make([]byte, 32)
	_, _ = rand.Read(want.Key) // never fails (crypto/rand.Read crashes the program instead)
	got, err := s.d.CreateQueue(ctx, want)
	if err != nil {
		return driver.QueueRecord{}, s.callError(ctx, "create queue", want.Spec.Name, err)
	}
	if err := want.Spec.Match(attributes(&got)); err != nil {
		return driver.QueueRecord{}, fmt.Errorf("sqlmailbox: CreateQueue: %w", err)
	}
	return got, nil
}

// Queue returns the Mailbox of the queue name.
//
// Errors: one wrapping sqsloop.ErrQueueNotFound that names the queue when
// it does not exist; sqsloop.ErrMailboxClosed after Close; ctx's error; or
// the database's. Safe for concurrent use.
func (s *Store) Queue(ctx context.Context, name string) (*Mailbox, error) {
	q, err := s.load(ctx, "Queue", name)
	if err != nil {
		return nil, err
	}
	return s.mailbox(q), nil
}

// DeleteQueue deletes the queue name and every message in it, at once (SQS
// takes up to 60 s). Its Mailboxes then fail with sqsloop.ErrQueueNotFound.
// Its dead-letter queue stays.
//
// Errors: one wrapping sqsloop.ErrQueueNotFound when it does not exist;
// ErrQueueInUse when it is another queue's dead-letter queue;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
func (s *Store) DeleteQueue(ctx context.Context, name string) error {
	if err := s.check("DeleteQueue"); err != nil {
		return err
	}
	if err := s.d.DeleteQueue(ctx, name); err != nil {
		return s.callError(ctx, "delete queue", name, err)
	}
	return nil
}

// PurgeQueue deletes every message of the queue name, visible, in flight
// and delayed, at once, and returns how many it deleted (SQS's PurgeQueue
// takes up to 60 s). The queue stays, and so does its dead-letter queue and
// what it holds; receipt handles of the messages purged no longer extend or
// delete anything (ErrReceiptHandleExpired on a FIFO queue, success that
// deletes nothing on a standard one, as after any delete).
//
// Errors: one wrapping sqsloop.ErrQueueNotFound when it does not exist;
// sqsloop.ErrMailboxClosed after Close; ctx's error; or the database's.
func (s *Store) PurgeQueue(ctx context.Context, name string) (int, error) {
	if err := s.check("PurgeQueue"); err != nil {
		return 0, err
	}
	n, err := s.d.PurgeQueue(ctx, name)
	if err != nil {
		return 0, s.callError(ctx, "purge queue", name, err)
	}
	return n, nil
}

// Close deletes the receiver rows of its Mailboxes that are still open
// (with a 5 s budget; a row it fails to delete shows its receiver dead
// until a sweep deletes it), adds the acks it counted to the database's
// tally (LeaseStats; 5 s more at most), stops the Store's listener,
// waiting for it, and closes what its database package opened (not a pool given to
// postgres.New). Long polls of its Mailboxes return
// sqsloop.ErrMailboxClosed at once, and so does every later call. Close is
// idempotent; it returns the database's error from closing, if any.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	if s.listen.cancel != nil {
		s.listen.cancel()
	}
	receivers := s.receivers
	s.receivers = nil
	s.mu.Unlock()
	s.registering.Wait()
	if len(receivers) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for id := range receivers {
			_ = s.d.RemoveReceiver(ctx, id)
		}
		cancel()
	}
	s.acks.close()
	s.listen.wg.Wait()
	return s.d.Close()
}

// track records that a Mailbox writes the receiver row id, for Close to
// delete, and counts the write in s.registering (the caller calls Done when
// it is over); false once the Store is closed: the row is not to be
// written.
func (s *Store) track(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.receivers == nil {
		s.receivers = make(map[string]bool)
	}
	s.receivers[id] = true
	s.registering.Add(1)
	return true
}

// untrack forgets the receiver row id, which its Mailbox deletes itself;
// false once the Store is closed (its Close deleted the row, or is deleting
// it).
func (s *Store) untrack(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.receivers, id)
	return !s.closed
}

// check fails with sqsloop.ErrMailboxClosed once the Store is closed.
func (s *Store) check(op string) error {
	select {
	case <-s.done:
		return fmt.Errorf("sqlmailbox: %s: store closed: %w", op, sqsloop.ErrMailboxClosed)
	default:
		return nil
	}
}

// callError wraps a driver's error for the call op on queue: ctx's error
// when ctx ended (the driver's error may only say the connection was
// interrupted), sqsloop.ErrMailboxClosed when the Store was closed under
// the call.
func (s *Store) callError(ctx context.Context, op, queue string, err error) error {
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("sqlmailbox: %s %q: %w (%v)", op, queue, ctx.Err(), err)
	case s.check(op) != nil && !errors.Is(err, sqsloop.ErrQueueNotFound):
		return fmt.Errorf("sqlmailbox: %s %q: %w (%v)", op, queue, sqsloop.ErrMailboxClosed, err)
	default:
		return fmt.Errorf("sqlmailbox: %s %q on %s: %w", op, queue, s.d.Dialect(), err)
	}
}

// startListening starts the listener goroutine once, if the driver is a
// Notifier: from then on, messages made visible by other processes wake
// this Store's long polls at once.
func (s *Store) startListening() {
	n, ok := s.d.(driver.Notifier)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listen.started || s.closed {
		return
	}
	s.listen.started = true
	ctx, cancel := context.WithCancel(context.Background())
	s.listen.cancel = cancel
	s.listen.wg.Go(func() { s.listenLoop(ctx, n) })
}

// listenLoop runs n.Listen until ctx ends, again after each failure, waiting
// from 100 ms doubling to 5 s between tries. After each (re)start every long
// poll looks again, since a wake-up may have been missed while it was down.
func (s *Store) listenLoop(ctx context.Context, n driver.Notifier) {
	const first, most = 100 * time.Millisecond, 5 * time.Second
	pause := first
	for ctx.Err() == nil {
		began := time.Now()
		_ = n.Listen(ctx, s.hub.wakeAll, s.hub.wake)
		if time.Since(began) > most {
			pause = first // it listened for a while: a new failure, not the same one
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, most)
	}
}
