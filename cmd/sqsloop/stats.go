package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sqsloop/sqsloop"
)

// statsCmd is `sqsloop stats`.
type statsCmd struct {
	mailboxFlags `embed:""`

	JSON bool `name:"json" help:"Print JSON: {\"queue\": {...}, \"dead_letter_queue\": {...}}, durations in seconds."`
}

// Help is stats' long help.
func (c *statsCmd) Help() string {
	return `Prints the queue's counts (messages visible, in flight, delayed) and attributes (visibility timeout, delay,
retention period, maximum message size, FIFO, redrive policy), and those of its dead-letter queue when its
redrive policy names one. On SQS the counts are approximate and up to about a minute late; in a database
they are exact.

Examples:

  sqsloop stats --queue-url "$QUEUE_URL"
  sqsloop stats --queue jobs --json | jq '.dead_letter_queue.visible'
  sqsloop stats --mailbox "$DATABASE_URL" --queue jobs`
}

// queueStats is one queue's line of stats: its name and attributes.
type queueStats struct {
	Name                      string `json:"name"`
	Visible                   int    `json:"visible"`
	InFlight                  int    `json:"in_flight"`
	Delayed                   int    `json:"delayed"`
	VisibilityTimeoutSeconds  int64  `json:"visibility_timeout_seconds"`
	DelaySeconds              int64  `json:"delay_seconds"`
	RetentionPeriodSeconds    int64  `json:"retention_period_seconds"`
	MaxMessageSize            int    `json:"max_message_size"`
	FIFO                      bool   `json:"fifo"`
	ContentBasedDeduplication bool   `json:"content_based_deduplication,omitempty"`
	MaxReceiveCount           int    `json:"max_receive_count,omitempty"`
	DeadLetterQueue           string `json:"dead_letter_queue,omitempty"`
}

func newQueueStats(name string, a sqsloop.QueueAttributes) *queueStats {
	return &queueStats{
		Name: name, Visible: a.ApproximateMessages, InFlight: a.ApproximateMessagesInFlight, Delayed: a.ApproximateMessagesDelayed,
		VisibilityTimeoutSeconds: int64(a.VisibilityTimeout.Seconds()), DelaySeconds: int64(a.Delay.Seconds()),
		RetentionPeriodSeconds: int64(a.RetentionPeriod.Seconds()), MaxMessageSize: a.MaxMessageSize,
		FIFO: a.FIFO, ContentBasedDeduplication: a.ContentBasedDeduplication,
		MaxReceiveCount: a.MaxReceiveCount, DeadLetterQueue: a.DeadLetterQueue,
	}
}

// Run prints the statistics.
func (c *statsCmd) Run(g *globals) error {
	q, err := c.open(g.ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	out := struct {
		Queue *queueStats `json:"queue"`
		DLQ   *queueStats `json:"dead_letter_queue,omitempty"`
	}{}
	a, err := q.mb.QueueAttributes(g.ctx)
	if err != nil {
		return err
	}
	out.Queue = newQueueStats(q.describe(), a)
	if a.MaxReceiveCount > 0 {
		name, da, err := deadLetterStats(g.ctx, q)
		if err != nil {
			return fmt.Errorf("dead-letter queue: %w", err)
		}
		out.DLQ = newQueueStats(name, da)
	}
	if c.JSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	printStats(tw, "queue", out.Queue)
	if out.DLQ != nil {
		printStats(tw, "dead-letter queue", out.DLQ)
	}
	return tw.Flush()
}

// deadLetterStats returns the name and attributes of q's dead-letter queue.
func deadLetterStats(ctx context.Context, q *queue) (string, sqsloop.QueueAttributes, error) {
	dlq, err := q.mb.OpenDeadLetterQueue(ctx)
	if err != nil {
		return "", sqsloop.QueueAttributes{}, err
	}
	defer dlq.Close()
	r, ok := dlq.(sqsloop.AttributesReader)
	if !ok {
		return "", sqsloop.QueueAttributes{}, errors.New("its mailbox cannot report its attributes")
	}
	a, err := r.QueueAttributes(ctx)
	name := q.name + "'s dead-letter queue"
	if u, ok := dlq.(interface{ QueueURL() string }); ok {
		name = u.QueueURL()
	} else if n, ok := dlq.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return name, a, err
}

func printStats(w io.Writer, title string, s *queueStats) {
	fmt.Fprintf(w, "%s\t%s\n", title, s.Name)
	fmt.Fprintf(w, "  visible\t%d\n", s.Visible)
	fmt.Fprintf(w, "  in flight\t%d\n", s.InFlight)
	fmt.Fprintf(w, "  delayed\t%d\n", s.Delayed)
	fmt.Fprintf(w, "  visibility timeout\t%s\n", seconds(s.VisibilityTimeoutSeconds))
	fmt.Fprintf(w, "  delay\t%s\n", seconds(s.DelaySeconds))
	fmt.Fprintf(w, "  retention period\t%s\n", seconds(s.RetentionPeriodSeconds))
	fmt.Fprintf(w, "  max message size\t%d bytes\n", s.MaxMessageSize)
	kind := "standard"
	if s.FIFO {
		kind = "FIFO"
		if s.ContentBasedDeduplication {
			kind += ", content-based deduplication"
		}
	}
	fmt.Fprintf(w, "  type\t%s\n", kind)
	if s.MaxReceiveCount > 0 {
		fmt.Fprintf(w, "  redrive policy\tto %s after %d receives\n", s.DeadLetterQueue, s.MaxReceiveCount)
	}
}

// seconds writes a duration in seconds in its largest whole units, as
// people read them: 30s, 15m, 1h30m, 4d (not 345600s).
func seconds(n int64) string {
	const day = 24 * 60 * 60
	if n >= day && n%day == 0 {
		return fmt.Sprintf("%dd", n/day)
	}
	s := (time.Duration(n) * time.Second).String()
	for _, zero := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, zero) && len(s) > len(zero) {
			s = strings.TrimSuffix(s, zero[1:])
		}
	}
	return s
}
