package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// createQueueCmd is `sqsloop create-queue`.
type createQueueCmd struct {
	Endpoint string `placeholder:"URL" help:"Base URL of an SQS-compatible server (LocalStack, ElasticMQ, fauxqs: http://127.0.0.1:4566); empty: AWS."`
	Mailbox  string `placeholder:"sqlite:PATH|postgres://..." help:"Create the queue in this database instead of on SQS: sqlite:PATH or a postgres:// URL."`
	Queue    string `required:"" placeholder:"NAME" help:"The queue's name: letters, digits, - and _, up to 80 characters; ending in .fifo for a FIFO queue."`

	MaxReceiveCount           int           `placeholder:"N" help:"Give the queue a dead-letter queue, NAME-dlq (NAME-dlq.fifo), and a redrive policy moving a message there after N receives (1-1000). 0: none."`
	VisibilityTimeout         time.Duration `placeholder:"DURATION" help:"The queue's default visibility timeout, 0-12h (0: 30s). The workers ask for their own."`
	Delay                     time.Duration `placeholder:"DURATION" help:"Delay the first delivery of every message, 0-15m."`
	Retention                 time.Duration `placeholder:"DURATION" help:"How long the queue keeps a message, 1m-336h (0: 96h). The dead-letter queue keeps them 336h (14 days)."`
	MaxMessageSize            int           `placeholder:"BYTES" help:"The largest message, 1024-1048576 bytes (0: 1048576)."`
	ContentBasedDeduplication bool          `help:"A FIFO queue deduplicates messages sent without a deduplication ID by their body's SHA-256."`
}

// Help is create-queue's long help.
func (c *createQueueCmd) Help() string {
	return `Creates the queue, after its dead-letter queue when --max-receive-count is set, and prints the queue's URL
(SQS) or name. A queue that exists with the same attributes is fine; one with other attributes is an error
naming each difference. On SQS it needs sqs:CreateQueue, sqs:GetQueueAttributes and sqs:GetQueueUrl.

Examples:

  sqsloop create-queue --endpoint http://127.0.0.1:4566 --queue jobs --max-receive-count 5
  sqsloop create-queue --mailbox sqlite:jobs.db --queue orders.fifo --content-based-deduplication --max-receive-count 3`
}

// Validate checks the flags.
func (c *createQueueCmd) Validate() error {
	if c.Mailbox != "" && c.Endpoint != "" {
		return errors.New("--endpoint is for SQS; a --mailbox database has none")
	}
	return c.spec().Validate()
}

// spec is the queue the flags describe: FIFO when its name says so.
func (c *createQueueCmd) spec() sqsloop.QueueSpec {
	return sqsloop.QueueSpec{
		Name:                      c.Queue,
		FIFO:                      strings.HasSuffix(c.Queue, sqsloop.FIFOSuffix),
		ContentBasedDeduplication: c.ContentBasedDeduplication,
		VisibilityTimeout:         c.VisibilityTimeout,
		Delay:                     c.Delay,
		RetentionPeriod:           c.Retention,
		MaxMessageSize:            c.MaxMessageSize,
		MaxReceiveCount:           c.MaxReceiveCount,
	}
}

// Run creates the queue.
func (c *createQueueCmd) Run(g *globals) error {
	spec := c.spec()
	if c.Mailbox != "" {
		st, closeDB, err := openStore(g.ctx, c.Mailbox)
		if err != nil {
			return err
		}
		defer closeDB()
		mb, err := st.CreateQueue(g.ctx, spec)
		if err != nil {
			return err
		}
		defer mb.Close()
		fmt.Fprintln(g.stdout, mb.Name())
		return nil
	}
	client, err := sqsmailbox.NewClient(g.ctx, c.Endpoint)
	if err != nil {
		return err
	}
	mb, err := sqsmailbox.CreateQueue(g.ctx, client, spec)
	if err != nil {
		return err
	}
	defer mb.Close()
	fmt.Fprintln(g.stdout, mb.QueueURL())
	return nil
}
