// Command pgfleet runs a fleet of consumer processes on one sqlmailbox
// queue on PostgreSQL, with a dead-letter queue, at an offered rate, and
// counts the deadlocks the server detected: issue 25's acceptance run
// (two processes of 32 handlers, maxReceiveCount 25 as River's 25
// attempts, 600 jobs/s offered, 5 minutes; the public job-queue benchmark
// that found the ack's DELETE and the receive deadlocking ran that shape).
//
// It creates a database of its own on the server (dropped at the end),
// migrates it, creates the queue and its DLQ, and starts -processes copies
// of itself, each a consumer of -handlers handlers (each job -work long; a
// fraction -fail of the jobs fail every time, so they are nacked with the
// consumer's back-off and, after -max-receive-count receives, moved to the
// DLQ by a receive or a sweep) and a Sweeper every -sweep. This process
// sends -rate messages a second in batches of 10 (on a FIFO queue, -groups
// message groups) for -duration, then stops the consumers (SIGTERM: they
// drain) and reports what each did, every call that failed with SQLSTATE
// 40P01 (deadlock detected) by Mailbox method, and the database's
// pg_stat_database.deadlocks before and after; with -log, the server log's
// "deadlock detected" lines written during the run too.
//
//	eval "$(../scripts/postgres.sh start $$)"
//	go run ./cmd/pgfleet -duration 5m
//	go run ./cmd/pgfleet -duration 1m -fifo
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/pgdb"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// childEnv makes this program a consumer process: its value is the
// database's DSN.
const childEnv = "PGFLEET_CHILD_DSN"

type options struct {
	dsn             string
	duration        time.Duration
	processes       int
	handlers        int
	rate            int
	maxReceiveCount int
	fifo            bool
	groups          int
	work            time.Duration
	fail            float64
	visibility      time.Duration
	sweep           time.Duration
	log             string
}

func main() {
	var o options
	flag.StringVar(&o.dsn, "dsn", os.Getenv("PG_DSN"), "PostgreSQL server (default $PG_DSN)")
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "how long messages are offered")
	flag.IntVar(&o.processes, "processes", 2, "consumer processes")
	flag.IntVar(&o.handlers, "handlers", 32, "handlers per process (consumer.Config.Concurrency)")
	flag.IntVar(&o.rate, "rate", 600, "messages offered per second")
	flag.IntVar(&o.maxReceiveCount, "max-receive-count", 25, "the redrive policy's maxReceiveCount")
	flag.BoolVar(&o.fifo, "fifo", false, "a FIFO queue")
	flag.IntVar(&o.groups, "groups", 64, "message groups of a FIFO queue")
	flag.DurationVar(&o.work, "work", time.Millisecond, "each job's handler time")
	flag.Float64Var(&o.fail, "fail", 0.01, "fraction of the jobs that fail at every delivery (dead-lettered in the end)")
	flag.DurationVar(&o.visibility, "visibility", 5*time.Second, "the queue's visibility timeout")
	flag.DurationVar(&o.sweep, "sweep", time.Second, "each process's sweep interval")
	flag.StringVar(&o.log, "log", "", "the server's log file: count the \"deadlock detected\" lines written during the run")
	flag.Parse()
	if dsn := os.Getenv(childEnv); dsn != "" {
		os.Exit(child(dsn, o))
	}
	if o.dsn == "" {
		fmt.Fprintln(os.Stderr, "pgfleet: no PostgreSQL server: set PG_DSN or -dsn (eval \"$(scripts/postgres.sh start $$)\" starts one)")
		os.Exit(2)
	}
	if o.processes < 1 || o.handlers < 1 || o.rate < 1 || o.groups < 1 || o.fail < 0 || o.fail > 1 {
		fmt.Fprintln(os.Stderr, "pgfleet: -processes, -handlers, -rate and -groups must be at least 1, -fail within 0-1")
		os.Exit(2)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "pgfleet:", err)
		os.Exit(1)
	}
}

// queueName is the queue the fleet consumes.
func queueName(fifo bool) string {
	if fifo {
		return "jobs" + sqsloop.FIFOSuffix
	}
	return "jobs"
}

func run(ctx context.Context, o options) error {
	db, drop, err := pgdb.Fresh(ctx, o.dsn, "pgfleet_")
	if err != nil {
		return err
	}
	defer drop()
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return err
	}
	st, err := postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: queueName(o.fifo), FIFO: o.fifo, VisibilityTimeout: o.visibility,
		MaxReceiveCount: o.maxReceiveCount, ContentBasedDeduplication: o.fifo})
	if err != nil {
		return err
	}
	before, err := deadlocks(ctx, pool)
	if err != nil {
		return err
	}
	logStart := logSize(o.log)
	load := loadAverage()

	var children []*proc
	for i := range o.processes {
		c, err := startChild(db, i)
		if err != nil {
			return err
		}
		children = append(children, c)
	}
	progress("%d processes of %d handlers; offering %d messages/s for %v (load %.2f)", o.processes, o.handlers, o.rate, o.duration, load)
	sent, sendDeadlocks, sendErr := produce(ctx, mb, o)
	for _, c := range children {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	var reports []report
	for _, c := range children {
		r, err := c.wait()
		if err != nil {
			return err
		}
		reports = append(reports, r)
	}
	pool.Reset() // the backends exit, flushing their statistics
	time.Sleep(time.Second)
	after, err := deadlocks(ctx, pool)
	if err != nil {
		return err
	}
	attrs, err := mb.QueueAttributes(ctx)
	if err != nil {
		return err
	}
	dlq, err := mb.OpenDeadLetterQueue(ctx)
	if err != nil {
		return err
	}
	dattrs, err := dlq.(sqsloop.AttributesReader).QueueAttributes(ctx)
	if err != nil {
		return err
	}

	fmt.Printf("pgfleet: %s queue, maxReceiveCount %d, %d processes x %d handlers, %d/s offered for %v, jobs %v, %.0f%% failing, visibility %v, sweep every %v; load %.2f at the start, %.2f at the end\n",
		map[bool]string{false: "standard", true: "FIFO"}[o.fifo], o.maxReceiveCount, o.processes, o.handlers, o.rate, o.duration, o.work, 100*o.fail,
		o.visibility, o.sweep, load, loadAverage())
	fmt.Printf("sent %d (%.0f/s; send errors: %v; 40P01: %d)\n", sent, float64(sent)/o.duration.Seconds(), sendErr, sendDeadlocks)
	var total report
	for i, r := range reports {
		fmt.Printf("process %d: received %d, succeeded %d, failed %d, acked %d, ack failures %d, lost leases %d; 40P01 by call: %v\n",
			i, r.Received, r.Succeeded, r.Failed, r.Acked, r.AckFailed, r.LeasesLost, r.Deadlocks)
		total.add(r)
	}
	fmt.Printf("left: %d in the queue (%d in flight), %d in the DLQ\n", attrs.ApproximateMessages+attrs.ApproximateMessagesInFlight+attrs.ApproximateMessagesDelayed,
		attrs.ApproximateMessagesInFlight, dattrs.ApproximateMessages)
	fmt.Printf("deadlocks: pg_stat_database.deadlocks %d -> %d (%d); calls that failed with 40P01: %d", before, after, after-before, total.deadlocks()+sendDeadlocks)
	if o.log != "" {
		n, err := countDeadlocks(o.log, logStart)
		if err != nil {
			return err
		}
		fmt.Printf("; server log: %d \"deadlock detected\"", n)
	}
	fmt.Println()
	return nil
}

// senders is how many goroutines send: one Send of 10 waits for its
// commit, and a loaded machine's commits are slower than 600 messages a
// second in one line.
const senders = 4

// produce sends o.rate messages a second for o.duration, from senders
// goroutines each sending a batch of 10 every senders*10/o.rate seconds
// (a batch that comes late is not made up), and returns how many it sent
// and how many Send calls failed with 40P01.
func produce(ctx context.Context, mb sqsloop.Mailbox, o options) (sent, deadlocked int, err error) {
	var mu sync.Mutex
	var g errgroup.Group
	end := time.Now().Add(o.duration)
	every := time.Duration(float64(time.Second) * senders * sqsloop.MaxBatchSize / float64(o.rate))
	for w := range senders {
		g.Go(func() error {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for n := 0; time.Now().Before(end); n++ {
				<-tick.C
				batch := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
				for i := range batch {
					id := (n*senders+w)*sqsloop.MaxBatchSize + i
					batch[i].Body = fmt.Sprint("job ", id)
					if o.fifo {
						batch[i].MessageGroupID = fmt.Sprint("g", id%o.groups)
					}
				}
				res, err := mb.Send(ctx, batch)
				mu.Lock()
				if isDeadlock(err) {
					deadlocked++
				}
				for _, r := range res {
					if r.Err == nil {
						sent++
					}
				}
				mu.Unlock()
				if err != nil && !isDeadlock(err) {
					return err
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return sent, deadlocked, err
}

// proc is a consumer process.
type proc struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr strings.Builder
}

func startChild(db string, i int) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: exec.Command(exe, os.Args[1:]...)}
	p.cmd.Env = append(os.Environ(), childEnv+"="+db)
	p.cmd.Stderr = &p.stderr
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("process %d: %w", i, err)
	}
	return p, nil
}

// wait reads the process's report and waits for it to exit.
func (p *proc) wait() (report, error) {
	var r report
	dec := json.NewDecoder(bufio.NewReader(p.stdout))
	derr := dec.Decode(&r)
	if err := p.cmd.Wait(); err != nil {
		return r, fmt.Errorf("a consumer process: %w; stderr:\n%s", err, p.stderr.String())
	}
	if derr != nil {
		return r, fmt.Errorf("a consumer process's report: %w; stderr:\n%s", derr, p.stderr.String())
	}
	return r, nil
}

// deadlocks reads pg_stat_database.deadlocks of the current database.
func deadlocks(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n)
	return n, err
}

// logSize is the size of the server log, where the run's lines begin; 0
// without one.
func logSize(path string) int64 {
	if path == "" {
		return 0
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countDeadlocks counts the lines of the log at path, from offset on, that
// say "deadlock detected".
func countDeadlocks(path string, offset int64) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "deadlock detected") {
			n++
		}
	}
	return n, sc.Err()
}

// loadAverage returns the machine's load average over the last minute, or
// -1.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	var v float64
	if _, err := fmt.Sscan(string(b), &v); err != nil {
		return -1
	}
	return v
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pgfleet: "+format+"\n", args...)
}

// signalled returns a context that ends at SIGTERM or SIGINT.
func signalled() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}

// counter counts calls that failed with 40P01, by method.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) note(call string, err error) {
	if !isDeadlock(err) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[call]++
}

// isDeadlock reports whether err is PostgreSQL's "deadlock detected"
// (SQLSTATE 40P01): sqlmailbox wraps the server's error with %w.
func isDeadlock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "40P01"
}
