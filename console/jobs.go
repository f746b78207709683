package console

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// Kinds of action.
const (
	actRedrive = "redrive"
	actDelete  = "delete"
	actExport  = "export"
	actLook    = "look" // an SQS scan: receives every message, and gives it back
)

// States of a job.
const (
	jobRunning     = "running"
	jobDone        = "done"
	jobCancelled   = "cancelled"
	jobFailed      = "failed"
	jobInterrupted = "interrupted" // by the end of the process that ran it (read from the journal)
)

// job is one action on a selection of messages: what was asked (who, what,
// on which messages), and how far it got. Its fields up to mu are set
// before it starts and not changed after; the rest under mu.
type job struct {
	ID      int
	Kind    string // actRedrive, actDelete, actExport
	Queue   string
	To      string // redrive's destination
	Filter  filter
	Rate    int // messages a second; 0: no limit
	Who     string
	Planned int       // the dry run's count
	Started time.Time // the selection takes the messages sent before it

	cancel context.CancelFunc

	mu      sync.Mutex
	State   string
	Method  string // how it moves messages
	Done    int    // moved, deleted or exported
	Skipped int    // selected but left where they were (in flight, or failed to send)
	InBoth  int    // sent to the destination but not deleted from the source
	Note    string // what it met on the way (a fallback, a bound)
	Err     string
	Ended   time.Time
	tick    time.Time // its last progress line in the log
	sink    *jobs
}

// progress adds n to Done (and skipped to Skipped) and writes a progress
// line to the journal, and at most every 5 s to the log.
func (j *job) progress(n, skipped int) {
	j.mu.Lock()
	j.Done += n
	j.Skipped += skipped
	logIt := time.Since(j.tick) >= 5*time.Second
	if logIt {
		j.tick = time.Now()
	}
	v := j.viewLocked()
	j.mu.Unlock()
	j.sink.record(v, "progress", logIt)
}

// setMethod names how the job moves messages.
func (j *job) setMethod(m string) {
	j.mu.Lock()
	j.Method = m
	j.mu.Unlock()
}

// addNote adds what the job met on the way.
func (j *job) addNote(format string, args ...any) {
	j.mu.Lock()
	if j.Note != "" {
		j.Note += "; "
	}
	j.Note += fmt.Sprintf(format, args...)
	j.mu.Unlock()
}

// setInBoth sets how many messages are in both queues: sent, and not
// deleted from the source yet.
func (j *job) setInBoth(n int) {
	j.mu.Lock()
	j.InBoth = n
	j.mu.Unlock()
}

// hasNote reports whether the job noted something already.
func (j *job) hasNote() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.Note != ""
}

// jobView is a job as the pages, the JSON and the journal show it.
type jobView struct {
	ID      int       `json:"id"`
	Kind    string    `json:"action"`
	Queue   string    `json:"queue"`
	To      string    `json:"to,omitempty"`
	Filter  string    `json:"filter"`
	Rate    int       `json:"rate,omitempty"`
	Who     string    `json:"who"`
	Planned int       `json:"planned"`
	Started time.Time `json:"started"`
	State   string    `json:"state"`
	Method  string    `json:"method,omitempty"`
	Done    int       `json:"done"`
	Skipped int       `json:"skipped"`
	InBoth  int       `json:"in_both,omitempty"`
	Note    string    `json:"note,omitempty"`
	Err     string    `json:"error,omitempty"`
	Ended   time.Time `json:"ended,omitzero"`
	Event   string    `json:"event,omitempty"` // in the journal: start, progress or end
}

func (j *job) view() jobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.viewLocked()
}

func (j *job) viewLocked() jobView {
	return jobView{ID: j.ID, Kind: j.Kind, Queue: j.Queue, To: j.To, Filter: j.Filter.String(), Rate: j.Rate, Who: j.Who,
		Planned: j.Planned, Started: j.Started, State: j.State, Method: j.Method, Done: j.Done, Skipped: j.Skipped,
		InBoth: j.InBoth, Note: j.Note, Err: j.Err, Ended: j.Ended}
}

// jobs runs the actions, each on a goroutine it owns, and keeps their
// record: in memory, in the log, and in the journal when there is one.
type jobs struct {
	log *slog.Logger

	mu      sync.Mutex
	list    []*job    // newest last
	past    []jobView // from the journal: jobs of earlier processes
	next    int
	journal io.WriteCloser
	closed  bool
	wg      sync.WaitGroup
}

// openJournal opens the journal at path for appending, after reading the
// jobs of earlier processes from it: a job whose last line is not its end
// was interrupted, and shows as such with the count its last line gave.
func (js *jobs) openJournal(path string) error {
	if f, err := os.Open(path); err == nil {
		last := map[int]jobView{}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var v jobView
			if json.Unmarshal(sc.Bytes(), &v) == nil && v.ID > 0 {
				last[v.ID] = v
				js.next = max(js.next, v.ID)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("console: reading the journal %s: %w", path, err)
		}
		for _, v := range last {
			if v.State == jobRunning {
				v.State = jobInterrupted
			}
			js.past = append(js.past, v)
		}
		slices.SortFunc(js.past, func(a, b jobView) int { return a.ID - b.ID })
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("console: the journal: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("console: the journal: %w", err)
	}
	js.journal = f
	return nil
}

// record writes v's event to the journal, and to the log when logIt.
func (js *jobs) record(v jobView, event string, logIt bool) {
	v.Event = event
	if logIt {
		js.log.Info("sqsloop console: "+v.Kind+" "+event, "job", v.ID, "who", v.Who, "queue", v.Queue, "to", v.To,
			"filter", v.Filter, "planned", v.Planned, "done", v.Done, "skipped", v.Skipped, "in_both", v.InBoth,
			"state", v.State, "method", v.Method, "note", v.Note, "error", v.Err)
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.journal != nil {
		b, _ := json.Marshal(v) // plain fields: cannot fail
		if _, err := js.journal.Write(append(b, '\n')); err != nil {
			js.log.Warn("sqsloop console: writing the journal", "error", err)
		}
	}
}

// errClosed is the error of an action asked for after Close; errBusy of
// one asked for on a queue another action works on (on SQS two would hide
// messages from each other).
var (
	errClosed = errors.New("console: closed")
	errBusy   = errors.New("console: busy")
)

// start registers j and runs run on a goroutine of its own until it
// returns or ctx (the console's) ends; it returns at once. With wait, it
// runs run on the caller's goroutine instead (an export, which writes to
// the caller's response) and returns its error.
func (js *jobs) start(ctx context.Context, j *job, wait bool, run func(ctx context.Context, j *job) error) error {
	ctx, j.cancel = context.WithCancel(ctx)
	js.mu.Lock()
	if js.closed {
		js.mu.Unlock()
		j.cancel()
		return errClosed
	}
	for _, o := range js.list {
		if o.Queue == j.Queue && o.view().State == jobRunning {
			js.mu.Unlock()
			j.cancel()
			return fmt.Errorf("%w: action %d (%s) is running on %s: let it end, or cancel it", errBusy, o.ID, o.Kind, j.Queue)
		}
	}
	js.next++
	j.ID = js.next
	j.State = jobRunning
	j.sink = js
	j.tick = time.Now()
	js.list = append(js.list, j)
	js.wg.Add(1)
	js.mu.Unlock()
	js.record(j.view(), "start", true)
	body := func() error {
		defer js.wg.Done()
		defer j.cancel()
		err := run(ctx, j)
		j.mu.Lock()
		j.Ended = time.Now()
		switch {
		case err == nil:
			j.State = jobDone
		case ctx.Err() != nil:
			j.State = jobCancelled
		default:
			j.State, j.Err = jobFailed, err.Error()
		}
		v := j.viewLocked()
		j.mu.Unlock()
		js.record(v, "end", true)
		return err
	}
	if wait {
		return body()
	}
	go body()
	return nil
}

// get returns the job of that ID (nil, and the journal's view when an
// earlier process ran it).
func (js *jobs) get(id int) (*job, *jobView) {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.list {
		if j.ID == id {
			return j, nil
		}
	}
	for i := range js.past {
		if js.past[i].ID == id {
			v := js.past[i]
			return nil, &v
		}
	}
	return nil, nil
}

// views returns every job, newest first.
func (js *jobs) views() []jobView {
	js.mu.Lock()
	list := slices.Clone(js.list)
	out := slices.Clone(js.past)
	js.mu.Unlock()
	for _, j := range list {
		out = append(out, j.view())
	}
	slices.Reverse(out)
	return out
}

// close cancels the running jobs and waits for them (each gives back what
// it holds and records how far it got), then closes the journal.
func (js *jobs) close() error {
	js.mu.Lock()
	js.closed = true
	list := slices.Clone(js.list)
	js.mu.Unlock()
	for _, j := range list {
		j.cancel()
	}
	js.wg.Wait()
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.journal != nil {
		return js.journal.Close()
	}
	return nil
}

// pacer lets an action go at most rate messages a second: each batch of n
// takes n/rate seconds of its time, the first one going at once, and time
// it did not use (a slow receive) is not saved up for a burst.
type pacer struct {
	rate int
	next time.Time // when the next batch may go
}

// wait waits until n more messages may go (ctx's error if it ends first).
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.rate <= 0 || n == 0 {
		return ctx.Err()
	}
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	d := p.next.Sub(now)
	p.next = p.next.Add(time.Duration(float64(n) / float64(p.rate) * float64(time.Second)))
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return ctx.Err()
}
