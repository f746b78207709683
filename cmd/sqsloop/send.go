package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// sendChunk is how many lines of standard input are sent at once: a pipe of
// any length is sent without holding it all in memory, in SendMessageBatch
// calls of 10.
const sendChunk = 1000

// sendCmd is `sqsloop send`.
type sendCmd struct {
	mailboxFlags `embed:""`

	Bodies  []string          `arg:"" optional:"" name:"body" help:"Message bodies, one message each. With none (and no --file), every line of standard input is a message (empty lines are skipped)."`
	File    []string          `type:"existingfile" placeholder:"PATH" help:"A file whose whole content is one message's body (repeatable)."`
	Attr    map[string]string `placeholder:"NAME=VALUE" help:"A String message attribute of every message sent (repeatable)."`
	GroupID string            `placeholder:"ID" help:"The message group ID of every message sent: required on a FIFO queue (order within the group); on a standard queue the tenant of a fair queue (SQS delivers the quiet tenants' messages first, and exec/http --group-limit caps the handlers one tenant gets)."`
	Delay   time.Duration     `placeholder:"DURATION" help:"Delay every message's first delivery, 0-15m (not on FIFO queues: theirs is the queue's)."`
}

// Help is send's long help.
func (c *sendCmd) Help() string {
	return `Prints each message's ID, one a line, in the order given. Messages go in SendMessageBatch calls of up to
10 (8 calls at once), failed calls retried; a message that fails for good is named on stderr, and the
status is 1.

Examples:

  sqsloop send --queue-url "$QUEUE_URL" '{"id": 1}' '{"id": 2}'
  jq -c '.[]' jobs.json | sqsloop send --mailbox sqlite:jobs.db --queue jobs
  sqsloop send --queue orders.fifo --group-id customer-42 --file order.json
  sqsloop send --queue-url "$QUEUE_URL" --group-id tenant-7 --file job.json    # a fair queue's tenant`
}

// Run sends the messages.
func (c *sendCmd) Run(g *globals) error {
	q, err := c.open(g.ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	p, err := producer.New(q.mb, producer.Config{})
	if err != nil {
		return err
	}
	defer p.Close(context.WithoutCancel(g.ctx))
	s := &sender{p: p, cmd: c, out: g.stdout, errs: g.stderr}
	switch {
	case len(c.Bodies) > 0 || len(c.File) > 0:
		bodies := c.Bodies
		for _, f := range c.File {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			bodies = append(bodies, string(b))
		}
		s.send(g.ctx, bodies, nil)
	default:
		if err := s.lines(g.ctx, g.stdin); err != nil {
			return err
		}
	}
	if s.failed > 0 {
		return fmt.Errorf("%d of %d messages not sent", s.failed, s.sent+s.failed)
	}
	return nil
}

// sender sends bodies as messages, printing their IDs and errors.
type sender struct {
	p            *producer.Producer
	cmd          *sendCmd
	out, errs    io.Writer
	sent, failed int
}

// lines sends every non-empty line of r, sendChunk at a time.
func (s *sender) lines(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, sqsloop.MaxMessageSize+1) // a longer line is an error, as the message would be
	var bodies []string
	var lines []int // the input line of each body, for the errors
	n := 0
	for sc.Scan() {
		n++
		if len(sc.Bytes()) == 0 {
			continue
		}
		bodies, lines = append(bodies, sc.Text()), append(lines, n)
		if len(bodies) == sendChunk {
			s.send(ctx, bodies, lines)
			bodies, lines = bodies[:0], lines[:0]
		}
	}
	s.send(ctx, bodies, lines)
	if err := sc.Err(); err != nil {
		return fmt.Errorf("standard input, line %d: %w", n+1, err)
	}
	return ctx.Err()
}

// send sends bodies, printing each one's ID, or its error naming its input
// line (lines, when not nil) or its place among the arguments and files.
func (s *sender) send(ctx context.Context, bodies []string, lines []int) {
	if len(bodies) == 0 {
		return
	}
	msgs := make([]sqsloop.OutgoingMessage, len(bodies))
	for i, b := range bodies {
		msgs[i] = s.cmd.message(b)
	}
	res, err := s.p.SendAll(ctx, msgs)
	var be *producer.BatchError
	errors.As(err, &be) // SendAll's only error
	for i, r := range res {
		if be != nil && be.Errs[i] != nil {
			s.failed++
			where := fmt.Sprintf("message %d", i+1)
			if lines != nil {
				where = fmt.Sprintf("line %d", lines[i])
			}
			fmt.Fprintf(s.errs, "sqsloop: %s: %v\n", where, be.Errs[i])
			continue
		}
		s.sent++
		fmt.Fprintln(s.out, r.MessageID)
	}
}

// message is body as a message with the flags' attributes, group and delay.
func (c *sendCmd) message(body string) sqsloop.OutgoingMessage {
	m := sqsloop.OutgoingMessage{Body: body, MessageGroupID: c.GroupID, Delay: c.Delay}
	if len(c.Attr) > 0 {
		m.MessageAttributes = make(map[string]sqsloop.MessageAttribute, len(c.Attr))
		for k, v := range c.Attr {
			m.MessageAttributes[k] = sqsloop.MessageAttribute{DataType: "String", StringValue: v}
		}
	}
	return m
}
