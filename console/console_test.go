package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// patience bounds the waits of these tests on the wall clock: far more
// than any of them takes.
const patience = time.Minute

// syncBuffer is a log sink safe for the console's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// dbFixture is a console on a SQLite file holding the queue jobs and its
// dead-letter queue jobs-dlq.
type dbFixture struct {
	st  *sqlmailbox.Store
	c   *Console
	srv *httptest.Server
	log *syncBuffer
	dlq sqsloop.Mailbox
}

// newDBFixture opens the store with the queues, n messages in the DLQ
// (those with i%3 == 0 have tier=gold, the others tier=silver), and serves
// a console with opts.
func newDBFixture(t *testing.T, n int, opts Options) *dbFixture {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mb.Close() })
	dlq, err := mb.OpenDeadLetterQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dlq.Close() })
	sendTiers(t, dlq, n)
	f := &dbFixture{st: st, dlq: dlq, log: &syncBuffer{}}
	opts.Logger = slog.New(slog.NewTextHandler(f.log, nil))
	f.c, err = NewDatabase(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.c.Close(); err != nil {
			t.Error(err)
		}
	})
	f.srv = httptest.NewServer(f.c)
	t.Cleanup(f.srv.Close)
	return f
}

// sendTiers sends n messages to mb: {"n":i,"tier":…} with the attribute
// tier gold for i%3 == 0, silver otherwise.
func sendTiers(t testing.TB, mb sqsloop.Mailbox, n int) {
	t.Helper()
	for i := 0; i < n; i += sqsloop.MaxBatchSize {
		var batch []sqsloop.OutgoingMessage
		for k := i; k < min(i+sqsloop.MaxBatchSize, n); k++ {
			tier := "silver"
			if k%3 == 0 {
				tier = "gold"
			}
			batch = append(batch, sqsloop.OutgoingMessage{Body: fmt.Sprintf(`{"n":%d,"tier":%q}`, k, tier),
				MessageAttributes: map[string]sqsloop.MessageAttribute{"tier": {DataType: "String", StringValue: tier}}})
		}
		if _, err := mb.Send(t.Context(), batch); err != nil {
			t.Fatal(err)
		}
	}
}

// gold is how many of n messages sendTiers makes gold.
func gold(n int) int { return (n + 2) / 3 }

// browser is an HTTP client with cookies, as a browser keeps them.
type browser struct {
	t      *testing.T
	base   string
	client *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// get returns the status and body of GET path.
func (b *browser) get(path string) (int, string) {
	b.t.Helper()
	resp, err := b.client.Get(b.base + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)

// token reads the page's CSRF token (the page sets the cookie it goes
// with).
func (b *browser) token() string {
	b.t.Helper()
	_, body := b.get("/")
	m := csrfMeta.FindStringSubmatch(body)
	if m == nil {
		b.t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// post POSTs form to path and returns the status and the redirect's
// location.
func (b *browser) post(path string, form url.Values) (int, string) {
	b.t.Helper()
	resp, err := b.client.PostForm(b.base+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Location")
}

// waitJob polls the job's JSON until it has ended, and returns it.
func (b *browser) waitJob(id int) jobView {
	b.t.Helper()
	for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Millisecond) {
		_, body := b.get("/job?id=" + strconv.Itoa(id) + "&format=json")
		var v jobView
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			b.t.Fatalf("job %d: %v: %s", id, err, body)
		}
		if v.State != jobRunning {
			return v
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("job %d still running after %v: %+v", id, patience, v)
		}
	}
}

// redriveForm is the confirm form of a redrive of the gold messages from
// jobs-dlq to jobs.
func redriveForm(token string) url.Values {
	return url.Values{"csrf": {token}, "queue": {"jobs-dlq"}, "action": {"redrive"}, "to": {"jobs"}, "rate": {"0"},
		"attr": {"tier=gold"}, "planned": {"0"}}
}

// counts returns the messages in jobs and jobs-dlq.
func (f *dbFixture) counts(t *testing.T) (jobs, dlq int) {
	t.Helper()
	sum, err := f.st.QueueSummaries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sum {
		n := s.Attributes.ApproximateMessages + s.Attributes.ApproximateMessagesInFlight + s.Attributes.ApproximateMessagesDelayed
		switch s.Name {
		case "jobs":
			jobs = n
		case "jobs-dlq":
			dlq = n
		}
	}
	return jobs, dlq
}

// The dry run counts what the filter selects, the redrive moves exactly
// those, each action is logged with who, what and how many, and the
// journal keeps the action's start, progress and end.
func TestDatabaseRedriveAllMatching(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	f := newDBFixture(t, 300, Options{Journal: journal})
	b := newBrowser(t, f.srv.URL)
	if code, body := b.get("/queue/count?name=jobs-dlq&attr=tier%3Dgold"); code != 200 || !strings.Contains(body, `"n":100`) {
		t.Fatalf("count: %d %s, want 100", code, body)
	}
	if code, body := b.get("/act?queue=jobs-dlq&action=redrive&to=jobs&rate=0&attr=tier%3Dgold"); code != 200 || !strings.Contains(body, `id="planned">100<`) {
		t.Fatalf("dry run: %d, want 100 planned:\n%s", code, body)
	}
	code, loc := b.post("/act", redriveForm(b.token()))
	if code != http.StatusSeeOther || !strings.Contains(loc, "/job?id=") {
		t.Fatalf("POST /act: %d %q, want a redirect to the job", code, loc)
	}
	id, _ := strconv.Atoi(loc[strings.Index(loc, "id=")+3:])
	v := b.waitJob(id)
	if v.State != jobDone || v.Done != 100 || v.Skipped != 0 {
		t.Errorf("job: %+v, want done, 100 moved", v)
	}
	if jobs, dlq := f.counts(t); jobs != 100 || dlq != 200 {
		t.Errorf("after the redrive: %d in jobs, %d in jobs-dlq; want 100 and 200", jobs, dlq)
	}
	msgs, err := f.st.Browse(t.Context(), "jobs", sqlmailbox.MessageFilter{}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.MessageAttributes["tier"].StringValue != "gold" {
			t.Errorf("moved %s, not gold", m.Body)
		}
	}
	log := f.log.String()
	for _, want := range []string{"redrive start", "redrive end", "who=127.0.0.1", `filter="attribute tier = \"gold\""`, "done=100", "state=done"} {
		if !strings.Contains(log, want) {
			t.Errorf("the action log lacks %q:\n%s", want, log)
		}
	}
	raw, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for line := range strings.Lines(string(raw)) {
		var jv jobView
		if err := json.Unmarshal([]byte(line), &jv); err != nil {
			t.Fatal(err)
		}
		events = append(events, jv.Event)
	}
	if len(events) < 3 || events[0] != "start" || events[len(events)-1] != "end" {
		t.Errorf("journal events %v, want start, progress…, end", events)
	}
}

// A journal whose action has no end shows it interrupted, with the count
// its last line gave, on the next console's pages.
func TestJournalShowsInterruptedAction(t *testing.T) {
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	lines := `{"id":7,"action":"redrive","queue":"jobs-dlq","to":"jobs","filter":"every message","who":"ann","planned":50,"state":"running","done":0,"skipped":0,"event":"start"}
{"id":7,"action":"redrive","queue":"jobs-dlq","to":"jobs","filter":"every message","who":"ann","planned":50,"state":"running","done":20,"skipped":0,"event":"progress"}
`
	if err := os.WriteFile(journal, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newDBFixture(t, 0, Options{Journal: journal})
	b := newBrowser(t, f.srv.URL)
	_, body := b.get("/job?id=7")
	if !strings.Contains(body, `id="state" data-field="state">interrupted<`) || !strings.Contains(body, `id="done" data-field="done">20<`) {
		t.Errorf("job 7's page does not show it interrupted at 20:\n%s", body)
	}
	// The next action gets the next number.
	code, loc := b.post("/act", url.Values{"csrf": {b.token()}, "queue": {"jobs-dlq"}, "action": {"delete"}})
	if code != http.StatusSeeOther || !strings.HasSuffix(loc, "id=8") {
		t.Errorf("the next action: %d %q, want job 8", code, loc)
	}
}

// Without credentials configured the console answers loopback clients
// only; with them, it asks for them.
func TestAuthentication(t *testing.T) {
	get := func(c *Console, remote string, set func(r *http.Request)) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = remote
		if set != nil {
			set(r)
		}
		w := httptest.NewRecorder()
		c.ServeHTTP(w, r)
		return w
	}
	open := newDBFixture(t, 0, Options{}).c
	if w := get(open, "10.0.0.7:5000", nil); w.Code != http.StatusForbidden {
		t.Errorf("no credentials, a remote client: %d, want 403", w.Code)
	}
	if w := get(open, "127.0.0.1:5000", nil); w.Code != http.StatusOK {
		t.Errorf("no credentials, a loopback client: %d, want 200", w.Code)
	}
	basic := newDBFixture(t, 0, Options{Auth: Auth{Username: "ann", Password: "pw", BearerToken: "tok"}}).c
	for _, tc := range []struct {
		name string
		set  func(r *http.Request)
		want int
	}{
		{"none", nil, http.StatusUnauthorized},
		{"wrong password", func(r *http.Request) { r.SetBasicAuth("ann", "no") }, http.StatusUnauthorized},
		{"basic", func(r *http.Request) { r.SetBasicAuth("ann", "pw") }, http.StatusOK},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer tok") }, http.StatusOK},
	} {
		w := get(basic, "10.0.0.7:5000", tc.set)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
		if tc.want == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s: WWW-Authenticate %q, want Basic", tc.name, w.Header().Get("WWW-Authenticate"))
		}
	}
	if _, err := NewDatabase(open.b.(*sqlBackend).st, Options{Auth: Auth{Username: "ann"}}); err == nil {
		t.Error("a user without a password: no error")
	}
}

// A POST without its CSRF token (or with another browser's) is refused and
// changes nothing; with it, it is served.
func TestPostWithoutCSRFTokenRefused(t *testing.T) {
	f := newDBFixture(t, 30, Options{})
	b := newBrowser(t, f.srv.URL)
	token := b.token()
	noToken := redriveForm("")
	otherToken := redriveForm(newBrowser(t, f.srv.URL).token())
	for name, form := range map[string]url.Values{"no token": noToken, "another browser's token": otherToken} {
		if code, _ := b.post("/act", form); code != http.StatusForbidden {
			t.Errorf("POST /act with %s: %d, want 403", name, code)
		}
	}
	// Without the cookie, the token alone is refused too.
	resp, err := http.PostForm(f.srv.URL+"/act", redriveForm(token))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /act with the token but not its cookie: %d, want 403", resp.StatusCode)
	}
	if jobs, dlq := f.counts(t); jobs != 0 || dlq != 30 {
		t.Fatalf("refused POSTs moved messages: %d in jobs, %d in the DLQ", jobs, dlq)
	}
	if code, _ := b.post("/act", redriveForm(token)); code != http.StatusSeeOther {
		t.Errorf("POST /act with its token: %d, want 303", code)
	}
}

// A read-only console shows no action and refuses every one, with a valid
// CSRF token too.
func TestReadOnlyRefusesEveryAction(t *testing.T) {
	f := newDBFixture(t, 30, Options{ReadOnly: true, Workers: []Worker{{LeasePage: "http://127.0.0.1:1/debug/sqsloop"}}})
	b := newBrowser(t, f.srv.URL)
	token := b.token()
	for path, form := range map[string]url.Values{
		"/act":           redriveForm(token),
		"/look":          {"csrf": {token}, "queue": {"jobs-dlq"}},
		"/job/cancel":    {"csrf": {token}, "id": {"1"}},
		"/workers/drain": {"csrf": {token}, "worker": {"0"}, "op": {"drain"}},
	} {
		if code, _ := b.post(path, form); code != http.StatusForbidden {
			t.Errorf("read-only POST %s: %d, want 403", path, code)
		}
	}
	for _, action := range []string{"redrive", "delete", "export"} {
		if code, _ := b.get("/act?queue=jobs-dlq&to=jobs&action=" + action); code != http.StatusForbidden {
			t.Errorf("read-only dry run of %s: %d, want 403", action, code)
		}
	}
	for _, path := range []string{"/", "/queue?name=jobs-dlq&select=all", "/workers", "/jobs"} {
		code, body := b.get(path)
		if code != http.StatusOK {
			t.Errorf("read-only GET %s: %d, want 200", path, code)
		}
		for _, hidden := range []string{`id="select-all"`, `id="act"`, `action="/act"`, `action="/workers/drain"`, `action="/look"`} {
			if strings.Contains(body, hidden) {
				t.Errorf("read-only GET %s shows %s", path, hidden)
			}
		}
	}
	if jobs, dlq := f.counts(t); jobs != 0 || dlq != 30 {
		t.Fatalf("a read-only console moved messages: %d in jobs, %d in the DLQ", jobs, dlq)
	}
}

// Every page is served under the strict Content-Security-Policy, with its
// script and stylesheet as files of the console (no inline script or
// style).
func TestPagesUnderContentSecurityPolicy(t *testing.T) {
	f := newDBFixture(t, 10, Options{Prefix: "/ops"})
	mux := http.NewServeMux()
	mux.Handle("/ops/", f.c)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := newBrowser(t, srv.URL+"/ops")
	inline := regexp.MustCompile(`<script>|<style|style="|\son[a-z]+="`)
	for _, path := range []string{"/", "/queue?name=jobs-dlq&select=all", "/message?queue=jobs-dlq&key=1", "/jobs", "/workers",
		"/act?queue=jobs-dlq&action=redrive&to=jobs"} {
		resp, err := b.client.Get(b.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != contentSecurityPolicy {
			t.Errorf("GET %s: %d, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
		}
		if m := inline.Find(body); m != nil {
			t.Errorf("GET %s holds inline script or style: %q", path, m)
		}
		if !bytes.Contains(body, []byte(`href="/ops/static/console.css"`)) || !bytes.Contains(body, []byte(`src="/ops/static/console.js"`)) {
			t.Errorf("GET %s: no links to the prefixed assets", path)
		}
	}
	for _, asset := range []string{"/static/console.css", "/static/console.js"} {
		if code, _ := b.get(asset); code != 200 {
			t.Errorf("GET %s: %d", asset, code)
		}
	}
}

// The message page shows the whole record, the body pretty-printed, and
// the message's history (its move back by an earlier action).
func TestMessagePageShowsHistory(t *testing.T) {
	f := newDBFixture(t, 3, Options{})
	b := newBrowser(t, f.srv.URL)
	code, loc := b.post("/act", url.Values{"csrf": {b.token()}, "queue": {"jobs-dlq"}, "action": {"redrive"}, "to": {"jobs"}, "body": {`"n":1,`}})
	if code != http.StatusSeeOther {
		t.Fatalf("redrive: %d", code)
	}
	id, _ := strconv.Atoi(loc[strings.Index(loc, "id=")+3:])
	b.waitJob(id)
	msgs, err := f.st.Browse(t.Context(), "jobs", sqlmailbox.MessageFilter{}, 0, 10)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("%d in jobs (%v), want 1", len(msgs), err)
	}
	_, body := b.get("/message?queue=jobs&key=" + strconv.FormatInt(msgs[0].Seq, 10))
	for _, want := range []string{"{\n  &#34;n&#34;: 1,", "tier", "silver", "moved", "redriven to jobs by console action"} {
		if !strings.Contains(body, want) {
			t.Errorf("the message page lacks %q:\n%s", want, body)
		}
	}
}

// The console's filter and a database's agree, field by field: the
// database applies all of it but the JSON path, the console matches SQS's
// messages (and the JSON path) itself.
func TestFilterAgreesWithDatabase(t *testing.T) {
	f := newDBFixture(t, 60, Options{})
	ctx := t.Context()
	b := f.c.b.(*sqlBackend)
	q := &queueInfo{Name: "jobs-dlq"}
	var all []*record
	p, err := b.browse(ctx, q, filter{}, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	all = p.Records
	mid := all[30].SentAt
	for _, fl := range []filter{
		{Body: `"tier":"gold"`}, {Attribute: "tier"}, {Attribute: "tier", AttributeValue: "silver"}, {Path: "tier", PathValue: "gold"},
		{Path: "$.n", PathValue: "7"}, {Path: "n"}, {Path: "missing"}, {MinReceives: 1}, {MaxReceives: 1}, {SentBefore: mid},
		{SentAfter: mid}, {Group: "g"}, {Attribute: "tier", AttributeValue: "gold", Path: "n", PathValue: "3"},
	} {
		want := 0
		for _, r := range all {
			if fl.match(r) {
				want++
			}
		}
		n, err := b.count(ctx, q, fl)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := b.browse(ctx, q, fl, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if n.N != want || len(pg.Records) != want {
			t.Errorf("filter %s: the console matches %d, the database counts %d and lists %d", fl, want, n.N, len(pg.Records))
		}
	}
}

// parseFilter reads what the form sends and names a bad field.
func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f, err := parseFilter(url.Values{"attr": {"tier=gold"}, "path": {"a.b[0]=x"}, "older": {"10m"}, "rcmin": {"2"}}, now)
	if err != nil || f.Attribute != "tier" || f.AttributeValue != "gold" || f.Path != "a.b[0]" || f.PathValue != "x" ||
		!f.SentBefore.Equal(now.Add(-10*time.Minute)) || f.MinReceives != 2 {
		t.Errorf("parseFilter: %+v, %v", f, err)
	}
	back, err := parseFilter(f.values(), now.Add(time.Hour))
	if err != nil || back != f {
		t.Errorf("round trip through an action's form: %+v, %v; want %+v (the ages fixed)", back, err, f)
	}
	for q, field := range map[string]string{"attr=a%22b": "attr", "rcmin=x": "rcmin", "older=-1m": "older", "path=a[x]": "path", "attr==v": "attr"} {
		v, _ := url.ParseQuery(q)
		if _, err := parseFilter(v, now); err == nil || !strings.HasPrefix(err.Error(), field+":") {
			t.Errorf("parseFilter(%s): %v, want an error naming %s", q, err, field)
		}
	}
}

// The JSON path reads objects and arrays, and compares scalars as JSON
// writes them.
func TestMatchPath(t *testing.T) {
	body := `{"a":{"b":[{"c":"x"},{"c":2.50}],"0":"zero"},"t":true,"n":null}`
	for _, tc := range []struct {
		path, value string
		want        bool
	}{
		{"a.b[0].c", "x", true}, {"$.a.b[1].c", "2.50", true}, {"a.b.1.c", "2.50", true}, {"a.0", "zero", true},
		{"t", "true", true}, {"n", "null", true}, {"a.b[2]", "", false}, {"a.b", "", true}, {"a.c", "", false}, {"a.b[0].c", "y", false},
	} {
		if got := (filter{Path: tc.path, PathValue: tc.value}).matchPath(body); got != tc.want {
			t.Errorf("%s = %q: %v, want %v", tc.path, tc.value, got, tc.want)
		}
	}
	// Values JSON writes escaped are found all the same (the substring
	// shortcut does not apply to them).
	for _, tc := range []struct{ body, value string }{
		{`{"s":"a\"b"}`, `a"b`}, {`{"s":"\u00e9t\u00e9"}`, "été"}, {`{"s":"x \u003c y"}`, "x < y"}, {`{"s": {"k": 1}}`, `{"k":1}`},
	} {
		if !(filter{Path: "s", PathValue: tc.value}).matchPath(tc.body) {
			t.Errorf("%s: s = %q did not match", tc.body, tc.value)
		}
	}
	if (filter{Path: "a"}).matchPath("not json") {
		t.Error("a body that is not JSON matched a path")
	}
}

// The pacer lets at most rate messages a second go, the first batch at
// once, and saves up no burst from a slow stretch.
func TestPacer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		p := &pacer{rate: 500}
		start := time.Now()
		for range 311 {
			if err := p.wait(ctx, 10); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 6200*time.Millisecond {
			t.Errorf("3,110 messages at 500/s: the last batch went after %v, want 6.2s", d)
		}
		time.Sleep(10 * time.Second) // a slow receive
		start = time.Now()
		for range 3 {
			if err := p.wait(ctx, 100); err != nil {
				t.Fatal(err)
			}
		}
		if d := time.Since(start); d != 400*time.Millisecond {
			t.Errorf("after a pause, 300 messages at 500/s: the last batch went after %v, want 400ms (no burst saved up)", d)
		}
	})
}

// Cancel stops an action between two batches: it ends cancelled, and the
// count it shows is what moved.
func TestCancelStopsAnAction(t *testing.T) {
	f := newDBFixture(t, 300, Options{})
	b := newBrowser(t, f.srv.URL)
	token := b.token()
	form := redriveForm(token)
	form.Set("rate", "20") // 2 a batch, 10 batches a second: 5 s for the 100
	code, loc := b.post("/act", form)
	if code != http.StatusSeeOther {
		t.Fatalf("POST /act: %d", code)
	}
	id := loc[strings.Index(loc, "id=")+3:]
	for deadline := time.Now().Add(patience); ; time.Sleep(20 * time.Millisecond) {
		_, body := b.get("/job?id=" + id + "&format=json")
		var v jobView
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
		if v.Done > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the action never moved a message")
		}
	}
	if code, _ := b.post("/job/cancel", url.Values{"csrf": {token}, "id": {id}}); code != http.StatusSeeOther {
		t.Fatalf("cancel: %d", code)
	}
	n, _ := strconv.Atoi(id)
	v := b.waitJob(n)
	jobs, dlq := f.counts(t)
	if v.State != jobCancelled || v.Done == 0 || v.Done >= 100 || jobs != v.Done || dlq != 300-v.Done {
		t.Errorf("cancelled action %+v; %d in jobs, %d in the DLQ: want cancelled, its count moved, the rest left", v, jobs, dlq)
	}
}
