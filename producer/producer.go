package producer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

// ErrClosed is returned by Send and Enqueue after Close began, and wrapped
// by the error of every message that Close's context ended before it was
// sent (errors.Is).
var ErrClosed = errors.New("producer: closed")

// ErrGroupPaused is wrapped by the error of a message of an ordered message
// group (on a FIFO queue, or a queue whose type the Producer cannot tell)
// that is not sent because an earlier message of its group was not: that
// one failed for good, ran out of attempts, or was withdrawn when its
// context ended (or ended while a call carrying it failed, so that it may
// have been sent or not). Sending the later ones would deliver them after
// a gap, the group's order broken silently; instead the Producer pauses
// the group: the messages waiting behind the one that failed fail with
// ErrGroupPaused, and so does every Send and Enqueue to the group, until
// ResumeGroup. (Pub/Sub's ordering keys do the same: ResumePublish.) The
// error names the group and the failure that paused it.
var ErrGroupPaused = errors.New("producer: message group paused")

// Result is the outcome of a message sent.
type Result struct {
	// MessageID is the ID the queue assigned (on a FIFO queue, for a send
	// dropped by deduplication, the first message's).
	MessageID string
	// SequenceNumber is the FIFO sequence number; empty on a standard
	// queue, and from a Mailbox that does not report it.
	SequenceNumber string
}

// Producer sends messages to one Mailbox in batches (see the package doc).
// Build it with New and Close it when done. All methods are safe for
// concurrent use.
type Producer struct {
	mb   sqsloop.Mailbox
	bulk sqsloop.BulkSender // mb, when it is one
	cfg  Config

	wake    chan struct{} // buffered 1: something for the dispatcher to do
	stopped chan struct{} // closed when the dispatcher has returned
	callCtx context.Context
	abort   context.CancelFunc // cancels calls on the wire when Close's context ends
	order   orderProbe

	mu           sync.Mutex
	q            queue
	pending      int           // messages accepted, not finished
	pendingBytes int           // their sizes
	room         chan struct{} // admit's waiters wait on it (nil when none): closed when pending shrinks or Close begins
	calls        int           // SendMessageBatch calls on the wire
	lastReturn   time.Time     // when the last of them returned
	started      bool          // the dispatcher was started
	closing      bool
	aborted      error            // set when Close's context ended: fails what is left
	closeFailed  int              // messages failed since Close began
	closeFirst   error            // the first of their errors
	paused       map[string]error // message groups paused (pause), with why; nil until one is
	st           Stats
}

// Stats counts a Producer's work since New. Every field counts messages
// unless it says otherwise.
type Stats struct {
	// Sent is how many messages the queue accepted; Failed how many Sends
	// returned an error (invalid, refused, out of attempts, context ended,
	// closed).
	Sent, Failed int64
	// Calls is how many SendMessageBatch calls (and SendBulk calls, to a
	// sqsloop.BulkSender) were made, and Entries how many entries they
	// carried in all (Entries/Calls is the mean batch).
	Calls, Entries int64
	// Retries is how many entries were sent again after a transient
	// failure; Splits how many whole calls refused as malformed were split
	// into calls of one entry.
	Retries, Splits int64
	// Pending is how many messages are accepted and not yet sent or failed,
	// now.
	Pending int
	// PausedGroups is how many message groups are paused now
	// (ErrGroupPaused), waiting for ResumeGroup.
	PausedGroups int
}

// New returns a Producer of mb. It starts no goroutine until the first
// message. Errors: cfg.Validate's, and one wrapping
// sqsloop.ErrInvalidArgument for a nil mb.
func New(mb sqsloop.Mailbox, cfg Config) (*Producer, error) {
	var errs []error
	if mb == nil {
		errs = append(errs, fmt.Errorf("producer: mailbox: must not be nil: %w", sqsloop.ErrInvalidArgument))
	}
	errs = append(errs, cfg.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	callCtx, abort := context.WithCancel(context.Background())
	bulk, _ := mb.(sqsloop.BulkSender)
	return &Producer{
		mb:      mb,
		bulk:    bulk,
		cfg:     cfg.withDefaults(),
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		callCtx: callCtx,
		abort:   abort,
		q:       newQueue(),
	}, nil
}

// Pending is a message Enqueue accepted: Wait for its outcome.
type Pending struct {
	it *item
}

// Done is closed once the message is sent or has failed.
func (p *Pending) Done() <-chan struct{} { return p.it.done }

// Wait waits for the message's outcome, or for ctx to end (returning ctx's
// error; the message carries on, bound by the context it was enqueued
// with). The outcome is Send's.
func (p *Pending) Wait(ctx context.Context) (Result, error) {
	select {
	case <-p.it.done:
		return p.it.res, p.it.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// Send sends m, batched with other messages, and returns its result: the
// message ID (and FIFO sequence number), or an error. It blocks for the
// linger window and a round trip at least, and while there is no room for
// m (back-pressure). Send batches the messages of many goroutines (a
// server's request handlers, each sending one); in a loop in one goroutine
// it makes one SendMessageBatch call per message, each waiting for the one
// before: to send many, use SendAll (or SendAllJSON, or Enqueue each and
// Wait), which costs a tenth of the calls and a hundredth of the time (see
// the package doc). Errors:
//
//   - the request rules' error for an m no queue accepts
//     (sqsloop.ValidateSend: an empty body, one over 1 MiB, naming the size,
//     more than 10 attributes, …), wrapping sqsloop.ErrInvalidArgument;
//     nothing is sent;
//   - the queue's permanent refusal (ErrInvalidArgument for its own rules —
//     a FIFO queue without a MessageGroupID, a message over its
//     MaximumMessageSize —, ErrAccessDenied, ErrQueueNotFound,
//     ErrMailboxClosed), at once;
//   - the last transient failure after Config.MaxAttempts attempts; an
//     answer lost on the last attempt means the message may have been sent
//     all the same (at least once);
//   - ctx's error, wrapped, when ctx ends first: if the message was not yet
//     on the wire it is withdrawn and never sent; if a call carrying it is
//     under way, that call may still send it, but no retry will;
//   - ErrClosed after Close began, or when Close's context ended before m
//     was sent;
//   - ErrGroupPaused when m's message group (on a FIFO queue) is paused: an
//     earlier message of it was not sent, until ResumeGroup.
func (p *Producer) Send(ctx context.Context, m sqsloop.OutgoingMessage) (Result, error) {
	pd, err := p.Enqueue(ctx, m)
	if err != nil {
		return Result{}, err
	}
	<-pd.it.done // ctx's end settles it: see Enqueue
	return pd.it.res, pd.it.err
}

// Enqueue accepts m for sending and returns at once (once there is room:
// it waits like Send, until ctx ends) with a Pending to Wait on; one
// goroutine can keep many messages on the wire this way. The message's
// fate is bound to ctx as for Send: when ctx ends before it is sent, it is
// withdrawn (or, on the wire, not retried) and its Pending ends with ctx's
// error. Errors of Enqueue itself: the request rules', ErrClosed,
// ErrGroupPaused for a paused group, and ctx's while waiting for room (or,
// at the first message with a MessageGroupID, for the queue to say its
// type); the rest come through Pending.
func (p *Producer) Enqueue(ctx context.Context, m sqsloop.OutgoingMessage) (*Pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("producer: not sent: %w", err)
	}
	if hook := p.cfg.BeforeSend; hook != nil {
		m.MessageAttributes = maps.Clone(m.MessageAttributes)
		hook(ctx, &m)
	}
	if errs, err := sqsloop.ValidateSend([]sqsloop.OutgoingMessage{m}); err != nil || errs[0] != nil {
		return nil, fmt.Errorf("producer: not sent: %w", errors.Join(err, errs[0]))
	}
	if m.MessageGroupID != "" {
		if err := p.order.probe(ctx, p.mb); err != nil {
			return nil, fmt.Errorf("producer: not sent (asking the queue its type, for message group %q): %w", m.MessageGroupID, err)
		}
	}
	it := &item{msg: m, size: m.Size(), done: make(chan struct{})}
	if m.MessageGroupID != "" && p.order.ordered() {
		it.group = m.MessageGroupID
	}
	if err := p.admit(ctx, it); err != nil {
		return nil, err
	}
	p.poke()
	return &Pending{it: it}, nil
}

// admit waits for room for it and adds it to the queue.
func (p *Producer) admit(ctx context.Context, it *item) error {
	for {
		p.mu.Lock()
		if p.closing {
			p.mu.Unlock()
			return fmt.Errorf("producer: not sent: %w", ErrClosed)
		}
		if cause, ok := p.paused[it.group]; ok && it.group != "" {
			p.mu.Unlock()
			return pausedError(it.group, cause)
		}
		if p.pending == 0 || (p.pending < p.cfg.MaxPendingMessages && p.pendingBytes+it.size <= p.cfg.MaxPendingBytes) {
			p.pending++
			p.pendingBytes += it.size
			if !p.started {
				p.started = true
				go p.dispatch()
			}
			// Its own goroutine runs withdraw, which takes p.mu.
			it.stopWatch = context.AfterFunc(ctx, func() { p.withdraw(it, ctx) })
			p.q.add(it, time.Now())
			p.mu.Unlock()
			return nil
		}
		if p.room == nil {
			p.room = make(chan struct{})
		}
		room := p.room
		p.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return fmt.Errorf("producer: not sent (waiting for room: %d messages pending): %w", p.Stats().Pending, ctx.Err())
		}
	}
}

// wakeWaiters lets admit's waiters, if any, look again. Called with mu
// held.
func (p *Producer) wakeWaiters() {
	if p.room != nil {
		close(p.room)
		p.room = nil
	}
}

// poke tells the dispatcher to look again.
func (p *Producer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats returns the Producer's counters. Safe for concurrent use.
func (p *Producer) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.st
	st.Pending = p.pending
	st.PausedGroups = len(p.paused)
	return st
}

// ResumeGroup lets Send and Enqueue send to message group again after a
// failure paused it (ErrGroupPaused): call it once the cause is dealt with
// and what must be resent is known. The group's later messages then go in
// the order they are given. It does nothing to a group that is not
// paused. Safe for concurrent use.
func (p *Producer) ResumeGroup(group string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.paused, group)
}

// Close stops intake (Send and Enqueue return ErrClosed), sends what is
// pending at once, without lingering, retrying as usual, and waits until
// every message is sent or has failed. If ctx ends first, every message
// not yet sent fails with an error wrapping ErrClosed and ctx's error,
// calls on the wire are cancelled (their messages may have been sent), and
// Close waits for them to return.
//
// It returns nil when every message pending at Close was sent; else an
// error wrapping ErrClosed that counts the messages that failed after Close
// began and gives the first of their errors (each Send or Pending has its
// own), wrapping ctx's error when ctx ended first. Close is idempotent:
// later calls wait the same way and return the same error. No goroutine of
// the Producer outlives it.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closing {
		p.closing = true
		p.wakeWaiters() // to return ErrClosed
	}
	started := p.started
	p.mu.Unlock()
	if started {
		p.poke()
		select {
		case <-p.stopped:
		case <-ctx.Done():
			p.mu.Lock()
			if p.aborted == nil {
				p.aborted = fmt.Errorf("producer: not sent by Close's deadline: %w: %w", ErrClosed, ctx.Err())
			}
			p.mu.Unlock()
			p.abort()
			p.poke()
			<-p.stopped
		}
	}
	p.abort()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closeFailed == 0 {
		return nil
	}
	if p.aborted != nil {
		return fmt.Errorf("producer: Close: %d messages not sent: %w (first: %w)", p.closeFailed, p.aborted, p.closeFirst)
	}
	return fmt.Errorf("producer: Close: %d messages not sent (first: %w): %w", p.closeFailed, p.closeFirst, ErrClosed)
}
