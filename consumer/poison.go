package consumer

import (
	"context"
	"errors"
	"log/slog"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
)

// deadLetter moves a message whose handler failed with a permanent error
// (sqsloop.Permanent) to the dead-letter queue (copy, then ack) and reports
// true; it reports false, after a WARN, when it could not, for the caller
// to nack it.
func (c *Consumer) deadLetter(ctx context.Context, m *sqsloop.Message, lease *leases.Lease, err error) bool {
	if !errors.Is(err, sqsloop.ErrPermanent) {
		return false
	}
	if derr := c.dead.Copy(context.WithoutCancel(ctx), m, err); derr != nil {
		c.cfg.Logger.Warn("consumer: a permanent failure, but the message could not go to the dead-letter queue; nacking it like any failure",
			slog.String("message_id", m.ID), slog.Any("error", err), slog.Any("reason", derr))
		return false
	}
	c.st.poisoned.Add(1)
	c.cfg.Logger.Warn("consumer: a permanent failure; the message was copied to the dead-letter queue and is deleted",
		slog.String("message_id", m.ID), slog.Int("receive_count", m.ReceiveCount), slog.Any("error", err))
	lease.Ack()
	return true
}
