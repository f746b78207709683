package ecsprotect_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/ecsprotect"
	"github.com/sqsloop/sqsloop/memmailbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// agent stands in for the ECS container agent's task-protection endpoint:
// it records each PUT and answers as the agent does, or fails as told.
type agent struct {
	mu    sync.Mutex
	calls []call
	fail  string // "": answer; "500": HTTP 500 with an error; "failure": 200 with a failure; "hang": no answer until the request ends
}

type call struct {
	at      time.Time
	enabled bool
	minutes int
}

func (a *agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, ecsprotect.Path) || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
		return
	}
	var body struct {
		ProtectionEnabled *bool
		ExpiresInMinutes  int
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.ProtectionEnabled == nil {
		http.Error(w, `{"error":{"Code":"InvalidParameterException","Message":"ProtectionEnabled is required"}}`, http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	fail := a.fail
	a.calls = append(a.calls, call{at: time.Now(), enabled: *body.ProtectionEnabled, minutes: body.ExpiresInMinutes})
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch fail {
	case "500":
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"Arn":"arn:aws:ecs:task/1","Code":"ServerException","Message":"the ECS API did not answer"}}`)
		return
	case "failure":
		_, _ = io.WriteString(w, `{"failure":{"Arn":"arn:aws:ecs:task/1","Detail":"standalone task","Reason":"TASK_NOT_VALID"}}`)
		return
	case "hang":
		<-r.Context().Done()
		return
	}
	exp := ""
	if *body.ProtectionEnabled {
		exp = `"ExpirationDate":"` + time.Now().Add(time.Duration(body.ExpiresInMinutes)*time.Minute).UTC().Format(time.RFC3339) + `",`
	}
	_, _ = io.WriteString(w, `{"protection":{`+exp+`"ProtectionEnabled":`+map[bool]string{true: "true", false: "false"}[*body.ProtectionEnabled]+`,"TaskArn":"arn:aws:ecs:task/1"}}`)
}

func (a *agent) log() []call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]call(nil), a.calls...)
}

func (a *agent) setFail(f string) {
	a.mu.Lock()
	a.fail = f
	a.mu.Unlock()
}

// inMemory serves requests with h in this process: no socket, so that a
// synctest bubble's clock runs.
type inMemory struct{ h http.Handler }

func (t inMemory) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// holder is a Holder whose messages in flight a test sets.
type holder struct{ n atomic.Int64 }

func (h *holder) Stats() consumer.Stats {
	var s consumer.Stats
	s.Held = h.n.Load()
	return s
}

// logs is a Logger whose WARN records a test reads.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newProtector(t *testing.T, h ecsprotect.Holder, a *agent, l *logs, cfg ecsprotect.Config) *ecsprotect.Protector {
	t.Helper()
	cfg.AgentURI = "http://169.254.170.2/api/task-1"
	cfg.Client = &http.Client{Transport: inMemory{a}}
	cfg.Logger = slog.New(slog.NewTextHandler(l, nil))
	p, err := ecsprotect.New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(p *ecsprotect.Protector) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	return func() { cancel(); <-done }
}

// Set within a second of the first message held, renewed before it
// expires while messages are held (every ExpiresIn/2), cleared within a
// second of idle, set again by the next message, and cleared when Run
// stops; no call while idle.
func TestProtectionFollowsTheMessagesHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, h, l := &agent{}, &holder{}, &logs{}
		p := newProtector(t, h, a, l, ecsprotect.Config{ExpiresIn: 2 * time.Minute})
		stop := run(p)
		time.Sleep(10 * time.Second)
		if c := a.log(); len(c) != 0 {
			t.Fatalf("%d calls while idle, want none", len(c))
		}
		held := time.Now()
		h.n.Store(3)
		time.Sleep(10 * time.Minute)
		idle := time.Now()
		h.n.Store(0)
		time.Sleep(5 * time.Second)
		again := time.Now()
		h.n.Store(1)
		time.Sleep(5 * time.Second)
		stopped := time.Now()
		stop()

		c := a.log()
		if len(c) < 2 || !c[0].enabled || c[0].minutes != 2 || c[0].at.Sub(held) > time.Second {
			t.Fatalf("calls %+v: want the first an enable of 2 minutes within 1s of %v", c, held)
		}
		i := 1
		for ; i < len(c) && c[i].enabled; i++ {
			if gap := c[i].at.Sub(c[i-1].at); gap >= 2*time.Minute || gap < time.Minute-time.Second {
				t.Errorf("renewal %d came %v after the one before, want about half of 2m, before it expired", i, gap)
			}
		}
		if i < 10 { // 10 min of 2 min protections renewed every minute
			t.Errorf("%d enables while messages were held 10 min, want 10 or more", i)
		}
		if i == len(c) || c[i].enabled || c[i].at.Before(idle) || c[i].at.Sub(idle) > time.Second {
			t.Fatalf("calls %+v: want a clear within 1s of %v", c, idle)
		}
		if i+2 >= len(c)+1 || !c[i+1].enabled || c[i+1].at.Sub(again) > time.Second {
			t.Fatalf("calls %+v: want an enable within 1s of %v", c, again)
		}
		if last := c[len(c)-1]; last.enabled || last.at.Before(stopped) || len(c) != i+3 {
			t.Errorf("calls %+v: want the last a clear as Run stopped at %v", c, stopped)
		}
	})
}

// A failing endpoint (HTTP 500, a failure answer, no answer at all) is
// logged at WARN, once, tried again with back-off, and blocks nothing: a
// consumer next to it consumes every message, and the protection is set
// once the endpoint answers again.
func TestFailingEndpointIsLoggedAndBlocksNothing(t *testing.T) {
	for _, fail := range []string{"500", "failure", "hang"} {
		synctest.Test(t, func(t *testing.T) {
			var b memmailbox.Broker
			defer b.Close()
			q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
			if err != nil {
				t.Fatal(err)
			}
			var done atomic.Int64
			c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
				time.Sleep(time.Second)
				done.Add(1)
				return nil
			}, consumer.Config{Concurrency: 4, WaitTime: time.Second, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			a, l := &agent{fail: fail}, &logs{}
			p := newProtector(t, c, a, l, ecsprotect.Config{})
			ctx, cancel := context.WithCancel(context.Background())
			consumed := make(chan error, 1)
			go func() { consumed <- c.Run(ctx) }()
			stop := run(p)
			out := make([]sqsloop.OutgoingMessage, 10)
			for i := range out {
				out[i] = sqsloop.OutgoingMessage{Body: "job"}
			}
			for range 4 {
				if _, err := q.Send(t.Context(), out); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(11 * time.Second) // 10 s of work for 4 handlers
			if n := done.Load(); n != 40 {
				t.Errorf("%s: %d of 40 messages done in 11 s next to a failing endpoint, want all", fail, n)
			}
			if n := strings.Count(l.String(), "level=WARN"); n != 1 {
				t.Errorf("%s: %d WARN lines, want 1:\n%s", fail, n, l)
			}
			if c := a.log(); len(c) < 2 || len(c) > 8 {
				t.Errorf("%s: %d calls in 11 s, want a few (back-off from 1 s)", fail, len(c))
			}
			a.setFail("")
			for range 4 { // 10 s of work, past the back-off
				if _, err := q.Send(t.Context(), out); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(40 * time.Second)
			if c := a.log(); !slicesHasEnable(c) {
				t.Errorf("%s: no protection set once the endpoint answered: %+v", fail, c)
			}
			cancel()
			if err := <-consumed; err != nil {
				t.Error(err)
			}
			stop()
			if c := a.log(); c[len(c)-1].enabled {
				t.Errorf("%s: the protection was not cleared: %+v", fail, c)
			}
		})
	}
}

func slicesHasEnable(c []call) bool {
	for _, x := range c {
		if x.enabled {
			return true
		}
	}
	return false
}

// On the wire (a real HTTP server, the wall clock), beside a consumer: the
// protection is set while a message runs and cleared once it is done (how
// long each took is logged; the bounds are the virtual-time test's), kept
// while the drain waits for a running job, and cleared when Run stops
// after it.
func TestProtectionOnTheWire(t *testing.T) {
	a := &agent{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	var b memmailbox.Broker
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
		started <- struct{}{}
		<-release
		return nil
	}, consumer.Config{Concurrency: 4, WaitTime: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ecsprotect.New(c, ecsprotect.Config{AgentURI: srv.URL, Client: srv.Client(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	consumed := make(chan error, 1)
	go func() { consumed <- c.Run(ctx) }()
	stop := run(p)
	sent := time.Now()
	if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "job"}}); err != nil {
		t.Fatal(err)
	}
	<-started
	waitFor(t, func() bool { return len(a.log()) == 1 })
	set := a.log()[0].at.Sub(sent)
	close(release)
	idle := time.Now()
	waitFor(t, func() bool { return len(a.log()) == 2 })
	cleared := a.log()[1].at.Sub(idle)

	release = make(chan struct{})
	if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "job"}}); err != nil {
		t.Fatal(err)
	}
	<-started
	waitFor(t, func() bool { return len(a.log()) == 3 })
	cancel() // the drain: the running job goes on, the task stays protected
	time.Sleep(300 * time.Millisecond)
	if n := len(a.log()); n != 3 {
		t.Errorf("%d calls while the drain waited for a job, want the protection kept", n)
	}
	close(release)
	if err := <-consumed; err != nil {
		t.Fatal(err)
	}
	stop()
	calls := a.log()
	if last := calls[len(calls)-1]; last.enabled {
		t.Errorf("calls %+v: the protection was not cleared on drain", calls)
	}
	t.Logf("on the wire: set %v after the send, cleared %v after idle", set.Round(time.Millisecond), cleared.Round(time.Millisecond))
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatal("gave up after 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// New checks its Config, each field named; without ECS_AGENT_URI it says
// this is no ECS task.
func TestNewChecks(t *testing.T) {
	t.Setenv("ECS_AGENT_URI", "")
	h := &holder{}
	for _, tc := range []struct {
		cfg   ecsprotect.Config
		field string
	}{
		{ecsprotect.Config{}, "ECS_AGENT_URI"},
		{ecsprotect.Config{AgentURI: "169.254.170.2"}, "AgentURI"},
		{ecsprotect.Config{AgentURI: "http://a", ExpiresIn: 49 * time.Hour}, "ExpiresIn"},
		{ecsprotect.Config{AgentURI: "http://a", CheckInterval: time.Millisecond}, "CheckInterval"},
		{ecsprotect.Config{AgentURI: "http://a", ExpiresIn: time.Minute, IdleAfter: time.Minute}, "IdleAfter"},
	} {
		if _, err := ecsprotect.New(h, tc.cfg); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("New(%+v) = %v, want an error naming %s", tc.cfg, err, tc.field)
		}
	}
	t.Setenv("ECS_AGENT_URI", "http://169.254.170.2/api/x")
	if _, err := ecsprotect.New(h, ecsprotect.Config{}); err != nil {
		t.Errorf("New with ECS_AGENT_URI set: %v", err)
	}
}
