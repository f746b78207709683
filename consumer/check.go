package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sqsloop/sqsloop"
)

// queueCheckTimeout bounds the start-up GetQueueAttributes call.
const queueCheckTimeout = 10 * time.Second

// lowMaxReceiveCount is the maxReceiveCount at or under which a few
// interrupted deliveries (deploys, lost leases) can push a healthy message
// into the dead-letter queue.
const lowMaxReceiveCount = 3

// checkQueue reads the queue's attributes, when the mailbox can, and warns
// about settings that fight the consumer's configuration. It never fails
// Run: a queue that cannot be read is reported and the loop goes on. Run
// runs it beside the receive loops (a round trip is not worth waiting for
// before receiving) and cancels ctx when the drain begins.
func (c *Consumer) checkQueue(ctx context.Context) {
	ar, ok := c.mb.(sqsloop.AttributesReader)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, queueCheckTimeout)
	defer cancel()
	attrs, err := ar.QueueAttributes(ctx)
	if errors.Is(ctx.Err(), context.Canceled) {
		return // shutdown began: no warning about a check it cut short
	}
	if err != nil {
		c.cfg.Logger.Warn("consumer: could not read the queue's attributes", slog.Any("error", err))
		return
	}
	for _, w := range queueWarnings(c.cfg, attrs) {
		c.cfg.Logger.Warn("consumer: " + w)
	}
}

// queueWarnings lists what in attrs fights cfg (with defaults applied).
func queueWarnings(cfg Config, attrs sqsloop.QueueAttributes) []string {
	var ws []string
	if interval := cfg.Visibility.Interval; !cfg.Visibility.Disabled && attrs.VisibilityTimeout > 0 && interval > attrs.VisibilityTimeout/2 {
		ws = append(ws, fmt.Sprintf("Visibility.Interval (%v) is more than half the queue's visibility timeout (%v); "+
			"the consumer receives with its own VisibilityTimeout (%v), but anything that receives with the queue default will lose leases",
			interval, attrs.VisibilityTimeout, cfg.VisibilityTimeout))
	}
	if cfg.Visibility.Disabled && cfg.ShutdownTimeout > cfg.VisibilityTimeout {
		ws = append(ws, fmt.Sprintf("ShutdownTimeout (%v) exceeds VisibilityTimeout (%v) with extension disabled: "+
			"messages still in flight late in a drain become visible and run twice", cfg.ShutdownTimeout, cfg.VisibilityTimeout))
	}
	if attrs.MaxReceiveCount > 0 && attrs.MaxReceiveCount <= lowMaxReceiveCount {
		ws = append(ws, fmt.Sprintf("the queue's maxReceiveCount (%d) is low; every interrupted delivery (a deploy, a lost lease) "+
			"counts, so a few deploys can push healthy messages into the dead-letter queue %s", attrs.MaxReceiveCount, attrs.DeadLetterQueue))
	}
	return ws
}
