package producer

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/rules"
)

// dispatch is the Producer's one loop: it forms batches and starts their
// calls (at most Config.MaxCalls at once), and returns once Close began and
// nothing is left, after every call it started has returned.
func (p *Producer) dispatch() {
	defer close(p.stopped)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		p.mu.Lock()
		now := time.Now()
		if p.aborted != nil {
			for _, it := range p.q.takeAll() {
				p.conclude(it, Result{}, p.aborted)
			}
		}
		p.q.dueRetries(now)
		for p.calls < p.cfg.MaxCalls {
			batch, many := p.q.take(now, p.cfg.Linger, p.closing, p.calls > 0, p.lastReturn, p.bulk != nil)
			if batch == nil {
				break
			}
			for _, it := range batch {
				it.onWire = true
				it.attempts++
				if it.attempts > 1 {
					p.st.Retries++
				}
			}
			p.calls++
			go p.send(batch, many)
		}
		if p.closing && p.pending == 0 && p.calls == 0 {
			p.mu.Unlock()
			return
		}
		at, ok := p.q.next(p.cfg.Linger, p.calls > 0, p.lastReturn)
		if p.calls >= p.cfg.MaxCalls {
			ok = false // a call's return pokes
		}
		p.mu.Unlock()
		if ok {
			timer.Reset(time.Until(at))
		}
		select {
		case <-p.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// send makes one SendMessageBatch call for batch (a SendBulk call when
// many) and settles its messages.
func (p *Producer) send(batch []*item, many bool) {
	msgs := make([]sqsloop.OutgoingMessage, len(batch))
	for i, it := range batch {
		msgs[i] = it.msg
	}
	ctx, cancel := context.WithTimeout(p.callCtx, CallTimeout)
	var results []sqsloop.SendResult
	var err error
	if many {
		results, err = p.bulk.SendBulk(ctx, msgs)
	} else {
		results, err = p.mb.Send(ctx, msgs)
	}
	cancel()

	p.mu.Lock()
	defer p.poke()
	defer p.mu.Unlock()
	now := time.Now()
	p.calls--
	p.lastReturn = now
	p.st.Calls++
	p.st.Entries += int64(len(batch))
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("producer: the mailbox gave %d results for %d messages", len(results), len(batch))
	}
	// The call's retries share one jitter, so that the messages it failed
	// go again together (with the others of their attempt).
	jitter := 0.8 + 0.4*rand.Float64()
	switch {
	case err != nil && len(batch) > 1 && errors.Is(err, sqsloop.ErrInvalidArgument) && p.aborted == nil:
		// Refused whole as malformed (a server whose batch limit is
		// smaller than SQS's): each message on its own, not counted as an
		// attempt.
		p.st.Splits++
		var again []*item
		for _, it := range batch {
			it.onWire = false
			if it.dead {
				p.finish(it, it.err) // not sent
				continue
			}
			it.attempts--
			it.alone = true
			again = append(again, it)
		}
		p.q.pushFront(again)
	case err != nil:
		for _, it := range batch {
			p.failed(it, err, now, jitter)
		}
	default:
		for i, it := range batch {
			if r := results[i]; r.Err != nil {
				p.failed(it, r.Err, now, jitter)
			} else {
				p.sent(it, Result{MessageID: r.MessageID, SequenceNumber: r.SequenceNumber})
			}
		}
	}
}

// sent settles a message the queue accepted.
func (p *Producer) sent(it *item, res Result) {
	it.onWire = false
	p.st.Sent++
	if it.dead {
		p.finish(it, nil) // its Send returned already, with its context's error
		return
	}
	p.conclude(it, res, nil)
}

// failed settles, or schedules for a retry, a message whose attempt failed
// with err; jitter (0.8–1.2) scales its back-off.
func (p *Producer) failed(it *item, err error, now time.Time, jitter float64) {
	it.onWire = false
	switch {
	case it.dead:
		p.finish(it, it.err) // not sent, or not known to be
	case rules.Permanent(err): // the producer fails a denied send at once, unlike a receive loop (see rules.Fault)
		p.conclude(it, Result{}, err)
	case p.aborted != nil:
		p.conclude(it, Result{}, fmt.Errorf("%w; the last attempt: %w", p.aborted, err))
	case it.attempts >= p.cfg.MaxAttempts:
		p.conclude(it, Result{}, fmt.Errorf("producer: not sent after %d attempts (the last failed, its message may have been applied): %w", it.attempts, err))
	default:
		it.due = now.Add(time.Duration(float64(backoff(it.attempts)) * jitter))
		heap.Push(&p.q.retry, it)
	}
}

// backoff is the delay before attempt n+1: MinRetryDelay doubling to
// MaxRetryDelay.
func backoff(n int) time.Duration {
	if n-1 >= 6 {
		return MaxRetryDelay
	}
	return min(MinRetryDelay<<(n-1), MaxRetryDelay)
}

// withdraw ends a message whose context ended before it was sent: a queued
// one is never sent, and lets go of its room and body at once; one on the
// wire is not retried.
func (p *Producer) withdraw(it *item, ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if it.dead {
		return
	}
	var err error
	switch {
	case it.onWire:
		err = fmt.Errorf("producer: a call carrying the message is under way and may still send it, it will not be retried: %w", context.Cause(ctx))
	case it.attempts > 0:
		err = fmt.Errorf("producer: not sent after %d attempts (an answer lost may hide one that was applied): %w", it.attempts, context.Cause(ctx))
	default:
		err = fmt.Errorf("producer: not sent: %w", context.Cause(ctx))
	}
	p.notify(it, Result{}, err)
	if !it.onWire {
		p.finish(it, err)
		// Left in its list as a shell, skipped when met; the lists are
		// compacted once the shells outnumber the messages pending.
		if p.q.shells++; p.q.shells > p.pending+minShells {
			p.q.compact()
		}
	}
	p.poke()
}

// conclude tells the message's sender its outcome and forgets it.
func (p *Producer) conclude(it *item, res Result, err error) {
	p.notify(it, res, err)
	p.finish(it, err)
}

// notify gives the message's Send or Pending its outcome, once, and marks
// it dead.
func (p *Producer) notify(it *item, res Result, err error) {
	if it.dead {
		return
	}
	it.dead = true
	it.res, it.err = res, err
	if it.stopWatch != nil {
		it.stopWatch()
	}
	close(it.done)
	if err != nil {
		p.st.Failed++
		if p.closing {
			p.closeFailed++
			if p.closeFirst == nil {
				p.closeFirst = err
			}
		}
	}
}

// finish releases a message's room and body, and lets its group go on;
// a message of an ordered group that ended unsent (unsent: why; or on the
// wire when its call failed, so maybe sent) pauses its group instead.
func (p *Producer) finish(it *item, unsent error) {
	p.release(it)
	switch {
	case it.group == "":
	case unsent != nil:
		p.pause(it, unsent)
	default:
		p.q.advance(it)
	}
}

// release gives back a finished message's room, and lets go of its body
// (its Pending may outlive it).
func (p *Producer) release(it *item) {
	p.pending--
	p.pendingBytes -= it.size
	it.msg = sqsloop.OutgoingMessage{}
	p.wakeWaiters()
}

// pause pauses the message group of it, which ended unsent for cause: the
// group's messages behind it fail with ErrGroupPaused, and so do later
// ones (admit) until ResumeGroup, so that none arrives after a gap.
func (p *Producer) pause(it *item, cause error) {
	if _, ok := p.paused[it.group]; !ok {
		if p.paused == nil {
			p.paused = map[string]error{}
		}
		p.paused[it.group] = cause
	}
	g := p.q.groups[it.group]
	if g == nil {
		return
	}
	var behind []*item
	if g.head == it {
		behind = g.waiting
		delete(p.q.groups, it.group)
	} else if i := slices.Index(g.waiting, it); i >= 0 {
		behind = g.waiting[i+1:]
		g.waiting = slices.Clip(g.waiting[:i])
	}
	err := pausedError(it.group, cause)
	for _, w := range behind {
		if !w.dead {
			p.notify(w, Result{}, err)
			p.release(w)
		}
	}
}

// pausedError is the error of a message of group, paused because an
// earlier message of it ended unsent for cause.
func pausedError(group string, cause error) error {
	return fmt.Errorf("producer: not sent: message group %q is paused: an earlier message of it was not sent (%v); ResumeGroup(%q) to send to it again: %w",
		group, cause, group, ErrGroupPaused)
}
