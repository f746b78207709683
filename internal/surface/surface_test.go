// Package surface holds one test: the exported surface of the core
// packages stays under a bound, so that it cannot creep back silently
// (issue 19 brought it from 188 names to 126; it had been about 106).
package surface

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxNames bounds the exported names of the core packages. Raise it only
// with a reason a reviewer accepts: a capability users need that no
// existing name gives.
//
// What the 126 names at the bound's setting are for, where a name alone
// does not say:
//
//   - root: the Mailbox contract and its types; the sentinel errors; the
//     request rules every Mailbox checks (ValidateSend, ValidateDelete,
//     ValidateChangeVisibility, ReceiveRequest.Validate and
//     WantsMessageAttribute, WholeSeconds, OutgoingMessage.Size,
//     Message.ParseSystemAttributes and SetSystemAttributes, QueueSpec's
//     methods), which a user's own Mailbox needs as ours do; the Observer,
//     its events, NopObserver (its six methods let an observer implement
//     only what it needs, and keep compiling when an event is added) and
//     Observers.
//   - heartbeat: Beat(ctx) for handlers, NewReader and NewWriter for work
//     that reads or writes, New and NewContext for a test of a handler that
//     beats, FromContext for instrumentation (leasepage).
//   - visibility: Config, ErrLeaseLost and ErrLeaseLapsed, and Stats, the
//     lease owner's counts embedded in consumer.Stats and sqslambda.Stats.
//   - consumer: Interrupt, Ready, Pause, Resume and Paused are also the
//     optional methods lifecycle finds on a loop.
//   - lifecycle, sqsmailbox, memmailbox: what a program calls to run its
//     loops, to reach SQS, to test without a server (memmailbox.Stats is a
//     test's view of a queue).
const maxNames = 129

// core are the core packages, relative to the module's root.
var core = []string{".", "heartbeat", "visibility", "consumer", "lifecycle", "sqsmailbox", "memmailbox"}

// TestCoreSurface counts the core packages' exported names as the issue
// counts them: package-level vars, funcs and types, and the methods of
// exported types, in non-test files; constants are not counted (they are
// values to read, not behaviour to learn). It lists every name when the
// count is over the bound.
func TestCoreSurface(t *testing.T) {
	var all []string
	for _, dir := range core {
		names, err := exported(filepath.Join("..", "..", dir))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-10s %3d", dir, len(names))
		for _, n := range names {
			all = append(all, dir+": "+n)
		}
	}
	t.Logf("total      %3d (bound %d)", len(all), maxNames)
	if len(all) > maxNames {
		t.Errorf("the core packages export %d names, more than %d:\n%s", len(all), maxNames, strings.Join(all, "\n"))
	}
}

// exported returns the exported names of the package in dir, as
// "func New", "method Consumer.Run", …, sorted.
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
		vars := func(vs []*doc.Value) {
			for _, v := range vs {
				for _, n := range v.Names {
					if ast.IsExported(n) {
						names = append(names, "var "+n)
					}
				}
			}
		}
		funcs := func(fs []*doc.Func) {
			for _, f := range fs {
				names = append(names, "func "+f.Name)
			}
		}
		vars(d.Vars)
		funcs(d.Funcs)
		for _, ty := range d.Types {
			names = append(names, "type "+ty.Name)
			vars(ty.Vars)
			funcs(ty.Funcs)
			for _, m := range ty.Methods {
				names = append(names, fmt.Sprintf("method %s.%s", ty.Name, m.Name))
			}
		}
	}
	slices.Sort(names)
	return names, nil
}
