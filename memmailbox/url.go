package memmailbox

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/openurl"
)

// urlBroker holds the queues of mem:// URLs: one per process, like one
// SQS account and region.
var urlBroker Broker

func init() { sqsloop.RegisterMailbox("mem", openURL) }

// openURL opens mem://NAME (sqsloop.OpenMailbox): a handle to the queue
// NAME of the process's broker, created at its first open, with the
// parameters visibility_timeout (a duration, 1 s–12 h) and
// max_receive_count (1–1,000: a dead-letter queue NAME-dlq and its redrive
// policy); a NAME ending in .fifo is a FIFO queue. A later open with other
// parameters fails as CreateQueue does (spec.Match).
func openURL(_ context.Context, u *url.URL) (sqsloop.Mailbox, error) {
	q := openurl.Parse(u)
	spec := sqsloop.QueueSpec{
		Name:              u.Host,
		VisibilityTimeout: q.Duration("visibility_timeout"),
		MaxReceiveCount:   q.Int("max_receive_count"),
		FIFO:              strings.HasSuffix(u.Host, sqsloop.FIFOSuffix),
	}
	if err := q.Err("memmailbox"); err != nil {
		return nil, err
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.Opaque != "" {
		return nil, fmt.Errorf("memmailbox: %s: want mem://NAME, the queue's name as the host: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	return urlBroker.CreateQueue(spec)
}
