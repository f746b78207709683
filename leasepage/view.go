package leasepage

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop/internal/rules"
)

// view is one snapshot of the page, for HTML and JSON alike.
type view struct {
	Now            time.Time        `json:"now"`
	InFlight       []leaseView      `json:"in_flight"`
	Outcomes       map[string]int64 `json:"outcomes"`
	LeasesLost     map[string]int64 `json:"leases_lost"`
	Receives       int64            `json:"receives"`
	ReceiveErrors  int64            `json:"receive_errors"`
	Extensions     int64            `json:"extensions"`
	LateExtensions int64            `json:"late_extensions"`
	ReceiveAhead   int              `json:"receive_ahead"`
	Held           int              `json:"held"`
	Drain          drainView        `json:"drain"`
	Lease          leaseChoice      `json:"lease"`
	Scaling        *scalingView     `json:"scaling"` // null until the consumer read the queue's counts
	Errors         []errorView      `json:"errors"`

	from, to time.Time // the bars' time axis
}

type leaseView struct {
	MessageID    string      `json:"message_id"`
	State        string      `json:"state"` // waiting, running, lease_lost
	LostReason   string      `json:"lost_reason,omitempty"`
	ReceiveCount int         `json:"receive_count"`
	MessageGroup string      `json:"message_group,omitempty"`
	ReceivedAt   time.Time   `json:"received_at"`
	StartedAt    *time.Time  `json:"started_at,omitempty"`
	Age          float64     `json:"age_seconds"`
	SinceBeat    *float64    `json:"since_beat_seconds"` // null: never beat
	Deadline     time.Time   `json:"deadline"`
	DeadlineIn   float64     `json:"deadline_in_seconds"` // negative: past
	Extensions   int         `json:"extensions"`
	Beats        []time.Time `json:"beats"`
}

// leaseChoice is the extension the lease owner asks for (0 before its
// first batch call) and the beat gap it follows (0: none observed, or a
// fixed extension).
type leaseChoice struct {
	Extension float64 `json:"extension_seconds"`
	BeatGap   float64 `json:"beat_gap_p99_seconds"`
}

// scalingView is the queue's counts and the scaling signal, as the last
// successful read of the queue's counts gave them.
type scalingView struct {
	ReadAt               time.Time `json:"read_at"`
	Backlog              int       `json:"backlog"`
	InFlight             int       `json:"in_flight"`
	DeadLetters          *int      `json:"dead_letters"` // null: no dead-letter queue, or its read failed
	BacklogPerConsumer   float64   `json:"backlog_per_consumer"`
	RecommendedConsumers int       `json:"recommended_consumers"`
}

type drainView struct {
	State     string    `json:"state"` // running, or the last phase
	Since     time.Time `json:"since,omitzero"`
	Running   int       `json:"running"`
	GivenBack int       `json:"given_back"`
	Finished  int       `json:"finished"`
	Abandoned int       `json:"abandoned"`
}

type errorView struct {
	At    time.Time `json:"at"`
	What  string    `json:"what"`
	Error string    `json:"error"`
}

// view takes a snapshot; it reads (and so stamps) the heartbeats of the
// running handlers.
func (p *Page) view() view {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	v := view{
		Now: now, Outcomes: byName(rules.Outcomes, p.outcomes), LeasesLost: byName(rules.LeaseLostReasons, p.lost),
		Receives: p.receives, ReceiveErrors: p.receiveErrors, Extensions: p.extensions, LateExtensions: p.late,
		ReceiveAhead: p.ahead, Held: p.held, Drain: drainView{State: "running"},
		InFlight: []leaseView{}, Errors: []errorView{},
	}
	v.Lease = leaseChoice{Extension: p.extension.Seconds(), BeatGap: p.beatGap.Seconds()}
	if e := p.queue; e != nil {
		v.Scaling = &scalingView{ReadAt: e.Start.Add(e.Duration), Backlog: e.Backlog, InFlight: e.InFlight,
			BacklogPerConsumer: e.BacklogPerConsumer, RecommendedConsumers: e.RecommendedConsumers}
		if e.DeadLettersRead {
			n := e.DeadLetters
			v.Scaling.DeadLetters = &n
		}
	}
	if d := p.drain; d != nil {
		v.Drain = drainView{State: d.Phase, Since: p.drainAt, Running: d.Running, GivenBack: d.GivenBack, Finished: d.Finished, Abandoned: d.Abandoned}
	}
	for _, e := range slices.Backward(p.errs) {
		v.Errors = append(v.Errors, errorView{At: e.at, What: e.what, Error: e.err})
	}
	v.from, v.to = now, now
	for _, l := range p.leases {
		l.sawBeat()
		lv := leaseView{
			MessageID: l.id, State: "waiting", LostReason: l.lost, ReceiveCount: l.receiveCount, MessageGroup: l.group,
			ReceivedAt: l.receivedAt, Age: now.Sub(l.receivedAt).Seconds(), Deadline: l.deadline,
			DeadlineIn: l.deadline.Sub(now).Seconds(), Extensions: l.extensions, Beats: slices.Clone(l.beats),
		}
		if lv.Beats == nil {
			lv.Beats = []time.Time{}
		}
		if !l.started.IsZero() {
			started := l.started
			lv.StartedAt, lv.State = &started, "running"
		}
		if l.lost != "" {
			lv.State = "lease_lost"
		}
		if n := len(l.beats); n > 0 {
			since := max(now.Sub(l.beats[n-1]).Seconds(), 0) // a beat stamped just now, after now was read
			lv.SinceBeat = &since
		}
		v.InFlight = append(v.InFlight, lv)
		if l.receivedAt.Before(v.from) {
			v.from = l.receivedAt
		}
		if l.deadline.After(v.to) {
			v.to = l.deadline
		}
	}
	slices.SortFunc(v.InFlight, func(a, b leaseView) int {
		return cmp.Or(a.ReceivedAt.Compare(b.ReceivedAt), cmp.Compare(a.MessageID, b.MessageID))
	})
	return v
}

// byName gives the counts of n by name, every name of all at 0 when not
// counted.
func byName(all []string, n map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(all))
	for _, name := range all {
		out[name] = 0
	}
	for name, c := range n {
		out[name] += c
	}
	return out
}

func writeJSON(w http.ResponseWriter, v view) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
