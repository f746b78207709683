package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pageSize is how many messages one page of a queue lists.
const pageSize = 50

// listAge is how old the queue list a page shows may be before the page
// reads it again.
const listAge = 2 * time.Second

// routes sets up the console's pages. Every path is under Options.Prefix.
func (c *Console) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", c.queuesPage)
	m.HandleFunc("GET /queue", c.queuePage)
	m.HandleFunc("GET /queue/count", c.countJSON)
	m.HandleFunc("GET /message", c.messagePage)
	m.HandleFunc("GET /act", c.actPage)
	m.HandleFunc("POST /act", c.action(c.startAction))
	m.HandleFunc("POST /look", c.action(c.startLook))
	m.HandleFunc("GET /jobs", c.jobsPage)
	m.HandleFunc("GET /job", c.jobPage)
	m.HandleFunc("POST /job/cancel", c.action(c.cancelJob))
	m.HandleFunc("GET /workers", c.workersPage)
	m.HandleFunc("POST /workers/drain", c.action(c.drain))
	m.Handle("GET /static/", http.StripPrefix("/static/", staticFiles()))
	c.mux = m
}

// ServeHTTP serves the console's pages under Options.Prefix (other paths:
// 404), after authenticating the request (Options.Auth) and, for a POST,
// checking its CSRF token and origin (403 without).
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.secure(http.StripPrefix(c.opts.Prefix, c.mux)).ServeHTTP(w, r)
}

// action wraps the handler of a state-changing request: refused in
// read-only mode.
func (c *Console) action(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c.opts.ReadOnly {
			http.Error(w, "forbidden: the console is read-only", http.StatusForbidden)
			return
		}
		h(w, r)
	}
}

// layout is what every page's frame shows.
type layout struct {
	Title    string
	Prefix   string
	Where    string
	ReadOnly bool
	CSRF     string
	Nav      string
	Workers  bool
}

func (c *Console) layout(w http.ResponseWriter, r *http.Request, title, nav string) layout {
	return layout{Title: title, Prefix: c.opts.Prefix, Where: c.b.where(), ReadOnly: c.opts.ReadOnly, CSRF: c.csrfToken(w, r), Nav: nav,
		Workers: len(c.workers) > 0 || c.isDatabase()}
}

func (c *Console) isDatabase() bool {
	_, ok := c.b.(*sqlBackend)
	return ok
}

// render executes the page template name with data.
func (c *Console) render(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := c.tmpl.ExecuteTemplate(w, name, data); err != nil {
		c.log.Warn("sqsloop console: rendering a page", "page", name, "error", err)
	}
}

// fail answers with an error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	w.WriteHeader(status)
	c.render(w, "error.html", struct {
		layout
		Status int
		Err    string
	}{c.layout(w, r, http.StatusText(status), ""), status, err.Error()})
}

// queueRow is one row of the queue list.
type queueRow struct {
	queueInfo
	Chart chart
}

func (c *Console) queuesPage(w http.ResponseWriter, r *http.Request) {
	qs, at, err := c.samples.list(r.Context(), c.b, listAge)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	rows := make([]queueRow, len(qs))
	for i, q := range qs {
		rows[i] = queueRow{queueInfo: q, Chart: c.samples.chart(q.Name)}
	}
	data := struct {
		layout
		Queues   []queueRow
		ReadAt   time.Time
		Interval time.Duration
	}{c.layout(w, r, "Queues", "queues"), rows, at, c.samples.interval}
	if r.URL.Query().Get("fragment") == "1" {
		c.render(w, "queuerows", data)
		return
	}
	c.render(w, "queues.html", data)
}

// findQueue returns the queue named in the request's name (or queue)
// parameter, from a fresh enough list.
func (c *Console) findQueue(ctx context.Context, name string) (*queueInfo, []queueInfo, error) {
	qs, _, err := c.samples.list(ctx, c.b, listAge)
	if err != nil {
		return nil, nil, err
	}
	for i := range qs {
		if qs[i].Name == name {
			return &qs[i], qs, nil
		}
	}
	return nil, qs, fmt.Errorf("no queue %q", name)
}

// queueView is the queue page's data.
type queueView struct {
	layout
	Q         *queueInfo
	Chart     chart
	Form      url.Values // the filter as typed
	Filter    filter
	FilterErr string
	QueryURL  template.URL // the filter, as a query for links
	Hidden    url.Values   // the filter, as the action form carries it
	Page      page
	Cursor    string
	Select    bool
	Scan      *snapshotView // SQS: the last look
	NeedsLook bool          // SQS: a queue with a redrive policy, not looked at yet
	SQS       bool
	Targets   []string // where a redrive may send them
	Default   string
}

func (c *Console) queuePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := r.URL.Query()
	q, qs, err := c.findQueue(ctx, v.Get("name"))
	if err != nil {
		c.fail(w, r, http.StatusNotFound, err)
		return
	}
	f, ferr := parseFilter(v, time.Now())
	data := queueView{layout: c.layout(w, r, q.Name, "queues"), Q: q, Chart: c.samples.chart(q.Name), Form: v, Filter: f,
		Cursor: v.Get("cursor"), Select: v.Get("select") == "all"}
	data.Hidden = f.values()
	data.QueryURL = template.URL(data.Hidden.Encode()) // encoded: safe in a URL's query
	data.Targets, data.Default = targets(q, qs)
	if ferr != nil {
		data.FilterErr = ferr.Error()
		c.render(w, "queue.html", data)
		return
	}
	if sb, ok := c.b.(*sqsBackend); ok {
		data.SQS = true
		s := sb.snapshot(q.Name)
		switch {
		case s != nil:
			sv := s.view()
			data.Scan = &sv
		case q.MaxReceiveCount > 0:
			data.NeedsLook = true // the console says so before the first look
		default:
			// No redrive policy (a dead-letter queue): a look counts
			// toward nothing, so the first visit looks.
			if _, err := c.look(q.Name, c.who(r)); err != nil {
				c.fail(w, r, http.StatusServiceUnavailable, err)
				return
			}
			sv := sb.snapshot(q.Name).view()
			data.Scan = &sv
		}
	}
	if data.NeedsLook {
		c.render(w, "queue.html", data)
		return
	}
	data.Page, err = c.b.browse(ctx, q, f, data.Cursor, pageSize)
	if err != nil {
		data.FilterErr = err.Error()
	}
	c.render(w, "queue.html", data)
}

// targets returns where a redrive of q's messages may go (the queues that
// take its type: its sources first) and the one to offer first (its
// only source, if it has one).
func targets(q *queueInfo, qs []queueInfo) ([]string, string) {
	var out []string
	for _, o := range qs {
		if o.Name != q.Name && o.FIFO == q.FIFO && o.Err == "" {
			out = append(out, o.Name)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return cmp.Compare(bool2int(!slices.Contains(q.Sources, a)), bool2int(!slices.Contains(q.Sources, b)))
	})
	def := ""
	if len(q.Sources) == 1 {
		def = q.Sources[0]
	}
	return out, def
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countJSON answers the number of the queue's messages matching the
// filter: {"n":3112,"exact":true,"of":5000}.
func (c *Console) countJSON(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q, _, err := c.findQueue(r.Context(), v.Get("name"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	f, err := parseFilter(v, time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n, err := c.b.count(r.Context(), q, f)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	writeJSON(w, map[string]any{"n": n.N, "exact": n.Exact, "of": n.Of, "text": num(n.N)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (c *Console) messagePage(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q, _, err := c.findQueue(r.Context(), v.Get("queue"))
	if err != nil {
		c.fail(w, r, http.StatusNotFound, err)
		return
	}
	rec, hist, err := c.b.message(r.Context(), q, v.Get("key"))
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	if rec == nil {
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("no message %q in %s (moved, deleted, or not read yet)", v.Get("key"), q.Name))
		return
	}
	c.render(w, "message.html", struct {
		layout
		Q       *queueInfo
		M       *record
		Pretty  string
		IsJSON  bool
		History []historyEntry
		SQS     bool
	}{c.layout(w, r, "Message "+rec.ID, "queues"), q, rec, pretty(rec.Body), json.Valid([]byte(rec.Body)), hist, !c.isDatabase()})
}

// pretty returns body indented when it is JSON, else as it is.
func pretty(body string) string {
	var b strings.Builder
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return body
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// actRequest is an action as its forms carry it.
type actRequest struct {
	q      *queueInfo
	kind   string
	to     string
	rate   int
	filter filter
}

// parseAct reads and checks an action from its form or query.
func (c *Console) parseAct(r *http.Request, v url.Values) (*actRequest, []queueInfo, error) {
	q, qs, err := c.findQueue(r.Context(), v.Get("queue"))
	if err != nil {
		return nil, nil, err
	}
	a := &actRequest{q: q, kind: v.Get("action"), to: v.Get("to")}
	if a.filter, err = parseFilter(v, time.Now()); err != nil {
		return nil, nil, err
	}
	if s := v.Get("rate"); s != "" {
		if a.rate, err = strconv.Atoi(s); err != nil || a.rate < 0 || a.rate > 100_000 {
			return nil, nil, fmt.Errorf("rate: want messages a second, 1-100000 (0: no limit), got %q", s)
		}
	}
	switch a.kind {
	case actRedrive:
		tg, _ := targets(q, qs)
		if !slices.Contains(tg, a.to) {
			return nil, nil, fmt.Errorf("to: %q is not a queue the messages of %s can go to (%s)", a.to, q.Name, strings.Join(tg, ", "))
		}
	case actDelete, actExport:
		a.to = ""
	default:
		return nil, nil, fmt.Errorf("action: want redrive, delete or export, got %q", a.kind)
	}
	return a, qs, nil
}

// actPage is the dry run: how many messages the action would take, and
// the button that starts it.
func (c *Console) actPage(w http.ResponseWriter, r *http.Request) {
	if c.opts.ReadOnly {
		http.Error(w, "forbidden: the console is read-only", http.StatusForbidden)
		return
	}
	a, _, err := c.parseAct(r, r.URL.Query())
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	n, err := c.b.count(r.Context(), a.q, a.filter)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	hidden := a.filter.values()
	hidden.Set("queue", a.q.Name)
	hidden.Set("action", a.kind)
	hidden.Set("to", a.to)
	hidden.Set("rate", strconv.Itoa(a.rate))
	hidden.Set("planned", strconv.Itoa(n.N))
	c.render(w, "act.html", struct {
		layout
		Q      *queueInfo
		Kind   string
		To     string
		Rate   int
		Filter filter
		Count  count
		Hidden url.Values
		SQS    bool
		Back   template.URL
	}{c.layout(w, r, "Confirm "+a.kind, "queues"), a.q, a.kind, a.to, a.rate, a.filter, n, hidden, !c.isDatabase(),
		template.URL(a.filter.values().Encode())}) // encoded: safe in a URL's query
}

// startAction starts the action its form confirms: a redrive or a delete
// runs on (see its job page); an export answers with the JSON lines.
func (c *Console) startAction(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	a, _, err := c.parseAct(r, r.PostForm)
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, err)
		return
	}
	planned, _ := strconv.Atoi(r.PostFormValue("planned"))
	j := &job{Kind: a.kind, Queue: a.q.Name, To: a.to, Filter: a.filter, Rate: a.rate, Who: c.who(r), Planned: planned, Started: time.Now()}
	if a.kind == actExport {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", a.q.Name+".jsonl"))
		err := c.jobs.start(r.Context(), j, true, func(ctx context.Context, j *job) error { return c.b.act(ctx, j, w) })
		if err != nil && !errors.Is(err, errClosed) {
			c.log.Warn("sqsloop console: export ended early", "job", j.ID, "error", err)
		}
		return
	}
	if err := c.jobs.start(c.ctx, j, false, func(ctx context.Context, j *job) error { return c.b.act(ctx, j, nil) }); err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, err)
		return
	}
	http.Redirect(w, r, c.opts.Prefix+"/job?id="+strconv.Itoa(j.ID), http.StatusSeeOther)
}

// look starts a look (an SQS scan) of the queue, unless one runs.
func (c *Console) look(queue, who string) (int, error) {
	sb, ok := c.b.(*sqsBackend)
	if !ok {
		return 0, errors.New("only SQS queues need a look: a database's are read as they are")
	}
	j := &job{Kind: actLook, Queue: queue, Who: who, Started: time.Now()}
	// Registered before the job starts, so that the page shows it at
	// once, and a second request does not start another.
	sb.mu.Lock()
	if s := sb.scans[queue]; s != nil && s.view().Running {
		sb.mu.Unlock()
		return s.view().Job, nil
	}
	old := sb.scans[queue]
	s := &snapshot{running: true, started: j.Started, byID: map[string]*record{}}
	sb.scans[queue] = s
	sb.mu.Unlock()
	err := c.jobs.start(c.ctx, j, false, func(ctx context.Context, j *job) error { return c.b.act(ctx, j, nil) })
	if err != nil {
		sb.mu.Lock()
		if sb.scans[queue] == s {
			sb.scans[queue] = old // keep what the last look read
		}
		sb.mu.Unlock()
		return 0, err
	}
	s.mu.Lock()
	s.job = j.ID
	s.mu.Unlock()
	return j.ID, nil
}

func (c *Console) startLook(w http.ResponseWriter, r *http.Request) {
	q := r.PostFormValue("queue")
	if _, _, err := c.findQueue(r.Context(), q); err != nil {
		c.fail(w, r, http.StatusNotFound, err)
		return
	}
	if _, err := c.look(q, c.who(r)); err != nil {
		c.fail(w, r, http.StatusServiceUnavailable, err)
		return
	}
	http.Redirect(w, r, c.opts.Prefix+"/queue?name="+url.QueryEscape(q), http.StatusSeeOther)
}

func (c *Console) jobsPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, "jobs.html", struct {
		layout
		Jobs []jobView
	}{c.layout(w, r, "Actions", "jobs"), c.jobs.views()})
}

func (c *Console) jobPage(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.URL.Query().Get("id"))
	j, past := c.jobs.get(id)
	var v jobView
	switch {
	case j != nil:
		v = j.view()
	case past != nil:
		v = *past
	default:
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("no action %d", id))
		return
	}
	if r.URL.Query().Get("format") == "json" {
		writeJSON(w, v)
		return
	}
	c.render(w, "job.html", struct {
		layout
		J jobView
	}{c.layout(w, r, fmt.Sprintf("Action %d", id), "jobs"), v})
}

func (c *Console) cancelJob(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PostFormValue("id"))
	j, _ := c.jobs.get(id)
	if j == nil {
		c.fail(w, r, http.StatusNotFound, fmt.Errorf("no running action %d", id))
		return
	}
	c.log.Info("sqsloop console: cancel asked", "job", id, "who", c.who(r))
	j.cancel()
	http.Redirect(w, r, c.opts.Prefix+"/job?id="+strconv.Itoa(id), http.StatusSeeOther)
}

func (c *Console) workersPage(w http.ResponseWriter, r *http.Request) {
	data := struct {
		layout
		Workers []workerView
		DB      *dbLeases
		DBErr   string
	}{layout: c.layout(w, r, "Workers and leases", "workers"), Workers: c.readWorkers(r.Context())}
	if c.isDatabase() {
		qs, _, err := c.samples.list(r.Context(), c.b, listAge)
		if err == nil {
			data.DB, err = c.b.leases(r.Context(), qs)
		}
		if err != nil {
			data.DBErr = err.Error()
		}
	}
	c.render(w, "workers.html", data)
}

func (c *Console) drain(w http.ResponseWriter, r *http.Request) {
	i, _ := strconv.Atoi(r.PostFormValue("worker"))
	op := r.PostFormValue("op")
	err := c.drainWorker(r.Context(), i, op)
	c.log.Info("sqsloop console: "+op, "worker", i, "who", c.who(r), "error", err)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, err)
		return
	}
	http.Redirect(w, r, c.opts.Prefix+"/workers", http.StatusSeeOther)
}

// num writes n with thousands separators: 3,112.
func num(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
