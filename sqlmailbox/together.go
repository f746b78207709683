package sqlmailbox

import (
	"context"
	"errors"
	"sync"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// maxTogether bounds the entries of the calls a together runs in one go:
// 100 (ten batches of SQS's 10; driver.MaxReceive).
const maxTogether = driver.MaxReceive

// together runs calls of one kind on one Mailbox (receives with one
// visibility timeout, deletes) together: a call that comes while none of
// its kind is on the wire runs at once; calls that come while one is wait
// for it, and then go in one statement, up to maxTogether entries, the
// first of them running it in its own goroutine for them all (no goroutine
// is started). A statement's cost is mostly per statement at the sizes
// SQS's batches have (its round trip, its commit, the executor's start):
// a consumer's 32 receive loops, and its lease owner's 32 ack calls, cost
// the database a statement per hundred messages rather than per ten when
// they come at once, and cost nothing when they come one at a time. Safe
// for concurrent use; the zero value is ready.
type together[In, Out any] struct {
	mu      sync.Mutex
	busy    bool
	waiting []*member[In, Out]
}

// member is one call of a together.
type member[In, Out any] struct {
	in    In
	n     int           // its entries
	out   Out           // its result, once done is closed
	err   error         // its error, once done is closed
	again bool          // its statement's runner gave up (its context ended): run again
	done  chan struct{} // closed when out and err are set
	lead  chan struct{} // closed when it is to run the next statement
}

// errGaveUp is the error a call gets when the statement it was part of
// ended because its runner's context did: not its own failure.
var errGaveUp = errors.New("sqlmailbox: the call that ran the statement gave up")

// do runs in (n entries) together with the calls that wait, through run,
// which gets the inputs of the calls of one statement, in order, and
// returns their outputs (one per input) or an error for them all. It
// returns this call's output, or ctx's error when ctx ends first: if its
// statement was under way then, it may still have been applied (as when
// a call's context ends while its statement runs).
func (t *together[In, Out]) do(ctx context.Context, in In, n int, run func(ctx context.Context, ins []In) ([]Out, error)) (Out, error) {
	me := &member[In, Out]{in: in, n: n, done: make(chan struct{}), lead: make(chan struct{})}
	for {
		t.mu.Lock()
		if !t.busy {
			t.busy = true
			t.mu.Unlock()
		} else {
			t.waiting = append(t.waiting, me)
			t.mu.Unlock()
			select {
			case <-me.done:
				if me.again {
					me.reset()
					continue
				}
				return me.out, me.err
			case <-me.lead:
			case <-ctx.Done():
				if t.withdraw(me) {
					var zero Out
					return zero, ctx.Err()
				}
				select {
				case <-me.lead: // it was to lead: let another
					t.handOn()
				default: // its statement is under way: its result is not waited for
				}
				var zero Out
				return zero, ctx.Err()
			}
		}
		return t.lead(ctx, me, run)
	}
}

// reset makes me ready to wait again.
func (m *member[In, Out]) reset() {
	var zero Out
	m.out, m.err, m.again = zero, nil, false
	m.done, m.lead = make(chan struct{}), make(chan struct{})
}

// lead runs the statement of me and the calls waiting behind it, gives
// each its result, and hands the next statement to the first call left
// waiting.
func (t *together[In, Out]) lead(ctx context.Context, me *member[In, Out], run func(ctx context.Context, ins []In) ([]Out, error)) (Out, error) {
	t.mu.Lock()
	batch, entries := []*member[In, Out]{me}, me.n
	rest := t.waiting[:0]
	for i, w := range t.waiting {
		if entries+w.n > maxTogether {
			rest = append(rest, t.waiting[i:]...)
			break
		}
		batch, entries = append(batch, w), entries+w.n
	}
	t.waiting = rest
	t.mu.Unlock()

	ins := make([]In, len(batch))
	for i, m := range batch {
		ins[i] = m.in
	}
	outs, err := run(ctx, ins)
	gaveUp := err != nil && ctx.Err() != nil
	for i, m := range batch[1:] {
		switch {
		case gaveUp:
			m.again = true
		case err != nil:
			m.err = err
		default:
			m.out = outs[i+1]
		}
		close(m.done)
	}
	t.handOn()
	if err != nil {
		var zero Out
		return zero, err
	}
	return outs[0], nil
}

// handOn lets the first call waiting run the next statement, or marks
// none on the wire.
func (t *together[In, Out]) handOn() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.waiting) == 0 {
		t.busy = false
		return
	}
	next := t.waiting[0]
	t.waiting = t.waiting[1:]
	close(next.lead)
}

// withdraw takes me out of the calls waiting, if it is still there.
func (t *together[In, Out]) withdraw(me *member[In, Out]) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, w := range t.waiting {
		if w == me {
			t.waiting = append(t.waiting[:i:i], t.waiting[i+1:]...)
			return true
		}
	}
	return false
}
