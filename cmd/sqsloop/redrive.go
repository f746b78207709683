package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
)

// redriveCmd is `sqsloop redrive`.
type redriveCmd struct {
	mailboxFlags `embed:""`

	Loop    bool  `help:"On SQS, move the messages by receiving them from the dead-letter queue, sending and deleting them, instead of with SQS's StartMessageMoveTask (for a server without it, such as the fauxqs emulator)."`
	MaxRate int32 `placeholder:"N" help:"With StartMessageMoveTask: move at most N messages a second (1-500). 0: as fast as SQS goes."`
}

// Help is redrive's long help.
func (c *redriveCmd) Help() string {
	return `Moves the messages of the dead-letter queue that the queue's redrive policy names back to the queue.

On SQS it starts a message move task (StartMessageMoveTask, which needs sqs:StartMessageMoveTask,
sqs:ListMessageMoveTasks and the permissions AWS lists for it), prints its progress and waits for it to
end; interrupted, the task goes on in SQS. With --loop, and always in a database (--mailbox), sqsloop moves
them itself, up to 10 at a time: it receives them from the dead-letter queue, sends them to the queue, and
deletes them from the dead-letter queue once sent (a crash in between leaves a message in both, never in
neither). It moves the messages sent to the dead-letter queue before it started, until a receive brings
none, so that messages failing again meanwhile do not make it loop (to within the difference between
this machine's clock and the queue's), and leaves out the sqsloop.poison.* attributes a poison message's copy
carries. On a FIFO queue the messages keep their group and order, with a new deduplication ID each.

Examples:

  sqsloop redrive --queue-url "$QUEUE_URL"
  sqsloop redrive --queue-url "$QUEUE_URL" --max-rate 50
  sqsloop redrive --endpoint http://127.0.0.1:4566 --queue jobs --loop
  sqsloop redrive --mailbox sqlite:jobs.db --queue jobs`
}

// Validate checks redrive's flags.
func (c *redriveCmd) Validate() error {
	if c.MaxRate < 0 || c.MaxRate > 500 {
		return fmt.Errorf("--max-rate: want 1-500 (or 0: no limit), got %d", c.MaxRate)
	}
	return nil
}

// Run moves the messages.
func (c *redriveCmd) Run(g *globals) error {
	q, err := c.open(g.ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	if q.sqs != nil && !c.Loop {
		return c.moveTask(g, q)
	}
	moved, err := moveBack(g.ctx, q)
	fmt.Fprintf(g.stdout, "moved %d messages from the dead-letter queue to %s\n", moved, q.describe())
	return err
}

// moveTask redrives on SQS with a message move task, and waits for it to
// end.
func (c *redriveCmd) moveTask(g *globals, q *queue) error {
	ctx := g.ctx
	out, err := q.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(q.url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return err
	}
	a, err := q.mb.QueueAttributes(ctx)
	if err != nil {
		return err
	}
	if a.DeadLetterQueue == "" {
		return fmt.Errorf("%s has no redrive policy: %w", q.url, sqsloop.ErrNoDeadLetterQueue)
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(a.DeadLetterQueue), DestinationArn: aws.String(out.Attributes[string(types.QueueAttributeNameQueueArn)])}
	if c.MaxRate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(c.MaxRate)
	}
	task, err := q.sqs.StartMessageMoveTask(ctx, in)
	if err != nil {
		return fmt.Errorf("StartMessageMoveTask: %w (a server without it, such as an emulator: use --loop)", err)
	}
	handle := aws.ToString(task.TaskHandle)
	g.log.Info("sqsloop redrive: message move task started", "source", a.DeadLetterQueue, "task_handle", handle)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped waiting; the task goes on in SQS (aws sqs cancel-message-move-task --task-handle %s cancels it): %w", handle, ctx.Err())
		case <-tick.C:
		}
		list, err := q.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(a.DeadLetterQueue), MaxResults: aws.Int32(10)})
		if err != nil {
			g.log.Warn("sqsloop redrive: could not read the task's progress", "error", err)
			continue
		}
		// The newest task first: this one (SQS names the handle of running
		// tasks only).
		for _, t := range list.Results[:min(1, len(list.Results))] {
			status := aws.ToString(t.Status)
			g.log.Info("sqsloop redrive: message move task", "status", status, "moved", t.ApproximateNumberOfMessagesMoved, "to_move", aws.ToInt64(t.ApproximateNumberOfMessagesToMove))
			switch status {
			case "COMPLETED":
				fmt.Fprintf(g.stdout, "moved %d messages from %s to %s\n", t.ApproximateNumberOfMessagesMoved, a.DeadLetterQueue, q.url)
				return nil
			case "FAILED", "CANCELLED":
				return fmt.Errorf("message move task %s after %d messages: %s", strings.ToLower(status), t.ApproximateNumberOfMessagesMoved, aws.ToString(t.FailureReason))
			}
		}
	}
}

// moveVisibility is how long a message received from the dead-letter
// queue stays hidden while it is sent back.
const moveVisibility = time.Minute

// moveBack moves the messages of q's dead-letter queue back to q, up to 10
// at a time (receive, send, delete), and returns how many it moved. It
// moves those sent before it started and stops at the first receive that
// brings none: a message it moved that fails again meanwhile comes back to
// the dead-letter queue sent after the start (SentAt is when SQS took the
// copy moveBatch sent, or the consumer's poison copy), and is given back
// instead of making it loop. It reads no message counts, which SQS
// approximates and reports up to a minute late.
func moveBack(ctx context.Context, q *queue) (int, error) {
	start := time.Now()
	a, err := q.mb.QueueAttributes(ctx)
	if err != nil {
		return 0, err
	}
	dlq, err := q.mb.OpenDeadLetterQueue(ctx)
	if err != nil {
		return 0, err
	}
	defer dlq.Close()
	moved := 0
	for {
		msgs, err := dlq.Receive(ctx, sqsloop.ReceiveRequest{
			MaxMessages:       sqsloop.MaxBatchSize,
			VisibilityTimeout: moveVisibility,
			WaitTime:          peekWait,
		})
		if err != nil {
			return moved, err
		}
		var old, fresh []*sqsloop.Message
		for _, m := range msgs {
			if m.SentAt.After(start) {
				fresh = append(fresh, m)
			} else {
				old = append(old, m)
			}
		}
		giveBack(ctx, dlq, fresh)
		if len(old) == 0 {
			return moved, nil
		}
		n, err := moveBatch(ctx, q.mb, dlq, old, a.FIFO)
		moved += n
		if err != nil {
			return moved, err
		}
	}
}

// moveBatch sends msgs, received from dlq, to mb, then deletes from dlq
// those sent and gives the others back; it returns how many it moved.
func moveBatch(ctx context.Context, mb, dlq sqsloop.Mailbox, msgs []*sqsloop.Message, fifo bool) (int, error) {
	out := make([]sqsloop.OutgoingMessage, len(msgs))
	for i, m := range msgs {
		out[i] = sqsloop.OutgoingMessage{Body: m.Body, MessageGroupID: m.MessageGroupID}
		for k, v := range m.MessageAttributes {
			if poisonAttrs[k] {
				continue
			}
			if out[i].MessageAttributes == nil {
				out[i].MessageAttributes = map[string]sqsloop.MessageAttribute{}
			}
			out[i].MessageAttributes[k] = v
		}
		if fifo {
			// Not the message's own: it was sent within the last 5 minutes,
			// perhaps, and would be dropped as a duplicate.
			out[i].DeduplicationID = "redrive-" + m.ID + "-" + strconv.Itoa(m.ReceiveCount)
		}
	}
	res, err := mb.Send(ctx, out)
	if err != nil {
		giveBack(ctx, dlq, msgs)
		return 0, err
	}
	var sent []string
	var failed []*sqsloop.Message
	var errs []error
	for i, r := range res {
		if r.Err != nil {
			failed = append(failed, msgs[i])
			errs = append(errs, fmt.Errorf("message %s: %w", msgs[i].ID, r.Err))
			continue
		}
		sent = append(sent, msgs[i].ReceiptHandle)
	}
	giveBack(ctx, dlq, failed)
	if len(sent) > 0 {
		derrs, err := dlq.Delete(ctx, sent)
		if err != nil {
			errs = append(errs, fmt.Errorf("deleting from the dead-letter queue what was sent (it is now in both queues): %w", err))
		}
		for _, e := range derrs {
			if e != nil {
				errs = append(errs, fmt.Errorf("deleting from the dead-letter queue a message that was sent (it is now in both queues): %w", e))
			}
		}
	}
	return len(sent), errors.Join(errs...)
}

// giveBack makes msgs visible again in their queue at once.
func giveBack(ctx context.Context, mb sqsloop.Mailbox, msgs []*sqsloop.Message) {
	if len(msgs) == 0 {
		return
	}
	changes := make([]sqsloop.VisibilityChange, len(msgs))
	for i, m := range msgs {
		changes[i] = sqsloop.VisibilityChange{ReceiptHandle: m.ReceiptHandle}
	}
	_, _ = mb.ChangeVisibility(context.WithoutCancel(ctx), changes)
}

// poisonAttrs are the attributes the consumer adds to a poison message's
// copy in the dead-letter queue: a message moved back leaves them there.
var poisonAttrs = map[string]bool{sqsloop.AttrPoisonReason: true, sqsloop.AttrPoisonMessageID: true, sqsloop.AttrPoisonReceiveCount: true}
