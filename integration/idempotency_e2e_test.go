package integration

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// keyRun is one handler run of a key in a job child: from its "start" to
// its "done", or to the kill of its process (end 0 until then). Times in
// Unix nanoseconds of the machine's clock, which the children share.
type keyRun struct {
	proc       int
	start, end int64
	done       bool // said "done"
	recorded   bool // then "returned": the completion recorded
}

// procLine is a line of job child proc; closed says its output ended.
type procLine struct {
	proc   int
	line   string
	closed bool
}

// Idempotency across processes, under faults and kills, on the SQS server
// (its jobstate on DynamoDB: dynalite's conditional writes decide between
// the processes) and on both databases (their jobstate beside them): two consumer processes (4 handlers each) of one
// queue, their mailbox failing 30 % of Receive, Delete and
// ChangeVisibility calls (faultyMailbox), run 40 keys, each sent twice
// (two messages with one body, the key). Twice, the process that runs one
// of two chosen keys is SIGKILLed after its handler returned and before its
// ack (the middleware's caller blocks until the kill), and a new process
// takes its place. Every key's handler completes exactly once,
// over every delivery of both its messages (each key would run at least
// twice without the middleware), and no two runs of one key overlap in
// time, across the processes.
func TestE2EIdempotentUnderFaultsAndKills(t *testing.T) {
	t.Parallel()
	const (
		lease = 2 * time.Second
		keys  = 40
	)
	forEachProcessBackend(t, lease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		var bodies []string
		for range 2 {
			for k := range keys {
				bodies = append(bodies, fmt.Sprintf("key-%02d", k))
			}
		}
		mailboxtest.SendBodies(ctx, t, q.mb, bodies...)
		dialect, target := stateOf(t, q)
		base := jobChildConfig{Queue: q.child, StateDialect: dialect, StateTarget: target, Idempotent: true,
			StepTime: 50 * time.Millisecond, Faults: true, Concurrency: 4}
		base.Queue.Lease = lease

		lines := make(chan procLine, 1<<14) // more than the children say: the relays never block
		var relays sync.WaitGroup
		defer relays.Wait()
		procs := map[int]child{}
		// The keys whose run blocks its process after its return, until
		// the kill: whichever process runs one first.
		freeze := []string{"key-05", "key-30"}
		start := func() {
			cfg := base
			n := len(procs) + 1
			cfg.Freeze, cfg.Seed = slices.Clone(freeze), uint64(n)
			p := startChild(t, jobChildEnv, cfg)
			procs[n] = p
			relays.Go(func() {
				for l := range p.Lines {
					lines <- procLine{proc: n, line: l}
				}
				lines <- procLine{proc: n, closed: true}
			})
		}
		start()
		start()
		// Before the relays are waited for (deferred earlier, run later):
		// they end once their children do, and a Fatalf (the deadline)
		// must not wait for children nobody kills.
		defer func() {
			for _, p := range procs {
				_ = p.Cmd.Process.Kill()
			}
		}()

		runs := map[string][]keyRun{}
		done := map[string]int{}
		killed := map[int]int64{}
		deadline := time.After(2 * time.Minute)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
	loop:
		for {
			select {
			case <-deadline:
				t.Fatalf("%s: %d of %d keys done after 2 minutes; %d processes killed", q.backend, len(done), keys, len(killed))
			case <-tick.C:
				if len(done) == keys && len(killed) == 2 && backlog(t, q.mb) == 0 {
					break loop
				}
			case l := <-lines:
				if l.closed {
					err := <-procs[l.proc].Exited
					if _, ok := killed[l.proc]; !ok || !killedBy(err, syscall.SIGKILL) {
						t.Fatalf("%s: process %d ended with %v, not by the test's kill; stderr:\n%s", q.backend, l.proc, err, procs[l.proc].Stderr())
					}
					continue
				}
				f := strings.Fields(l.line)
				switch {
				case len(f) == 3 && f[0] == "start":
					at, _ := strconv.ParseInt(f[2], 10, 64)
					runs[f[1]] = append(runs[f[1]], keyRun{proc: l.proc, start: at})
				case len(f) == 3 && f[0] == "done":
					at, _ := strconv.ParseInt(f[2], 10, 64)
					done[f[1]]++
					for i := range runs[f[1]] {
						if r := &runs[f[1]][i]; r.proc == l.proc && r.end == 0 {
							r.end, r.done = at, true
						}
					}
				case len(f) == 2 && f[0] == "returned":
					for i := range runs[f[1]] {
						if r := &runs[f[1]][i]; r.proc == l.proc && r.done {
							r.recorded = true
						}
					}
					if !slices.Contains(freeze, f[1]) {
						continue
					}
					// The handler returned and its completion is recorded;
					// the ack is not made: kill the process here.
					if err := procs[l.proc].Cmd.Process.Kill(); err != nil {
						t.Fatal(err)
					}
					killed[l.proc] = time.Now().UnixNano()
					freeze = slices.DeleteFunc(freeze, func(k string) bool { return k == f[1] })
					start()
				}
			}
		}
		for _, p := range procs {
			_ = p.Cmd.Process.Kill()
		}
		twice, window := 0, 0
		for k := range keys {
			key := fmt.Sprintf("key-%02d", k)
			rs := runs[key]
			recorded, cut := 0, 0
			for i := range rs {
				if rs[i].end == 0 { // cut by a kill
					rs[i].end = killed[rs[i].proc]
				}
				switch {
				case rs[i].recorded:
					recorded++
				case rs[i].done: // killed after the handler, before the completion record
					cut++
				}
			}
			window += cut
			// A run killed after its handler's "done" and before its
			// "returned" may or may not have recorded its completion
			// (the kill fell before or after the store's write): the
			// key may run once more, never more than that.
			if n := done[key]; n < 1 || n-cut > 1 || recorded > 1 {
				twice++
				t.Errorf("%s: %s completed %d times, %d of them killed before they said their completion was recorded, %d recorded; want one completion besides those",
					q.backend, key, n, cut, recorded)
			}
			for i := range rs {
				for j := range i {
					if rs[i].start < rs[j].end && rs[j].start < rs[i].end {
						t.Errorf("%s: two runs of %s overlapped: process %d and process %d", q.backend, key, rs[j].proc, rs[i].proc)
					}
				}
			}
		}
		started := 0
		for _, rs := range runs {
			started += len(rs)
		}
		t.Logf("%s: %d keys, 2 messages each, 30 %% faults, 2 processes killed between a handler's return and its ack, %d processes in all: %d runs started, %d keys completed other than once; %d runs killed between their handler's return and the middleware's (the window the middleware documents: the key may run again)",
			q.backend, keys, len(procs), started, twice, window)
	})
}

// backlog is how many messages mb holds: visible, in flight and delayed.
func backlog(t *testing.T, mb sqsloop.Mailbox) int {
	t.Helper()
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
	if err != nil {
		return -1
	}
	return a.ApproximateMessages + a.ApproximateMessagesInFlight + a.ApproximateMessagesDelayed
}
