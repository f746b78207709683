package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// Which of a command's output streams beat (--beat-on).
const (
	beatStdout = "stdout"
	beatStderr = "stderr"
	beatBoth   = "both"
	beatNone   = "none"
)

// maxLine is the longest line logged as one record; a longer one is logged
// in pieces of this size.
const maxLine = 64 << 10

// outputSettle bounds how long the command's output is read after its
// process group is gone: only a process that left the group (setsid) can
// still hold the pipes open then.
const outputSettle = time.Second

// runner runs exec's command, once per message: the body on its standard
// input, the message in its environment, in a process group of its own,
// its output logged line by line (each line a beat), stopped when its
// context ends. Its methods are safe for concurrent use.
type runner struct {
	argv       []string
	queue      string        // SQSLOOP_QUEUE
	beatOn     string        // beatStdout, beatStderr, beatBoth or beatNone
	beatFile   bool          // --beat-file
	beatPoll   time.Duration // how often the beat file is looked at
	killGrace  time.Duration // SIGTERM to SIGKILL
	poisonExit int           // an exit status that makes the message poison; 0: none
	log        *slog.Logger
	environ    []string // the command's environment but for the message's variables

	running sync.WaitGroup // every handle call
	mu      sync.Mutex
	groups  map[int]bool // process groups started and not yet reaped
}

// newRunner returns a runner of argv. environ is the environment the
// command inherits, without its SQSLOOP_ variables (sqsloop's own settings:
// the command sees only the message's).
func newRunner(argv []string, environ []string) *runner {
	r := &runner{argv: argv, groups: map[int]bool{}}
	for _, kv := range environ {
		if !strings.HasPrefix(kv, envPrefix) {
			r.environ = append(r.environ, kv)
		}
	}
	return r
}

// exitError is a command's exit status other than 0, or the signal that
// killed it.
type exitError struct {
	status     int    // -1 when a signal killed it
	signal     string // the signal's name, when one killed it
	lastStderr string // the last line it wrote to standard error
}

func (e *exitError) Error() string {
	var s string
	if e.status < 0 {
		s = "command killed by signal " + e.signal
	} else {
		s = fmt.Sprintf("command exited with status %d", e.status)
	}
	if e.lastStderr != "" {
		s += " (last line on stderr: " + e.lastStderr + ")"
	}
	return s
}

// handle runs the command for m (a sqsloop.Handler). It returns nil when
// the command exits 0, sqsloop.Permanent of an *exitError for the poison
// exit status, an *exitError for any other, and, when ctx ended first (the
// lease lost, the drain's budget spent), an error wrapping its cause once
// the command's process group has been stopped: SIGTERM, then SIGKILL
// after the kill grace. Whatever the command leaves running in its process
// group when it exits is killed.
func (r *runner) handle(ctx context.Context, m *sqsloop.Message) error {
	r.running.Add(1)
	defer r.running.Done()
	env := messageEnv(r.environ, r.queue, m)
	hb := heartbeat.FromContext(ctx)
	if hb == nil {
		hb = heartbeat.New() // a handler run outside a consumer: its beats go nowhere
	}
	var beatFile string
	if r.beatFile {
		f, err := os.CreateTemp("", "sqsloop-beat-*")
		if err != nil {
			return fmt.Errorf("beat file: %w", err)
		}
		f.Close()
		beatFile = f.Name()
		defer os.Remove(beatFile)
		env = append(env, envBeatFile+"="+beatFile)
	}

	p, err := newPipes()
	if err != nil {
		return err
	}
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.stdinR, p.stdoutW, p.stderrW
	cmd.SysProcAttr = sysProcAttr()
	err = cmd.Start()
	p.closeChildEnds()
	if err != nil {
		p.closeOurEnds()
		return fmt.Errorf("start %s: %w", r.argv[0], err)
	}
	pgid := cmd.Process.Pid // Setpgid: the command leads a group of its own
	r.track(pgid, true)
	defer r.track(pgid, false)
	log := r.log.With("message_id", m.ID)
	log.Debug("sqsloop exec: command started", "pid", pgid)
	start := time.Now()

	var wg sync.WaitGroup
	var lastStderr lastLine
	wg.Add(3)
	go func() {
		defer wg.Done()
		_, _ = io.WriteString(p.stdinW, m.Body) // EPIPE when the command does not read it all
		p.stdinW.Close()
	}()
	go func() {
		defer wg.Done()
		readLines(r.beating(p.stdoutR, hb, beatStdout), func(line string) {
			log.Info(line, "stream", "stdout")
		})
	}()
	go func() {
		defer wg.Done()
		readLines(r.beating(p.stderrR, hb, beatStderr), func(line string) {
			lastStderr.set(line)
			log.Info(line, "stream", "stderr")
		})
	}()
	exited := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.stopOnDone(ctx, exited, pgid, log)
	}()
	if beatFile != "" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchBeatFile(beatFile, r.beatPoll, hb, exited)
		}()
	}

	waitErr := cmd.Wait()
	close(exited)
	signalGroup(pgid, syscall.SIGKILL) // what the command left running in its group
	p.settle(time.Now().Add(outputSettle))
	wg.Wait()
	p.closeOurEnds()
	log.Debug("sqsloop exec: command ended", "took", time.Since(start), "result", waitErr)

	switch {
	case waitErr == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("command stopped: %w", context.Cause(ctx))
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		return waitErr
	}
	e := &exitError{status: ee.ExitCode(), lastStderr: lastStderr.get()}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.signal = ws.Signal().String()
	}
	if r.poisonExit != 0 && e.status == r.poisonExit {
		return sqsloop.Permanent(e)
	}
	return e
}

// beating returns f, beating hb on every read when the stream beats.
func (r *runner) beating(f *os.File, hb *heartbeat.Heartbeat, stream string) io.Reader {
	if r.beatOn == beatBoth || r.beatOn == stream {
		return heartbeat.NewReader(f, hb)
	}
	return f
}

// stopOnDone waits for the command to exit or ctx to end; in the second
// case it sends the command's process group SIGTERM, and SIGKILL if it has
// not exited after the kill grace.
func (r *runner) stopOnDone(ctx context.Context, exited <-chan struct{}, pgid int, log *slog.Logger) {
	select {
	case <-exited:
		return
	case <-ctx.Done():
	}
	log.Warn("sqsloop exec: stopping the command: SIGTERM to its process group", "cause", context.Cause(ctx), "kill_grace", r.killGrace)
	signalGroup(pgid, syscall.SIGTERM)
	t := time.NewTimer(r.killGrace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		log.Warn("sqsloop exec: the command outlived its kill grace: SIGKILL to its process group")
		signalGroup(pgid, syscall.SIGKILL)
	}
}

// track records a process group as running, or no longer.
func (r *runner) track(pgid int, running bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if running {
		r.groups[pgid] = true
	} else {
		delete(r.groups, pgid)
	}
}

// killAll sends SIGKILL to every process group still running: the process
// is about to exit at once (a second signal), and the commands must not
// outlive it.
func (r *runner) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pgid := range r.groups {
		signalGroup(pgid, syscall.SIGKILL)
	}
}

// wait waits for every handle call to return: after a drain, for the
// commands it stopped (at most their kill grace).
func (r *runner) wait() { r.running.Wait() }

// signalGroup sends sig to the process group pgid; a group that is gone
// already is no error.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// watchBeatFile beats hb each time it finds path's modification time
// changed, looking every poll until stop is closed.
func watchBeatFile(path string, poll time.Duration, hb *heartbeat.Heartbeat, stop <-chan struct{}) {
	var last time.Time
	if fi, err := os.Stat(path); err == nil {
		last = fi.ModTime()
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		fi, err := os.Stat(path)
		if err != nil {
			continue // removed by the command: no beat until it is back
		}
		if mt := fi.ModTime(); !mt.Equal(last) {
			last = mt
			hb.Beat()
		}
	}
}

// readLines calls fn with each line r yields, without its line ending
// ("\n" or "\r\n"); a line longer than maxLine comes in pieces, and a last
// line without a newline comes too. It returns at end of file or on the
// first error.
func readLines(r io.Reader, fn func(string)) {
	br := bufio.NewReaderSize(r, maxLine)
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			fn(s)
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		default:
			return
		}
	}
}

// lastLine keeps the last line of a stream, cut to 200 bytes, for an
// error message.
type lastLine struct {
	mu   sync.Mutex
	line string
}

func (l *lastLine) set(s string) {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if strings.TrimSpace(s) == "" {
		return
	}
	l.mu.Lock()
	l.line = s
	l.mu.Unlock()
}

func (l *lastLine) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.line
}

// pipes are a command's standard input, output and error: the child's ends
// (closed once it has started) and ours.
type pipes struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
}

// newPipes makes the three pipes.
func newPipes() (*pipes, error) {
	var p pipes
	var err error
	ends := []struct{ r, w **os.File }{{&p.stdinR, &p.stdinW}, {&p.stdoutR, &p.stdoutW}, {&p.stderrR, &p.stderrW}}
	for _, e := range ends {
		if *e.r, *e.w, err = os.Pipe(); err != nil {
			p.closeChildEnds()
			p.closeOurEnds()
			return nil, fmt.Errorf("pipe: %w", err)
		}
	}
	return &p, nil
}

// closeChildEnds closes the ends the child process holds its own copies of.
func (p *pipes) closeChildEnds() { closeAll(p.stdinR, p.stdoutW, p.stderrW) }

// closeOurEnds closes the ends this process reads and writes.
func (p *pipes) closeOurEnds() { closeAll(p.stdinW, p.stdoutR, p.stderrR) }

// settle makes our ends give up at deadline: reads of output that a
// process outside the group keeps open, a write of the body nobody reads.
func (p *pipes) settle(deadline time.Time) {
	_ = p.stdoutR.SetReadDeadline(deadline)
	_ = p.stderrR.SetReadDeadline(deadline)
	_ = p.stdinW.SetWriteDeadline(deadline)
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
