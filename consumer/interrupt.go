package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Interrupt is the consumer's last act when its process exits before the
// drain has ended (a second Ctrl+C: lifecycle.LoopGroup calls it on the
// second signal, with a context that ends after lifecycle.InterruptTimeout,
// 1 s, and then exits). Left alone, the messages in flight would stay
// hidden until their leases end, with one more receive count each.
// Interrupt gives their leases back in one round of batch calls with ctx
// (the lease owner's: decided acks are still deleted, decided
// nacks keep their back-off, everything else becomes visible at once; a
// lease whose call is on the wire is settled when that call comes back,
// and a failed call is tried again while ctx lasts), then logs one WARN
// line: how many messages were in flight, how many are visible again now,
// and by when the others reappear. Handlers go on running until the
// process exits; what they decide is ignored. It returns when nothing is
// left to send or ctx is done. Safe for concurrent use; a second call
// finds nothing to give back. It also ends the drain's flush (Run no
// longer sends what its handlers decide): the process is about to exit.
func (c *Consumer) Interrupt(ctx context.Context) {
	began := time.Now()
	running := c.st.running.Load()
	r := c.leases.Interrupt(ctx)
	c.interrupt()
	visible := "none"
	if r.Failed > 0 {
		visible = r.VisibleBy.Format(time.RFC3339)
	}
	c.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn,
		fmt.Sprintf("consumer: interrupted; %d messages in flight: %d given back (visible again now), %d acked, %d not settled (visible again when their leases end, by %s at the latest)",
			r.Leases, r.GivenBack, r.Acked, r.Failed, visible),
		slog.Int("in_flight", r.Leases), slog.Int64("running", running), slog.Int("given_back", r.GivenBack),
		slog.Int("acked", r.Acked), slog.Int("not_settled", r.Failed), slog.String("visible_by", visible),
		duration("took", time.Since(began)))
	if c.cfg.Observer != nil {
		c.cfg.Observer.Drain(sqsloop.DrainEvent{Phase: sqsloop.DrainInterrupted, Running: int(running),
			GivenBack: r.GivenBack, Took: time.Since(began)})
	}
}
