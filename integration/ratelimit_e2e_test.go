package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/internal/harness/childproc"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// rateChildEnv makes this test binary a consumer process of the rate limit
// tests (rateChildMain); its value is a rateChildConfig in JSON.
const rateChildEnv = "SQSLOOP_E2E_RATE_CHILD"

// rateChildConfig is what a rate child runs: a consumer of Queue with
// Concurrency handlers of Job each and a rate limit of Rate per Per on the
// messages whose "kind" attribute is "email", its turns in the store
// StateDialect and StateTarget name (openState). Its handler says "start
// ID SENT NOW COUNT" (the body, the send time in Unix nanoseconds; the
// start in Unix nanoseconds; the receive count); on its way out it says
// "exit" and the consumer's Stats in JSON.
type rateChildConfig struct {
	Queue                     childConfig
	StateDialect, StateTarget string
	Rate                      int
	Per, Job                  time.Duration
	Concurrency               int
}

func rateChildMain(raw string) int {
	var cfg rateChildConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return childproc.Failed(fmt.Errorf("%s: %w", rateChildEnv, err))
	}
	ctx := context.Background()
	mb, closeAll, err := cfg.Queue.open(ctx)
	if err != nil {
		return childproc.Failed(err)
	}
	defer closeAll()
	store, closeStore, err := openState(ctx, cfg.StateDialect, cfg.StateTarget)
	if err != nil {
		return childproc.Failed(err)
	}
	defer closeStore()
	c, err := consumer.New(mb, func(ctx context.Context, m *sqsloop.Message) error {
		childproc.Say("start %s %s %d %d", m.ID, m.Body, time.Now().UnixNano(), m.ReceiveCount)
		select {
		case <-time.After(cfg.Job):
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}, consumer.Config{
		Concurrency: cfg.Concurrency, WaitTime: 2 * time.Second, ShutdownTimeout: 10 * time.Second, Logger: warnLogger(),
		RateLimits: []consumer.RateLimit{{
			Name: "kind", Rate: cfg.Rate, Per: cfg.Per, Store: store.(jobstate.RateLimiter),
			Key: func(m *sqsloop.Message) string {
				if k := m.MessageAttributes["kind"]; k.StringValue == "email" {
					return "email"
				}
				return ""
			},
		}},
	})
	if err != nil {
		return childproc.Failed(err)
	}
	var group lifecycle.LoopGroup
	if err := group.Add("consumer", c); err != nil {
		return childproc.Failed(err)
	}
	err = group.Run(ctx)
	st, _ := json.Marshal(c.Stats())
	childproc.Say("exit %s", st)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// rateQueue is a queue with a dead-letter queue (maxReceiveCount 5) that
// rate children can share with the test.
type rateQueue struct {
	mb, dlq sqsloop.Mailbox
	child   childConfig
}

// forEachRateBackend runs body, as parallel subtests, on a queue with a
// DLQ on the SQS server (its rate limit kept by DynamoDB: dynalite) and in
// PostgreSQL and SQLite (kept by the same database, as stateOf chooses).
func forEachRateBackend(t *testing.T, body func(t *testing.T, q rateQueue, dialect, target string)) {
	const vis = 30 * time.Second
	t.Run("sqsmailbox", func(t *testing.T) {
		t.Parallel()
		h := sqsServerHarness(t)
		q, cleanup := h.NewQueue(t.Context(), t, mailboxtest.QueueOptions{VisibilityTimeout: vis, MaxReceiveCount: 5})
		defer cleanup()
		child := childOn(t, q, 0, 0)
		body(t, rateQueue{q.Mailbox, q.DLQ, child}, "dynamodb", dynamoTable(t))
	})
	sql := func(t *testing.T, dialect, target string, open func() (*sqlmailbox.Store, error)) {
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		mb, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: vis, MaxReceiveCount: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer mb.Close()
		dlq, err := mb.OpenDeadLetterQueue(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer dlq.Close()
		child := childConfig{Dialect: dialect, Target: target, Queue: "jobs"}
		sd, stt := stateOf(t, processQueue{"sqlmailbox/" + dialect, mb, child})
		body(t, rateQueue{mb, dlq, child}, sd, stt)
	}
	t.Run("sqlmailbox/postgres", func(t *testing.T) {
		t.Parallel()
		dsn := sqlharness.FreshDatabase(t)
		sql(t, "postgres", dsn, func() (*sqlmailbox.Store, error) { return postgres.Open(t.Context(), dsn, postgres.Options{}) })
	})
	t.Run("sqlmailbox/sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "jobs.db")
		sql(t, "sqlite", path, func() (*sqlmailbox.Store, error) { return sqlite.Open(t.Context(), path, sqlite.Options{}) })
	})
}

// A rate limit of 50 a second for one kind, kept by a store the consumer
// processes share: 3 processes of 16 handlers (100 ms jobs, so 480 a
// second unlimited) on a backlog of that kind, for 10 s (60 s with
// SQSLOOP_FLEET_FULL=1), on the SQS server with DynamoDB (dynalite), on
// PostgreSQL and on SQLite. The measured rate is within 5 % of 50 a second,
// no second has more than 60 starts (checked in the full run: in CI a
// loaded machine delays starts into the next second), no message failed
// or was dead-lettered, and a message's receive count grew by at most one
// per minute it waited (the figures are logged).
func TestE2ERateLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	d := 10 * time.Second
	if fullFleet() {
		d = time.Minute
	}
	const rate, procs = 50, 3
	forEachRateBackend(t, func(t *testing.T, q rateQueue, dialect, target string) {
		ctx := t.Context()
		n := rate*int(d/time.Second) + 20*rate // past the run: a backlog to the end
		sendKind(ctx, t, q.mb, n)
		cfg := rateChildConfig{Queue: q.child, StateDialect: dialect, StateTarget: target, Rate: rate, Per: time.Second,
			Job: 100 * time.Millisecond, Concurrency: 16}
		var (
			mu     sync.Mutex
			starts []rateStart
			exits  []consumer.Stats
			wg     sync.WaitGroup
		)
		children := make([]child, procs)
		for i := range children {
			children[i] = startChild(t, rateChildEnv, cfg)
			wg.Go(func() {
				for line := range children[i].Lines {
					f := strings.Fields(line)
					mu.Lock()
					switch {
					case len(f) == 5 && f[0] == "start":
						sent, _ := strconv.ParseInt(f[2], 10, 64)
						at, _ := strconv.ParseInt(f[3], 10, 64)
						count, _ := strconv.Atoi(f[4])
						starts = append(starts, rateStart{id: f[1], sent: time.Unix(0, sent), at: time.Unix(0, at), count: count, child: i})
					case len(f) == 2 && f[0] == "exit":
						var st consumer.Stats
						if err := json.Unmarshal([]byte(f[1]), &st); err == nil {
							exits = append(exits, st)
						}
					}
					mu.Unlock()
				}
			})
		}
		began := time.Now()
		time.Sleep(d + 5*time.Second) // the first turns wait for the processes to start
		for _, c := range children {
			_ = c.Cmd.Process.Signal(syscall.SIGTERM)
		}
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(time.Minute):
			t.Fatalf("the children did not exit within a minute of SIGTERM; stderr:\n%s", children[0].Stderr())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(exits) != procs || len(starts) == 0 {
			t.Fatalf("%d exits, %d starts; stderr:\n%s", len(exits), len(starts), children[0].Stderr())
		}
		slices.SortFunc(starts, func(a, b rateStart) int { return a.at.Compare(b.at) })
		from := starts[0].at.Add(time.Second) // past the first turns' burst of processes starting
		to := from.Add(d)
		perSecond := map[int]int{}
		counted, most, worst := 0, 0, ""
		var byChild [procs]int
		var growth []string
		for _, s := range starts {
			if !s.at.Before(from) && s.at.Before(to) {
				counted++
				byChild[s.child]++
				sec := int(s.at.Sub(from) / time.Second)
				perSecond[sec]++
				if perSecond[sec] > most {
					most, worst = perSecond[sec], fmt.Sprint("second ", sec)
				}
			}
			// A message's receive count grows by at most one per minute
			// it waits: count − 1 ≤ ⌊waited ÷ 1 min⌋.
			if w := s.at.Sub(s.sent); s.count-1 > int(w/time.Minute) {
				growth = append(growth, fmt.Sprintf("%s: receive count %d after %v", s.id, s.count, w.Round(time.Second)))
			}
		}
		got := float64(counted) / d.Seconds()
		if os.Getenv("SQSLOOP_FLEET_DEBUG") != "" {
			secs := make([]int, 0, len(perSecond))
			for i := range int(d/time.Second) + 1 {
				secs = append(secs, perSecond[i])
			}
			t.Logf("starts per second: %v", secs)
		}
		var failed, deferred, waits int64
		for _, st := range exits {
			failed, deferred, waits = failed+st.Failed, deferred+st.Deferred, waits+st.Waited
		}
		redelivered, maxCount := 0, 0
		for _, s := range starts {
			if s.count > 1 {
				redelivered++
			}
			maxCount = max(maxCount, s.count)
		}
		dead := len(leftovers(context.WithoutCancel(ctx), t, q.dlq, time.Second))
		t.Logf("%s, limit kept by %s, 3 processes for %v: %.2f a second (%d starts; by process %v), busiest %s with %d; "+
			"waits %d, deferred %d, failed %d, dead-lettered %d; %d of %d starts received more than once, the most %d times (ran %v in all)",
			t.Name(), dialect, d, got, counted, byChild, worst, most, waits, deferred, failed, dead, redelivered, len(starts), maxCount, time.Since(began).Round(time.Second))
		// Above the limit is a broken promise; below it, on a loaded machine,
		// is the machine's speed: a failure only in the acceptance run at
		// full size (SQSLOOP_FLEET_FULL), a line of the log in CI.
		switch {
		case got > rate*1.05:
			t.Errorf("%.2f starts a second, want at most 50 + 5 %%", got)
		case got < rate*0.95 && os.Getenv("SQSLOOP_FLEET_FULL") != "":
			t.Errorf("%.2f starts a second, want 50 within 5 %%", got)
		case got < rate*0.95:
			t.Logf("%.2f starts a second, under 50 - 5 %%: the machine did not keep up (not the limit's doing; SQSLOOP_FLEET_FULL makes it a failure)", got)
		}
		// The busiest second counts handler starts, which a loaded
		// machine delays past the grants they follow (CI: 68 in one
		// second, 130 in two, while the run's rate stayed under 50): a
		// failure in the full run, a line of the log in CI, where the
		// run's rate above is the check (a limit not kept gives about
		// 480 a second).
		switch {
		case most > 60 && fullFleet():
			t.Errorf("%s had %d starts, want at most 60", worst, most)
		case most > 60:
			t.Logf("%s had %d starts, over 60: starts the machine delayed (SQSLOOP_FLEET_FULL makes it a failure)", worst, most)
		}
		if failed > 0 || dead > 0 {
			t.Errorf("%d failed, %d dead-lettered; want none because of the limit", failed, dead)
		}
		if len(growth) > 0 {
			t.Errorf("%d messages' receive counts grew by more than one per minute waited: %v", len(growth), growth[:min(5, len(growth))])
		}
	})
}

// dynamoTable creates a table on the DynamoDB-compatible server
// DYNAMODB_ENDPOINT names (skipped without one, failed under CI=true), with
// a client whose connections end with t, and deletes it when t ends.
func dynamoTable(t *testing.T) string {
	t.Helper()
	if os.Getenv("DYNAMODB_ENDPOINT") == "" && os.Getenv("CI") != "true" {
		t.Skip("DYNAMODB_ENDPOINT is unset: no DynamoDB-compatible server to keep the rate limit of the SQS queue (scripts/test.sh starts dynalite)")
	}
	c, err := dynamoClient(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c = dynamodb.New(c.Options(), func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} })
	table := fmt.Sprintf("sqsloop-rate-%d", time.Now().UnixNano())
	if err := dynamostore.CreateTable(t.Context(), c, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })
	return table
}

// rateStart is one handler start a rate child reported.
type rateStart struct {
	id       string
	sent, at time.Time
	count    int
	child    int
}

// sendKind sends n messages of kind email, each body its send time in Unix
// nanoseconds, 10 batches at once.
func sendKind(ctx context.Context, t *testing.T, mb sqsloop.Mailbox, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	batches := make(chan int)
	for range 10 {
		wg.Go(func() {
			for size := range batches {
				out := make([]sqsloop.OutgoingMessage, size)
				for i := range out {
					out[i] = sqsloop.OutgoingMessage{Body: strconv.FormatInt(time.Now().UnixNano(), 10),
						MessageAttributes: map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "email"}}}
				}
				res, err := mb.Send(ctx, out)
				for _, r := range res {
					err = cmpErr(err, r.Err)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for sent := 0; sent < n; sent += sqsloop.MaxBatchSize {
		batches <- min(sqsloop.MaxBatchSize, n-sent)
	}
	close(batches)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
