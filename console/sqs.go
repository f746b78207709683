package console

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// SQSAPI is the part of the SQS client the console calls, in the SDK's own
// signatures: a *sqs.Client fits it. Implementations must be safe for
// concurrent use.
type SQSAPI interface {
	sqsmailbox.API
	// ListQueues is sqs.Client.ListQueues.
	ListQueues(ctx context.Context, params *sqs.ListQueuesInput, optFns ...func(*sqs.Options)) (*sqs.ListQueuesOutput, error)
	// StartMessageMoveTask is sqs.Client.StartMessageMoveTask.
	StartMessageMoveTask(ctx context.Context, params *sqs.StartMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	// ListMessageMoveTasks is sqs.Client.ListMessageMoveTasks.
	ListMessageMoveTasks(ctx context.Context, params *sqs.ListMessageMoveTasksInput, optFns ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
	// CancelMessageMoveTask is sqs.Client.CancelMessageMoveTask.
	CancelMessageMoveTask(ctx context.Context, params *sqs.CancelMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.CancelMessageMoveTaskOutput, error)
}

var _ SQSAPI = (*sqs.Client)(nil)

// Bounds of an SQS scan: the messages it keeps to browse (SQS lets at most
// 120,000 of a standard queue's messages be in flight, and a scan holds
// every message it read until it ends), and their bytes.
const (
	maxScanMessages = 100_000
	maxScanBytes    = 256 << 20
)

// attributeReads is how many GetQueueAttributes calls the queue list makes
// at once.
const attributeReads = 32

// sqsBackend is the SQS queues whose names start with a prefix. SQS has no
// read that does not receive: to browse a queue the console receives all
// of it (a scan, run as a "look" job), holding each message hidden while
// it reads on (extending the holds when a scan outlasts half their
// visibility timeout), keeps what it read in memory, and gives every
// message back at the end. Actions receive the queue again.
type sqsBackend struct {
	client SQSAPI
	prefix string
	hold   time.Duration // the visibility timeout of the console's receives

	mu         sync.Mutex
	urls       map[string]string // queue name → URL, of the last listing
	scans      map[string]*snapshot
	noMoveTask bool // StartMessageMoveTask failed once: use the loop
}

func newSQSBackend(client SQSAPI, prefix string, hold time.Duration) *sqsBackend {
	return &sqsBackend{client: client, prefix: prefix, hold: hold, urls: map[string]string{}, scans: map[string]*snapshot{}}
}

func (b *sqsBackend) where() string {
	w := "SQS"
	if b.prefix != "" {
		w += ", queues named " + b.prefix + "…"
	}
	return w
}

// listURLs returns the URLs of the queues of the prefix, every page.
func (b *sqsBackend) listURLs(ctx context.Context) ([]string, error) {
	var urls []string
	in := &sqs.ListQueuesInput{MaxResults: aws.Int32(1000)}
	if b.prefix != "" {
		in.QueueNamePrefix = aws.String(b.prefix)
	}
	for {
		out, err := b.client.ListQueues(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("ListQueues: %w", err)
		}
		urls = append(urls, out.QueueUrls...)
		if aws.ToString(out.NextToken) == "" {
			return urls, nil
		}
		in.NextToken = out.NextToken
	}
}

func (b *sqsBackend) queues(ctx context.Context) ([]queueInfo, error) {
	urls, err := b.listURLs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]queueInfo, len(urls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, attributeReads)
	for i, u := range urls {
		out[i] = queueInfo{Name: queueName(u), URL: u, DLQDepth: -1, GroupsInFlight: -1, Acked: -1}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			q := &out[i]
			mb, err := sqsmailbox.New(b.client, u)
			if err != nil {
				q.Err = err.Error()
				return
			}
			a, err := mb.QueueAttributes(ctx)
			if err != nil {
				q.Err = err.Error()
				return
			}
			q.FIFO, q.Visible, q.InFlight, q.Delayed = a.FIFO, a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed
			q.MaxReceiveCount = a.MaxReceiveCount
			if a.DeadLetterQueue != "" {
				q.DLQ = a.DeadLetterQueue[strings.LastIndex(a.DeadLetterQueue, ":")+1:]
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b queueInfo) int { return cmp.Compare(a.Name, b.Name) })
	byName := make(map[string]*queueInfo, len(out))
	b.mu.Lock()
	for i := range out {
		byName[out[i].Name] = &out[i]
		b.urls[out[i].Name] = out[i].URL
	}
	b.mu.Unlock()
	for i := range out {
		q := &out[i]
		if d, ok := byName[q.DLQ]; ok {
			q.DLQDepth = d.depth()
			d.Sources = append(d.Sources, q.Name)
		}
		if s := b.snapshot(q.Name); s != nil {
			q.Oldest = s.oldest()
		}
	}
	return out, nil
}

// queueName is the last path segment of a queue URL: the queue's name.
func queueName(queueURL string) string {
	return queueURL[strings.LastIndex(strings.TrimSuffix(queueURL, "/"), "/")+1:]
}

// mailbox returns a Mailbox of the queue name, finding its URL with
// GetQueueUrl when the last listing did not name it.
func (b *sqsBackend) mailbox(ctx context.Context, name string) (*sqsmailbox.Mailbox, error) {
	b.mu.Lock()
	u, ok := b.urls[name]
	b.mu.Unlock()
	if !ok {
		out, err := b.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", name, err)
		}
		u = aws.ToString(out.QueueUrl)
		b.mu.Lock()
		b.urls[name] = u
		b.mu.Unlock()
	}
	return sqsmailbox.New(b.client, u)
}

// snapshot is what a scan read of one queue.
type snapshot struct {
	mu      sync.Mutex
	job     int // the look that reads it
	running bool
	started time.Time
	ended   time.Time
	records []*record // sorted by send time once the scan ended
	bytes   int
	capped  bool
	err     string
	byID    map[string]*record
}

// snapshotView is a snapshot's state, for the pages.
type snapshotView struct {
	Job            int
	Running        bool
	Started, Ended time.Time
	Messages       int
	Capped         bool
	Err            string
}

func (s *snapshot) view() snapshotView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return snapshotView{Job: s.job, Running: s.running, Started: s.started, Ended: s.ended, Messages: len(s.records), Capped: s.capped, Err: s.err}
}

// oldest returns the send time of the oldest message the scan read.
func (s *snapshot) oldest() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t time.Time
	for _, r := range s.records {
		if t.IsZero() || r.SentAt.Before(t) {
			t = r.SentAt
		}
	}
	return t
}

// snapshot returns the queue's last scan, nil for none.
func (b *sqsBackend) snapshot(queue string) *snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.scans[queue]
}

// matching returns the records of the queue's scan that match f, from
// index from on, up to limit (all for limit 0), and the index after the
// last one looked at when more are left ("" when none).
func (s *snapshot) matching(f filter, from, limit int) ([]*record, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*record
	for i := from; i < len(s.records); i++ {
		if !f.match(s.records[i]) {
			continue
		}
		if limit > 0 && len(out) == limit {
			return out, strconv.Itoa(i)
		}
		out = append(out, s.records[i])
	}
	return out, ""
}

func (b *sqsBackend) browse(_ context.Context, q *queueInfo, f filter, cursor string, limit int) (page, error) {
	s := b.snapshot(q.Name)
	if s == nil {
		return page{}, nil
	}
	from, _ := strconv.Atoi(cursor)
	recs, next := s.matching(f, max(from, 0), limit)
	return page{Records: recs, Next: next}, nil
}

func (b *sqsBackend) count(_ context.Context, q *queueInfo, f filter) (count, error) {
	s := b.snapshot(q.Name)
	if s == nil {
		return count{}, nil
	}
	recs, _ := s.matching(f, 0, 0)
	v := s.view()
	return count{N: len(recs), Exact: !v.Capped && !v.Running && v.Err == "", Of: v.Messages}, nil
}

func (b *sqsBackend) message(_ context.Context, q *queueInfo, key string) (*record, []historyEntry, error) {
	s := b.snapshot(q.Name)
	if s == nil {
		return nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[key], nil, nil
}

func (b *sqsBackend) leases(context.Context, []queueInfo) (*dbLeases, error) { return nil, nil }

// act runs a look (a scan), or an action on the messages of j's selection
// sent before it started.
func (b *sqsBackend) act(ctx context.Context, j *job, w io.Writer) error {
	src, err := b.mailbox(ctx, j.Queue)
	if err != nil {
		return err
	}
	defer src.Close()
	switch j.Kind {
	case actLook:
		return b.scan(ctx, j, src)
	case actRedrive:
		dst, err := b.mailbox(ctx, j.To)
		if err != nil {
			return err
		}
		defer dst.Close()
		if j.Filter.isZero() && b.moveTaskLikely() {
			err := b.moveTask(ctx, j, src, dst)
			if !errors.Is(err, errNoMoveTask) {
				return err
			}
		}
		return b.pass(ctx, j, src, dst, nil)
	case actDelete:
		return b.pass(ctx, j, src, nil, nil)
	case actExport:
		return b.pass(ctx, j, src, nil, newExportEncoder(w))
	}
	return fmt.Errorf("console: no action %q", j.Kind)
}

// receiveWait is the long poll of the console's receives: a long poll never
// answers empty while a message is visible, so an empty answer ends a pass.
const receiveWait = time.Second

// scan receives every message of the queue into a new snapshot, holding
// them, and gives them all back at the end.
func (b *sqsBackend) scan(ctx context.Context, j *job, src *sqsmailbox.Mailbox) error {
	b.mu.Lock()
	s := b.scans[j.Queue] // the look registered it
	if s == nil {
		s = &snapshot{running: true, started: time.Now(), byID: map[string]*record{}}
		b.scans[j.Queue] = s
	}
	b.mu.Unlock()
	s.mu.Lock()
	s.job = j.ID
	s.mu.Unlock()
	h := newHolder(src, b.hold)
	defer h.release()
	j.setMethod(fmt.Sprintf("receives holding each message for %v, then giving all back", b.hold))
	err := b.receiveAll(ctx, j, src, h, func(msgs []*sqsloop.Message) (bool, error) {
		fresh := 0
		s.mu.Lock()
		for _, m := range msgs {
			h.hold(m)
			if s.byID[m.ID] != nil {
				continue // its hold lapsed and it came back
			}
			r := newRecord(m)
			s.byID[m.ID] = r
			s.records = append(s.records, r)
			s.bytes += r.size
			fresh++
		}
		full := len(s.records) >= maxScanMessages || s.bytes >= maxScanBytes
		s.capped = full
		s.mu.Unlock()
		j.progress(fresh, 0)
		if full {
			j.addNote("stopped at %d messages (%d MiB): the console keeps no more of one queue", maxScanMessages, maxScanBytes>>20)
		}
		return !full, nil
	})
	s.mu.Lock()
	s.running, s.ended = false, time.Now()
	if err != nil {
		s.err = err.Error()
	}
	slices.SortStableFunc(s.records, func(a, b *record) int { return a.SentAt.Compare(b.SentAt) })
	s.mu.Unlock()
	return err
}

// pass receives every message of src once, holding each, and acts on those
// of j's selection sent before j started: with dst, sends each to dst and
// then deletes it from src (a redrive: a crash between the two leaves it
// in both, never in neither); with enc, writes it out (an export, which
// holds it too); else deletes it. At the end it gives back every message
// it held. It goes at most j.Rate messages a second.
func (b *sqsBackend) pass(ctx context.Context, j *job, src, dst *sqsmailbox.Mailbox, enc *json.Encoder) error {
	h := newHolder(src, b.hold)
	defer h.release()
	fifo := false
	switch {
	case dst != nil:
		a, err := dst.QueueAttributes(ctx)
		if err != nil {
			return err
		}
		fifo = a.FIFO
		j.setMethod("receive, send, then delete, up to 10 at a time")
	case enc != nil:
		j.setMethod("receive and write, holding each message until the end")
	default:
		j.setMethod("receive and delete, up to 10 at a time")
	}
	done := map[string]bool{}    // sent already: a copy left in src by a failed delete is deleted, not sent again
	pending := map[string]bool{} // sent, and not deleted from src yet
	pace := &pacer{rate: j.Rate}
	return b.receiveAll(ctx, j, src, h, func(msgs []*sqsloop.Message) (bool, error) {
		var picked, leftover []*sqsloop.Message
		for _, m := range msgs {
			switch r := newRecord(m); {
			case done[m.ID] && dst != nil:
				leftover = append(leftover, m)
			case !done[m.ID] && m.SentAt.Before(j.Started) && j.Filter.match(r):
				picked = append(picked, m)
			default:
				h.hold(m)
			}
		}
		if len(leftover) > 0 {
			deleteSent(ctx, j, src, leftover, pending)
		}
		if err := pace.wait(ctx, len(picked)); err != nil {
			for _, m := range picked {
				h.hold(m)
			}
			return false, err
		}
		switch {
		case len(picked) == 0:
		case enc != nil:
			for _, m := range picked {
				h.hold(m)
				done[m.ID] = true
				if err := writeExport(enc, newRecord(m)); err != nil {
					return false, err
				}
			}
			j.progress(len(picked), 0)
		case dst != nil:
			if err := b.send(ctx, j, src, dst, picked, fifo, h, done, pending); err != nil {
				return false, err
			}
		default:
			failed := deleteBatch(ctx, j, src, picked)
			for _, m := range failed {
				h.hold(m) // given back at the end: not deleted
			}
			j.progress(len(picked)-len(failed), len(failed))
		}
		return true, nil
	})
}

// receiveAll receives src's messages, each hidden for the hold, and calls
// fn with each batch (which holds what it keeps) until fn returns false or
// an error, or the queue has nothing left to read: a long poll brought
// nothing, and the queue holds no more messages in flight than h does. A
// message in flight elsewhere (a consumer's, or one a receive took whose
// answer was lost on the way) comes back when its visibility timeout
// ends: the pass waits for it one hold at most, then ends, noting how many
// it did not read. Between batches it extends h's holds.
func (b *sqsBackend) receiveAll(ctx context.Context, j *job, src *sqsmailbox.Mailbox, h *holder, fn func([]*sqsloop.Message) (bool, error)) error {
	var idle time.Time // since the first empty receive of a run of them
	for {
		msgs, err := src.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: sqsloop.MaxBatchSize, VisibilityTimeout: b.hold, WaitTime: receiveWait})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			a, err := src.QueueAttributes(ctx)
			if err != nil {
				return err
			}
			elsewhere := a.ApproximateMessagesInFlight - len(h.held)
			if idle.IsZero() {
				idle = time.Now()
			}
			if elsewhere <= 0 {
				return nil
			}
			if time.Since(idle) > b.hold {
				j.addNote("%d messages in flight elsewhere (a consumer's) were not read", elsewhere)
				return nil
			}
		} else {
			idle = time.Time{}
			more, err := fn(msgs)
			if err != nil || !more {
				return err
			}
		}
		if err := h.extend(ctx); err != nil {
			return err
		}
	}
}

// send sends msgs to dst, then deletes from src those sent (deleteSent)
// and holds the others, to give them back at the end.
func (b *sqsBackend) send(ctx context.Context, j *job, src, dst *sqsmailbox.Mailbox, msgs []*sqsloop.Message, fifo bool,
	h *holder, done, pending map[string]bool) error {
	out := make([]sqsloop.OutgoingMessage, len(msgs))
	for i, m := range msgs {
		out[i] = redriven(newRecord(m))
		if fifo {
			// Not the message's own: a redriven message that fails again
			// within 5 minutes must not be dropped as a duplicate.
			out[i].DeduplicationID = "redrive-" + m.ID + "-" + strconv.Itoa(m.ReceiveCount)
		}
	}
	res, err := dst.Send(ctx, out)
	if err != nil {
		for _, m := range msgs {
			h.hold(m)
		}
		return err
	}
	var sent []*sqsloop.Message
	var errs []error
	for i, r := range res {
		if r.Err != nil {
			h.hold(msgs[i])
			errs = append(errs, fmt.Errorf("message %s: %w", msgs[i].ID, r.Err))
			continue
		}
		done[msgs[i].ID] = true
		sent = append(sent, msgs[i])
	}
	j.progress(len(sent), len(msgs)-len(sent))
	deleteSent(ctx, j, src, sent, pending)
	if len(errs) > 0 {
		j.addNote("send failed: %v", errors.Join(errs...))
	}
	return nil
}

// deleteSent deletes from src msgs sent to the destination, under a
// context that is not cancelled (a message sent is deleted even when the
// action is being cancelled), trying three times. One it could not delete
// is pending: in both queues for now, not held, so that it comes back when
// its hold ends, and the pass, which knows it sent it, deletes it then
// (the pass waits for it: it is in flight and not held). j's InBoth counts
// the pending.
func deleteSent(ctx context.Context, j *job, src sqsloop.Mailbox, msgs []*sqsloop.Message, pending map[string]bool) {
	ctx = context.WithoutCancel(ctx)
	left := msgs
	for attempt := range 3 {
		if len(left) == 0 {
			break
		}
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond) // an SQS hiccup passes; ctx is not to end it
		}
		left = deleteBatch(ctx, j, src, left)
	}
	for _, m := range msgs {
		delete(pending, m.ID)
	}
	for _, m := range left {
		pending[m.ID] = true
	}
	j.setInBoth(len(pending))
}

// deleteBatch deletes msgs from src, 10 at a time, and returns those it
// could not delete, noting the first error on j.
func deleteBatch(ctx context.Context, j *job, src sqsloop.Mailbox, msgs []*sqsloop.Message) []*sqsloop.Message {
	var failed []*sqsloop.Message
	for batch := range slices.Chunk(msgs, sqsloop.MaxBatchSize) {
		handles := make([]string, len(batch))
		for i, m := range batch {
			handles[i] = m.ReceiptHandle
		}
		errs, err := src.Delete(ctx, handles)
		for i, m := range batch {
			if err != nil || errs[i] != nil {
				failed = append(failed, m)
				if !j.hasNote() {
					e := err
					if e == nil {
						e = errs[i]
					}
					j.addNote("a delete failed: %v", e)
				}
			}
		}
	}
	return failed
}

// errNoMoveTask says StartMessageMoveTask is not to be had: the caller
// moves the messages itself.
var errNoMoveTask = errors.New("no message move task")

// moveTaskLikely reports whether StartMessageMoveTask has not failed yet.
func (b *sqsBackend) moveTaskLikely() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.noMoveTask
}

// moveTask redrives the whole of src with SQS's StartMessageMoveTask, to
// dst (or, when dst is src's only source, to where each message came
// from), and follows its progress until it ends; cancelled, it cancels the
// task. It returns errNoMoveTask when SQS would not start one (an
// emulator without it, a source that is no dead-letter queue, a task
// already running): the caller then moves the messages itself.
func (b *sqsBackend) moveTask(ctx context.Context, j *job, src, dst *sqsmailbox.Mailbox) error {
	arn := func(mb *sqsmailbox.Mailbox) (string, error) {
		out, err := b.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(mb.QueueURL()),
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			return "", err
		}
		return out.Attributes[string(types.QueueAttributeNameQueueArn)], nil
	}
	srcARN, err := arn(src)
	if err != nil {
		return err
	}
	dstARN, err := arn(dst)
	if err != nil {
		return err
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(srcARN), DestinationArn: aws.String(dstARN)}
	if j.Rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(min(j.Rate, 500)))
	}
	task, err := b.client.StartMessageMoveTask(ctx, in)
	if err != nil {
		b.mu.Lock()
		b.noMoveTask = true
		b.mu.Unlock()
		j.addNote("StartMessageMoveTask failed (%v): moving the messages with receive, send, delete", err)
		return errNoMoveTask
	}
	handle := aws.ToString(task.TaskHandle)
	j.setMethod("SQS message move task (StartMessageMoveTask)")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	moved := int64(0)
	for {
		select {
		case <-ctx.Done():
			_, cerr := b.client.CancelMessageMoveTask(context.WithoutCancel(ctx), &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String(handle)})
			if cerr != nil {
				j.addNote("CancelMessageMoveTask: %v (the task may go on in SQS)", cerr)
			}
			return ctx.Err()
		case <-tick.C:
		}
		list, err := b.client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(srcARN), MaxResults: aws.Int32(1)})
		if err != nil || len(list.Results) == 0 {
			continue // read again at the next tick
		}
		t := list.Results[0] // the newest: this one
		j.progress(int(t.ApproximateNumberOfMessagesMoved-moved), 0)
		moved = t.ApproximateNumberOfMessagesMoved
		switch aws.ToString(t.Status) {
		case "COMPLETED":
			return nil
		case "FAILED", "CANCELLED":
			return fmt.Errorf("message move task %s: %s", strings.ToLower(aws.ToString(t.Status)), aws.ToString(t.FailureReason))
		}
	}
}

// holder keeps the receipt handles of the messages a scan or a pass holds
// hidden, extends them before they lapse, and gives them all back at the
// end. One goroutine uses it.
type holder struct {
	mb     sqsloop.Mailbox
	length time.Duration          // of a hold: the receives' visibility timeout
	held   map[string]heldMessage // by message ID: a message received again replaces its old handle
}

type heldMessage struct {
	handle   string
	deadline time.Time
}

func newHolder(mb sqsloop.Mailbox, hold time.Duration) *holder {
	return &holder{mb: mb, length: hold, held: map[string]heldMessage{}}
}

// hold records m, received with the hold as its visibility timeout.
func (h *holder) hold(m *sqsloop.Message) {
	h.held[m.ID] = heldMessage{handle: m.ReceiptHandle, deadline: time.Now().Add(h.length)}
}

// extend extends, 10 at a time, the holds that have less than half their
// length left; a hold that lapsed meanwhile is forgotten (its message is
// visible again, and a receive may bring it back).
func (h *holder) extend(ctx context.Context) error {
	now := time.Now()
	var due []string
	for id, m := range h.held {
		if m.deadline.Sub(now) < h.length/2 {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for batch := range slices.Chunk(due, sqsloop.MaxBatchSize) {
		changes := make([]sqsloop.VisibilityChange, len(batch))
		for i, id := range batch {
			changes[i] = sqsloop.VisibilityChange{ReceiptHandle: h.held[id].handle, Timeout: h.length}
		}
		at := time.Now()
		errs, err := h.mb.ChangeVisibility(ctx, changes)
		if err != nil {
			return err
		}
		for i, id := range batch {
			if errs[i] != nil {
				delete(h.held, id)
				continue
			}
			h.held[id] = heldMessage{handle: h.held[id].handle, deadline: at.Add(h.length)}
		}
	}
	return nil
}

// release gives every held message back (visibility timeout 0), 10 at a
// time, within a minute whatever the caller's context says, and forgets
// them.
func (h *holder) release() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids := slices.Sorted(maps.Keys(h.held))
	for batch := range slices.Chunk(ids, sqsloop.MaxBatchSize) {
		changes := make([]sqsloop.VisibilityChange, len(batch))
		for i, id := range batch {
			changes[i] = sqsloop.VisibilityChange{ReceiptHandle: h.held[id].handle}
		}
		_, _ = h.mb.ChangeVisibility(ctx, changes) // a failure leaves the message hidden until its hold ends
	}
	clear(h.held)
}
