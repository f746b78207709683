// Package leaselength measures what a consumer's leases cost and how soon
// a stuck handler loses one (issue 18, item 7): ChangeMessageVisibilityBatch
// calls per message-hour of healthy handlers, and the time from a stuck
// handler's last beat to its message being received again, for jobs of
// 10 s, 2 min and 20 min beating every 1 s or every 30 s, with fixed
// extensions and with the lease owner's adaptive one.
//
// Run drives one consumer (package consumer, as users run it) over any
// Mailbox through three waves of n messages on a queue whose visibility
// timeout is QueueVisibilityTimeout:
//
//  1. warm-up: 2n healthy jobs (each beats every Beat for Job, then returns
//     nil); an adaptive lease owner learns the queue's gaps from them;
//  2. measured: n healthy jobs: the extensions and their batch calls are
//     the consumer's own counts (Stats) over the wave, the message-hours the
//     handlers' run time; a message received again (its lease lapsed
//     although its handler beat) counts as a healthy lease lost;
//  3. stuck: n jobs that beat until Job/2 + i × min(Beat, Job/2)/n
//     (i = 0…n-1, so that the last beats fall at every phase of the lease
//     owner's looks) and then hang, until their message is received again:
//     the lapse delay is the receive time of that second delivery minus the
//     handler's last beat.
//
// The messages of a wave arrive together and run at once (Concurrency
// 2n), so their extensions share batch calls: ExtensionCalls is what n
// messages in flight cost, Extensions what a message alone would (one
// call per extension). TestLeaseTable runs every case on memmailbox in
// virtual time (testing/synctest), in under a second, and prints the table
// with -v:
//
//	go test -run TestLeaseTable -v ./leaselength
//
// Run takes any Mailbox, so the same cases can run on an SQS server
// (sqsmailbox), in real time: hours for the 20 min jobs.
package leaselength

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/visibility"
)

// QueueVisibilityTimeout is the visibility timeout of the queue the cases
// run on: SQS's default, 30 s.
const QueueVisibilityTimeout = 30 * time.Second

// Setting is a consumer configuration under measure.
type Setting struct {
	// Name names the setting in the table.
	Name string
	// Config is the consumer's (Concurrency, Logger and Observer are set
	// by Run).
	Config consumer.Config
}

// Settings are the configurations compared: the fixed extensions a user
// picks by hand today (the queue's 30 s, or 2 min for handlers that beat
// every 30 s), and the adaptive one from each (the zero Config: the
// queue's 30 s visibility timeout read at start-up, looked at every 6 s,
// the extension chosen; and the same with a visibility timeout of 2 min,
// looked at every 24 s).
func Settings() []Setting {
	return []Setting{
		{"fixed 30s", consumer.Config{VisibilityTimeout: 30 * time.Second, Visibility: visibility.Config{Extension: 30 * time.Second}}},
		{"fixed 2m", consumer.Config{VisibilityTimeout: 2 * time.Minute, Visibility: visibility.Config{Extension: 2 * time.Minute}}},
		{"adaptive", consumer.Config{}},
		{"adaptive 2m", consumer.Config{VisibilityTimeout: 2 * time.Minute}},
	}
}

// Case is a kind of job: how long it runs (Job, > 0) and how often it
// beats (Beat, > 0), in time.Duration.
type Case struct {
	Job, Beat time.Duration
}

// String names c in messages: "2m0s job, beat every 1s".
func (c Case) String() string { return fmt.Sprintf("%v job, beat every %v", c.Job, c.Beat) }

// Cases are the jobs of the issue: 10 s, 2 min and 20 min, beating every
// 1 s and every 30 s.
func Cases() []Case {
	var out []Case
	for _, job := range []time.Duration{10 * time.Second, 2 * time.Minute, 20 * time.Minute} {
		for _, beat := range []time.Duration{time.Second, 30 * time.Second} {
			out = append(out, Case{job, beat})
		}
	}
	return out
}

// Result is one setting's measure of one case.
type Result struct {
	// Setting is the Setting's Name; Case the case measured.
	Setting string
	Case    Case
	// N is the messages per wave.
	N int
	// MessageHours is the measured wave's handler run time, in hours.
	MessageHours float64
	// Extensions and ExtensionCalls are the lease owner's over the
	// measured wave (extension entries, and the batch calls that carried
	// them).
	Extensions, ExtensionCalls int64
	// WarmupLost and HealthyLost count the messages of the warm-up and the
	// measured waves received again: their handlers beat, their leases
	// lapsed all the same.
	WarmupLost, HealthyLost int
	// Lapses are the stuck wave's delays from the last beat to the second
	// delivery, sorted.
	Lapses []time.Duration
	// Extension is the extension the lease owner asked for at the end (the
	// lease owner's choice, or the fixed one), as its last batch call said.
	Extension time.Duration
}

// PerMessageHour returns the extensions (the calls of a message alone)
// and the batch calls (of N messages in flight) per message-hour.
func (r Result) PerMessageHour() (extensions, calls float64) {
	if r.MessageHours == 0 {
		return 0, 0
	}
	return float64(r.Extensions) / r.MessageHours, float64(r.ExtensionCalls) / r.MessageHours
}

// run is one Run's shared state, written by the handlers.
type run struct {
	c  Case
	n  int
	mu sync.Mutex
	// Per body: the last beat of its first run; when its second delivery
	// was received.
	lastBeat map[string]time.Time
	again    map[string]time.Time
	ran      time.Duration // handler run time of the measured wave's first runs
	done     map[byte]int  // first runs finished, by wave
	wake     chan struct{} // closed and replaced on every change
	ext      time.Duration // the extension the lease owner said it asks for last
}

// changed wakes every waitFor. Called with r.mu held.
func (r *run) changed() {
	close(r.wake)
	r.wake = make(chan struct{})
}

// handle is every job's handler: a message received again records when;
// a first run beats every Beat for Job (waves A and B), or until its stop
// and then hangs, stuck, until its message is received again (wave C).
func (r *run) handle(ctx context.Context, m *sqsloop.Message) error {
	wave := m.Body[0]
	if m.ReceiveCount > 1 {
		r.mu.Lock()
		if _, seen := r.again[m.Body]; !seen {
			r.again[m.Body] = m.ReceivedAt
			r.changed()
		}
		r.mu.Unlock()
		return nil
	}
	stop := r.c.Job
	if wave == 'C' {
		k, _ := strconv.Atoi(m.Body[2:])
		stop = r.c.Job/2 + time.Duration(k)*min(r.c.Beat, r.c.Job/2)/time.Duration(r.n)
	}
	began := time.Now()
	for {
		ran := time.Since(began)
		if wave == 'C' && ran > stop {
			if err := r.waitFor(ctx, func() bool { _, ok := r.again[m.Body]; return ok }); err != nil {
				return err
			}
			break
		}
		if wave != 'C' && ran >= r.c.Job {
			break
		}
		heartbeat.Beat(ctx)
		r.mu.Lock()
		r.lastBeat[m.Body] = time.Now()
		r.mu.Unlock()
		next := r.c.Beat
		if wave != 'C' {
			next = min(next, r.c.Job-ran)
		}
		time.Sleep(next)
	}
	r.mu.Lock()
	if wave == 'B' {
		r.ran += time.Since(began)
	}
	r.done[wave]++
	r.changed()
	r.mu.Unlock()
	return nil
}

// waitFor waits until cond holds (checked under r.mu at every change).
func (r *run) waitFor(ctx context.Context, cond func() bool) error {
	for {
		r.mu.Lock()
		ok, wake := cond(), r.wake
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Run measures setting s on case c with waves of n messages, over mb: a
// queue with visibility timeout QueueVisibilityTimeout, empty, that Run
// sends to. It returns when the three waves are done and the consumer has
// drained, or with ctx's error; n must be at least 1 (the consumer runs
// 2n handlers), and c's Job and Beat above 0, else it returns an error
// naming them.
func Run(ctx context.Context, mb sqsloop.Mailbox, s Setting, c Case, n int, log *slog.Logger) (Result, error) {
	if n < 1 || c.Job <= 0 || c.Beat <= 0 {
		return Result{}, fmt.Errorf("leaselength: n must be ≥ 1 and Case.Job and Case.Beat > 0, got n %d, %v", n, c)
	}
	r := &run{c: c, n: n, lastBeat: map[string]time.Time{}, again: map[string]time.Time{}, done: map[byte]int{}, wake: make(chan struct{})}
	cfg := s.Config
	cfg.Concurrency, cfg.Logger = 2*n, log
	cfg.Observer = extensionOf{r: r}
	con, err := consumer.New(mb, r.handle, cfg)
	if err != nil {
		return Result{}, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- con.Run(runCtx) }()
	wave := func(w byte) error {
		n := n
		if w == 'A' {
			n *= 2
		}
		var out []sqsloop.OutgoingMessage
		for i := range n {
			out = append(out, sqsloop.OutgoingMessage{Body: fmt.Sprintf("%c-%d", w, i)})
		}
		for batch := range slices.Chunk(out, sqsloop.MaxBatchSize) {
			res, err := mb.Send(ctx, batch)
			if err != nil {
				return err
			}
			for _, e := range res {
				if e.Err != nil {
					return e.Err
				}
			}
		}
		return r.waitFor(ctx, func() bool {
			if w != 'C' {
				return r.done[w] == n
			}
			again := 0
			for body := range r.again {
				if body[0] == 'C' {
					again++
				}
			}
			return r.done[w] == n && again == n
		})
	}
	res := Result{Setting: s.Name, Case: c, N: n}
	if err := wave('A'); err != nil {
		return res, err
	}
	before := con.Stats()
	if err := wave('B'); err != nil {
		return res, err
	}
	after := con.Stats()
	if err := wave('C'); err != nil {
		return res, err
	}
	stop()
	if err := <-ran; err != nil {
		return res, fmt.Errorf("consumer: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res.MessageHours = r.ran.Hours()
	res.Extensions, res.ExtensionCalls = after.Extensions-before.Extensions, after.ExtensionCalls-before.ExtensionCalls
	for body, at := range r.again {
		switch body[0] {
		case 'A':
			res.WarmupLost++
		case 'B':
			res.HealthyLost++
		case 'C':
			res.Lapses = append(res.Lapses, at.Sub(r.lastBeat[body]))
		}
	}
	slices.Sort(res.Lapses)
	res.Extension = r.ext
	return res, nil
}

// extensionOf keeps the extension the lease owner reports asking for.
type extensionOf struct {
	sqsloop.NopObserver
	r *run
}

func (o extensionOf) Settled(e sqsloop.SettleEvent) {
	if e.Extension > 0 {
		o.r.mu.Lock()
		o.r.ext = e.Extension
		o.r.mu.Unlock()
	}
}

// WriteTable writes rs as a markdown table, one row per case and setting.
func WriteTable(w io.Writer, rs []Result) {
	fmt.Fprintln(w, "| job | beat | setting | extension at the end | extensions per message-hour (calls of a message alone) | calls per message-hour, N in flight | healthy leases lost (warm-up, measured) | last beat → visible again (min–max) |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rs {
		ext, calls := r.PerMessageHour()
		lapse := "–"
		switch {
		case r.HealthyLost > 0:
			lapse = "n/a: leases lapse while handlers beat"
		case len(r.Lapses) > 0:
			lapse = fmt.Sprintf("%v–%v", r.Lapses[0].Round(100*time.Millisecond), r.Lapses[len(r.Lapses)-1].Round(100*time.Millisecond))
		}
		fmt.Fprintf(w, "| %v | %v | %s | %v | %.0f | %.0f | %d, %d | %s |\n",
			r.Case.Job, r.Case.Beat, r.Setting, r.Extension.Round(time.Second), ext, calls, r.WarmupLost, r.HealthyLost, lapse)
	}
}
