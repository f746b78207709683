// Package failurelog writes the WARN line of a failed handler run, for the
// consumer and sqslambda alike, so that a failing handler leaves a line at
// the default log level without a failure storm flooding the log.
//
// A line names the message (its ID and approximate receive count), the
// handler's error and what becomes of the message; never its body or its
// receipt handle. At most Burst lines are written per Window; the failures
// past them are logged at DEBUG, and counted, and the count is written in
// one WARN line when the window is over (at the next failure) or at Flush
// (the end of a consumer's Run, of a Lambda invocation).
package failurelog

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
)

const (
	// Burst is how many failures a Log writes at WARN per Window: 10.
	Burst = 10
	// Window is the period Burst counts in: 10 s.
	Window = 10 * time.Second
)

// Log writes the failures of one consumer's (or one Lambda handler's)
// handler runs. Safe for concurrent use.
type Log struct {
	logger *slog.Logger
	who    string // "consumer", "sqslambda": the summary line's prefix

	mu         sync.Mutex
	start      time.Time // the window's; zero before the first failure
	logged     int       // WARN lines written in the window
	suppressed int       // failures logged at DEBUG only since the last summary
}

// New returns a Log writing to logger, whose summary lines begin with who
// ("consumer: ").
func New(logger *slog.Logger, who string) *Log {
	return &Log{logger: logger, who: who}
}

// Failed logs that m's handler failed with err: msg (what becomes of the
// message) with m's ID and receive count, err, and attrs. At WARN, unless
// Burst lines were written in the window; then at DEBUG, counted for the
// summary.
func (l *Log) Failed(msg string, m *sqsloop.Message, err error, attrs ...slog.Attr) {
	now := time.Now()
	l.mu.Lock()
	var summary int
	if l.start.IsZero() || now.Sub(l.start) >= Window {
		summary, l.suppressed = l.suppressed, 0
		l.start, l.logged = now, 0
	}
	level := slog.LevelWarn
	if l.logged < Burst {
		l.logged++
	} else {
		level = slog.LevelDebug
		l.suppressed++
	}
	l.mu.Unlock()
	ctx := context.Background()
	l.summarize(ctx, summary)
	if !l.logger.Enabled(ctx, level) {
		return
	}
	all := make([]slog.Attr, 0, 3+len(attrs))
	all = append(all, slog.String("message_id", m.ID), slog.Int("receive_count", m.ReceiveCount), slog.Any("error", err))
	l.logger.LogAttrs(ctx, level, msg, append(all, attrs...)...)
}

// Flush writes the count of the failures not logged at WARN since the last
// summary, if any. The window goes on: Failed's rate is unchanged.
func (l *Log) Flush() {
	l.mu.Lock()
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	l.summarize(context.Background(), n)
}

// summarize writes the WARN line counting n failures not logged at WARN.
func (l *Log) summarize(ctx context.Context, n int) {
	if n == 0 {
		return
	}
	l.logger.LogAttrs(ctx, slog.LevelWarn, l.who+": "+strconv.Itoa(n)+" more handler failures were not logged at WARN (at most "+
		strconv.Itoa(Burst)+" lines per "+Window.String()+"; each is at DEBUG)", slog.Int("failures", n))
}
