// Package leasepage is a live page of a consumer's leases, to mount on a
// debug server like net/http/pprof's pages:
//
//	page := leasepage.New(leasepage.Options{})
//	c, err := consumer.New(mb, handler, consumer.Config{Observer: page})
//	http.Handle("/debug/sqsloop", page)
//
// The page lists the messages in flight (waiting for a handler, running,
// or running with their lease lost): message ID, receive count, age, time
// since the last beat, lease deadline, extensions so far, and FIFO message
// group; and draws each lease as a bar from its receive to its deadline
// with its beats marked (inline SVG), so that a stuck handler (a bar with
// no recent beat, running out) stands out. Below: the handler runs by
// outcome, lost leases by reason, the receive-ahead depth, the drain's
// state, the extension the lease owner asks for (its adaptive choice and
// the 99th percentile of beat gaps it follows, see visibility.Config), the
// queue's counts as the consumer last read them (visible, in flight, the
// dead-letter queue's depth) with the scaling signal (the backlog per
// consumer and the recommended consumer count, see package consumer), and
// the last errors. It is plain HTML that reloads itself (no JavaScript);
// ?format=json gives the same as JSON for scripts.
//
// It never shows a message body or a receipt handle (error texts have the
// receipt handle of their message replaced). Beats are those the page saw:
// a heartbeat is stamped when it is read (by the lease owner at its looks,
// and by the page at each extension and each view), so a beat shows at the
// time it was first noticed.
package leasepage

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// Defaults for Options.
const (
	// DefaultRefresh is how often the HTML page reloads itself: 2 s.
	DefaultRefresh = 2 * time.Second
	// maxBeats bounds the beats kept per lease (the latest ones).
	maxBeats = 64
	// maxErrors is how many of the last errors the page keeps.
	maxErrors = 10
)

// Options tune a Page. The zero Options are valid.
type Options struct {
	// Title heads the page. Default "sqsloop leases".
	Title string
	// Refresh is how often the HTML page reloads itself, in whole seconds
	// (HTML's refresh counts seconds): rounded up, so 1 s at least; 0 (or
	// less) means DefaultRefresh (2 s).
	Refresh time.Duration
}

// Page keeps what the consumer reports (it is a sqsloop.Observer: give it
// to consumer.Config.Observer, alone or with sqsloop.Observers) and serves
// it (it is an http.Handler). Safe for concurrent use.
type Page struct {
	sqsloop.NopObserver
	opts Options
	now  func() time.Time

	mu                                        sync.Mutex
	leases                                    map[*sqsloop.Message]*lease
	outcomes                                  map[string]int64 // by sqsloop.ProcessEvent.Outcome
	lost                                      map[string]int64 // by sqsloop.LeaseLostEvent.Reason
	receives, receiveErrors, extensions, late int64
	ahead, held                               int
	extension, beatGap                        time.Duration       // the lease owner's choice, as the last batch call reported it
	queue                                     *sqsloop.QueueEvent // the last successful read of the queue's counts
	drain                                     *sqsloop.DrainEvent
	drainAt                                   time.Time
	errs                                      []errorNote
}

// lease is one message in flight, as the page knows it.
type lease struct {
	id, group    string
	receiveCount int
	receivedAt   time.Time
	deadline     time.Time
	extensions   int
	started      time.Time // zero while waiting for a handler
	hb           *heartbeat.Heartbeat
	beats        []time.Time
	lost         string // the reason, once lost
}

// errorNote is one of the last errors.
type errorNote struct {
	at   time.Time
	what string
	err  string
}

// New returns an empty Page.
func New(opts Options) *Page {
	if opts.Title == "" {
		opts.Title = "sqsloop leases"
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRefresh
	}
	return &Page{opts: opts, now: time.Now, leases: map[*sqsloop.Message]*lease{},
		outcomes: map[string]int64{}, lost: map[string]int64{}}
}

// Received adds the messages received as waiting for a handler.
func (p *Page) Received(_ context.Context, e sqsloop.ReceiveEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.receives++
	p.ahead, p.held = e.Ahead, e.Held
	if e.Err != nil {
		p.receiveErrors++
		p.note("receive", e.Err, "")
	}
	for _, m := range e.Messages {
		p.leases[m] = &lease{id: m.ID, group: m.MessageGroupID, receiveCount: m.ReceiveCount,
			receivedAt: m.ReceivedAt, deadline: m.ReceivedAt.Add(m.VisibilityTimeout)}
	}
}

// QueueRead keeps the queue's counts and the scaling signal of a read
// that succeeded; a failed one is among the last errors.
func (p *Page) QueueRead(e sqsloop.QueueEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Err != nil {
		p.note("queue read", e.Err, "")
		return
	}
	p.queue = &e
}

// ProcessStart marks m's lease as running, beaten by the heartbeat in ctx.
func (p *Page) ProcessStart(ctx context.Context, m *sqsloop.Message) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.leases[m]
	if l == nil { // a runner that reports no receive
		l = &lease{id: m.ID, group: m.MessageGroupID, receiveCount: m.ReceiveCount,
			receivedAt: m.ReceivedAt, deadline: m.ReceivedAt.Add(m.VisibilityTimeout)}
		p.leases[m] = l
	}
	l.started, l.hb = p.now(), heartbeat.FromContext(ctx)
	return ctx
}

// ProcessEnd counts the outcome; m is no longer in flight.
func (p *Page) ProcessEnd(_ context.Context, m *sqsloop.Message, e sqsloop.ProcessEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outcomes[e.Outcome]++
	if e.Err != nil && e.Outcome != sqsloop.OutcomeAcked {
		p.note("handler of "+m.ID+" ("+e.Outcome+")", e.Err, m.ReceiptHandle)
	}
	delete(p.leases, m)
}

// Settled records extensions (a new deadline, a beat seen) and drops
// given-back messages that never started.
func (p *Page) Settled(e sqsloop.SettleEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = e.Held
	if e.Extension > 0 {
		p.extension, p.beatGap = e.Extension, e.BeatGap
	}
	if e.Err != nil { // every entry failed with it: one note
		handles := make([]string, len(e.Entries))
		for i, en := range e.Entries {
			handles[i] = en.Message.ReceiptHandle
		}
		p.note(fmt.Sprintf("%s of %d messages", e.Op, len(e.Entries)), e.Err, handles...)
	}
	for _, en := range e.Entries {
		l := p.leases[en.Message]
		if en.Err != nil && e.Err == nil {
			p.note(e.Op+" ("+en.Kind+") of "+en.Message.ID, en.Err, en.Message.ReceiptHandle)
		}
		switch {
		case l == nil:
		case en.Kind == sqsloop.KindExtend:
			p.extensions++
			if en.Late {
				p.late++
			}
			if en.Err == nil {
				l.extensions++
				l.deadline = e.Start.Add(en.Timeout)
			}
			l.sawBeat()
		case l.started.IsZero():
			delete(p.leases, en.Message) // given back before it started
		}
	}
}

// LeaseLost marks a running lease lost (it stays until its handler
// returns) and drops a waiting one.
func (p *Page) LeaseLost(m *sqsloop.Message, e sqsloop.LeaseLostEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lost[e.Reason]++
	p.note("lease of "+m.ID+" lost ("+e.Reason+")", e.Err, m.ReceiptHandle)
	l := p.leases[m]
	switch {
	case l == nil:
	case l.started.IsZero():
		delete(p.leases, m)
	default:
		l.lost = e.Reason
	}
}

// Drain records the drain's phase; once it ended, nothing waits any more.
func (p *Page) Drain(e sqsloop.DrainEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drain, p.drainAt = &e, p.now()
	if e.Phase == sqsloop.DrainEnded || e.Phase == sqsloop.DrainInterrupted {
		for m, l := range p.leases {
			if l.started.IsZero() {
				delete(p.leases, m)
			}
		}
	}
}

// sawBeat records l's last beat if it is new.
func (l *lease) sawBeat() {
	if l.hb == nil {
		return
	}
	b := l.hb.LastBeat()
	if b.IsZero() || (len(l.beats) > 0 && !b.After(l.beats[len(l.beats)-1])) {
		return
	}
	if len(l.beats) == maxBeats {
		l.beats = slices.Delete(l.beats, 0, 1)
	}
	l.beats = append(l.beats, b)
}

// note keeps err among the last errors, with the receipt handles hidden.
func (p *Page) note(what string, err error, handles ...string) {
	text := err.Error()
	for _, h := range handles {
		if h != "" {
			text = strings.ReplaceAll(text, h, "[receipt handle]")
		}
	}
	if len(p.errs) == maxErrors {
		p.errs = slices.Delete(p.errs, 0, 1)
	}
	p.errs = append(p.errs, errorNote{at: p.now(), what: what, err: text})
}

// ServeHTTP serves the page: HTML, or JSON with ?format=json (or an Accept
// header asking for application/json). GET and HEAD only.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	v := p.view()
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Query().Get("format") == "json" || strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, v)
		return
	}
	writeHTML(w, v, p.opts)
}
