// Package surface holds one test: the exported surface of every public
// package of the library stays at its bound, so that it cannot creep back
// silently (issue 19 brought the core from 188 names to 126; issue 25
// counts every public package, constants included).
package surface

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bounds are the exported names of each public package (every package of
// the module outside internal/ directories), relative to the module's
// root. A count must equal its bound: raise one only with a reason a
// reviewer accepts (a capability users need that no existing name gives),
// and lower it when names go, so that the slack never hides a new one.
//
// What the names are for, where a name alone does not say:
//
//   - root: the Mailbox contract and its types; the sentinel errors; the
//     request rules every Mailbox checks (ValidateSend, ValidateDelete,
//     ValidateChangeVisibility, ReceiveRequest.Validate and
//     WantsMessageAttribute, WholeSeconds, OutgoingMessage.Size,
//     Message.ParseSystemAttributes and SetSystemAttributes, QueueSpec's
//     methods), which a user's own Mailbox needs as ours do; the Observer,
//     its events (QueueEvent: the reads of the queue's counts, issue 27), NopObserver (its seven methods let an observer implement
//     only what it needs, and keep compiling when an event is added) and
//     Observers; the handler contract every runtime and middleware names
//     (Handler, Middleware, Permanent, ErrPermanent, NackAfter,
//     SlowDown and ErrSlowDown (back-pressure from a downstream),
//     GroupSkipper with MaxSkipGroups and ValidateSkip (a receive around
//     a consumer's busy groups; memmailbox's and sqlmailbox's
//     ReceiveSkipping),
//     ExponentialBackoff, the poison attributes, Lease and its context);
//     the SQS limits and attribute names as constants; BulkSender, its
//     limits and its rule (ValidateSendBulk), a database mailbox's bulk
//     send for the producer (issue 26; sqlmailbox.Mailbox.SendBulk).
//   - heartbeat: Beat(ctx) for handlers, NewReader and NewWriter for work
//     that reads or writes, New and NewContext for a test of a handler that
//     beats, FromContext for instrumentation (leasepage).
//   - visibility: Config, ErrLeaseLost and ErrLeaseLapsed, and Stats, the
//     lease owner's counts embedded in consumer.Stats.
//   - consumer: Interrupt, Ready, Pause, Resume and Paused are also the
//     optional methods lifecycle finds on a loop; RateLimit is one entry
//     of Config.RateLimits; NewQueues and Queue make one consumer of
//     several queues by weight.
//   - lifecycle, sqsmailbox, memmailbox: what a program calls to run its
//     loops, to reach SQS, to test without a server (memmailbox.Stats is a
//     test's view of a queue).
//   - the URL openers (issue 27): sqsloop.OpenMailbox and RegisterMailbox,
//     jobstate.Open, Register and OpenedStore, sqlmailbox.Open and Register
//     (a database URL, for the command's operator calls), and what a queue
//     opened from a URL still gives for the calls the Mailbox contract
//     lacks (sqsmailbox.Mailbox.Client, sqlmailbox.Mailbox.Store).
//   - telemetry: Start and what it serves; Observer for the consumer,
//     MeterProvider for the program's own metrics, Addr for port 0.
//   - mailboxtest, jobstate/storetest: the conformance kits (Harness,
//     Features, the scenarios' runner).
//   - ecsprotect: the Protector loop, its Config with the defaults named,
//     the Holder it watches, and the endpoint's Path (a test's stand-in
//     for the ECS agent serves it).
//   - jobstate: the Store and its Record; the RateLimiter the consumer's
//     rate limits take from, its Rate with the rule (TakeAt, PauseAt,
//     Tolerance) and its Grant, and the checks every store makes before a
//     call (ValidateTake, ValidatePause), which the stores in other
//     packages (pgstate, sqlitestate, dynamostore) call as Memory does.
//   - sqlmailbox's operator calls (issue 28), what the console and an
//     operator's script need of a database that the Mailbox contract has no
//     call for: QueueSummaries (there was no list of queues), Browse and
//     CountMessages (a read that does not receive), MoveMessages and
//     DeleteMessages (by key, a transaction a batch), MessageHistory,
//     MessageFilter, StoredMessage, QueueSummary, MaxBrowse, and the audit
//     kinds of the moves and deletions they record.
//   - console: the handler (NewSQS, NewDatabase, Console with ServeHTTP and
//     Close), its Options, Auth and Worker, SQSAPI (the client's calls it
//     makes), and the defaults of its two durations.
var bounds = map[string]int{
	".":                    126,
	"checkpoint":           16,
	"consumer":             22,
	"ecsprotect":           9,
	"heartbeat":            9,
	"idempotency":          16,
	"jobstate":             39,
	"jobstate/dynamostore": 11,
	"jobstate/pgstate":     9,
	"jobstate/sqlitestate": 8,
	"jobstate/storetest":   4,
	"console":              11,
	"leasepage":            12,
	"lifecycle":            26,
	"mailboxtest":          17,
	"memmailbox":           16,
	"otelsqsloop":          20,
	"producer":             34,
	"sqlmailbox":           69,
	"sqlmailbox/postgres":  7,
	"sqlmailbox/sqlite":    10,
	"sqslambda":            18,
	"sqsmailbox":           14,
	"telemetry":            9,
	"visibility":           6,
}

// root is the module's root, from this package's directory.
const root = "../.."

// TestSurface counts each public package's exported names:
// package-level constants, vars, funcs and types, and the methods of
// exported types, in non-test files (struct fields and interface methods
// are part of their type). It lists a package's names when its count is
// not its bound, and fails for a public package without a bound.
func TestSurface(t *testing.T) {
	pkgs, err := publicPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, dir := range pkgs {
		names, err := exported(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		total += len(names)
		bound, ok := bounds[dir]
		t.Logf("%-22s %3d (bound %d)", dir, len(names), bound)
		switch {
		case !ok:
			t.Errorf("%s is a public package without a bound: add it to bounds with its count, %d:\n%s", dir, len(names), strings.Join(names, "\n"))
		case len(names) > bound:
			t.Errorf("%s exports %d names, more than its bound %d:\n%s", dir, len(names), bound, strings.Join(names, "\n"))
		case len(names) < bound:
			t.Errorf("%s exports %d names, fewer than its bound %d: lower the bound to %d", dir, len(names), bound, len(names))
		}
	}
	t.Logf("%-22s %3d", "total", total)
	for dir := range bounds {
		if !slices.Contains(pkgs, dir) {
			t.Errorf("bounds names %s, which is no public package of the module", dir)
		}
	}
}

// publicPackages returns the directories under root (relative, "." for
// root itself) that hold a package's non-test Go files, outside internal/
// and testdata directories and the modules nested in root (examples,
// integration, benchmarks, the command), sorted.
func publicPackages(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if name == "internal" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		files, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		if slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(dirs)
	return dirs, err
}

// exported returns the exported names of the package in dir, as
// "func New", "method Consumer.Run", "const MaxBatchSize", …, sorted.
func exported(dir string) ([]string, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var names []string
	for name, p := range pkgs {
		if strings.HasSuffix(name, "_test") {
			continue
		}
		d := doc.New(p, dir, 0)
		values := func(kind string, vs []*doc.Value) {
			for _, v := range vs {
				for _, n := range v.Names {
					if ast.IsExported(n) {
						names = append(names, kind+" "+n)
					}
				}
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				names = append(names, "func "+f.Name)
			}
		}
		values("const", d.Consts)
		values("var", d.Vars)
		funcs(d.Funcs)
		for _, ty := range d.Types {
			names = append(names, "type "+ty.Name)
			values("const", ty.Consts)
			values("var", ty.Vars)
			funcs(ty.Funcs)
			for _, m := range ty.Methods {
				names = append(names, fmt.Sprintf("method %s.%s", ty.Name, m.Name))
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
