package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// purgeCmd is `sqsloop purge`.
type purgeCmd struct {
	mailboxFlags `embed:""`

	Yes bool `short:"y" help:"Purge without asking."`
}

// Help is purge's long help.
func (c *purgeCmd) Help() string {
	return `Deletes every message of the queue: visible, in flight and delayed. It asks first, on standard input,
unless --yes is given (without a terminal to answer, it refuses). On SQS it is PurgeQueue: SQS takes up to
60 seconds to finish, and allows one purge of a queue per 60 seconds. The dead-letter queue is left alone
(purge it by its own URL or name).

Examples:

  sqsloop purge --queue-url "$QUEUE_URL"
  sqsloop purge --mailbox sqlite:jobs.db --queue jobs-dlq --yes`
}

// Run purges the queue.
func (c *purgeCmd) Run(g *globals) error {
	q, err := c.open(g.ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	if !c.Yes {
		a, err := q.mb.QueueAttributes(g.ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(g.stderr, "Delete every message of %s (about %d visible, %d in flight, %d delayed)? [y/N] ",
			q.describe(), a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed)
		answer, _ := bufio.NewReader(g.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("not purged: not confirmed (--yes purges without asking)")
		}
	}
	if q.sqs != nil {
		if _, err := q.sqs.PurgeQueue(g.ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q.url)}); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "purging %s (SQS takes up to 60 s)\n", q.url)
		return nil
	}
	n, err := q.store.PurgeQueue(g.ctx, q.name)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "purged %s: %d messages deleted\n", q.name, n)
	return nil
}
