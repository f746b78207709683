package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// logStart logs, at INFO, the configuration Run runs with: every value
// after defaults, so that a zero VisibilityTimeout visibly means the
// queue's, and a zero Extension the lease owner's choice.
func (c *Consumer) logStart() {
	cfg := c.cfg
	v := cfg.Visibility
	extension := "heartbeat-gated"
	switch {
	case v.Disabled:
		extension = "disabled"
	case v.FixedInterval:
		extension = "fixed-interval"
	}
	maxExt := v.MaxExtension
	if maxExt == 0 {
		maxExt = sqsloop.MaxVisibilityTimeout
	}
	c.cfg.Logger.LogAttrs(context.Background(), slog.LevelInfo, "consumer: started",
		slog.String("queue", queueName(c.mb)),
		slog.Int("concurrency", cfg.Concurrency),
		duration("visibility_timeout", cfg.VisibilityTimeout),
		slog.String("visibility_timeout_from", c.vtFrom),
		duration("wait_time", cfg.WaitTime),
		slog.String("extension_policy", extension),
		duration("interval", v.Interval),
		c.extensionAttr(),
		duration("max_extension", maxExt),
		slog.String("backoff", describeBackoff(cfg.Backoff)),
		c.shutdownTimeoutAttr(),
		duration("exit_when_idle", cfg.ExitWhenIdle),
		duration("latency_target", cfg.LatencyTarget),
		duration("queue_read_interval", cfg.QueueReadInterval),
		duration("drain_grace", DrainGrace),
		slog.Bool("cancel_on_lease_lost", v.CancelOnLeaseLost),
	)
}

// queueName names mb's queue for the log: its URL when it has one
// (sqsmailbox), its name when it has one (sqlmailbox, memmailbox), else
// its Go type (a Mailbox of the program's own).
func queueName(mb sqsloop.Mailbox) string {
	switch q := mb.(type) {
	case interface{ QueueURL() string }:
		return q.QueueURL()
	case interface{ Name() string }:
		return q.Name()
	}
	return fmt.Sprintf("%T", mb)
}

// describeBackoff shows a back-off by its delays at receive counts 1, 2, 3
// and 10: "1s 2s 4s … 8m32s" reads better than a function's address.
func describeBackoff(b func(int) time.Duration) string {
	var parts []string
	for _, n := range []int{1, 2, 3} {
		parts = append(parts, b(n).String())
	}
	return strings.Join(parts, " ") + " … " + b(10).String() + " (receive count 1, 2, 3 … 10)"
}

// duration is a log attribute of d as text ("25s"): slog.Duration would
// log nanoseconds under slog.JSONHandler.
func duration(key string, d time.Duration) slog.Attr { return slog.String(key, d.String()) }

// shutdownTimeoutAttr is the drain budget as the start line logs it:
// "25s", or "Shutdown's deadline, else 25s" when ShutdownTimeout was left
// zero.
func (c *Consumer) shutdownTimeoutAttr() slog.Attr {
	if c.budget.byContext {
		return slog.String("shutdown_timeout", "Shutdown's deadline, else "+c.cfg.ShutdownTimeout.String())
	}
	return duration("shutdown_timeout", c.cfg.ShutdownTimeout)
}

// extensionAttr is the extension as the start line logs it: "30s" when
// fixed, "chosen, 33s–1h0m0s" when the lease owner chooses it, from its
// floor (the visibility timeout + Interval/2) to MaxExtensionPeriod (see
// visibility.Config).
func (c *Consumer) extensionAttr() slog.Attr {
	switch v := c.cfg.Visibility; {
	case v.Extension > 0:
		return duration("extension", v.Extension)
	case v.Disabled || v.FixedInterval:
		return duration("extension", c.cfg.VisibilityTimeout)
	}
	ls := c.leases.Lengths()
	lo, _ := ls.Choice(c.cfg.VisibilityTimeout)
	_, hi := ls.Bounds(c.cfg.VisibilityTimeout)
	return slog.String("extension", fmt.Sprintf("chosen, %v–%v", lo, hi))
}
