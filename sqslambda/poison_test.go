package sqslambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// The fixtures of these tests: poison.json, a standard queue's batch of a
// good JSON job, one whose body does not decode (with a message attribute
// of each data type) and one whose job fails; poisonfifo.json, a FIFO
// queue's batch of two message groups, A (good, a body that does not
// decode into the job, good) and B (failing, good), interleaved.

// fileJob is the JSON job of the fixtures.
type fileJob struct {
	File string `json:"file"`
}

// jsonHandler is the tests' consumer.JSONHandler handler: a job whose file starts
// with "fail" fails; each job run is recorded in r.
func jsonHandler(r *runs) func(context.Context, *sqsloop.Message) error {
	return consumer.JSONHandler(func(ctx context.Context, m *sqsloop.Message, j fileJob) error {
		r.add(j.File)
		if strings.HasPrefix(j.File, "fail") {
			return fmt.Errorf("cannot read %s", j.File)
		}
		return nil
	})
}

// deliver is the event source mapping's receive of the messages of ev, a
// fixture, from q: each record's body and message attributes (and on a
// FIFO queue its message group and deduplication ID) are sent to q and
// received with the visibility timeout vt, and each record of ev gets its
// message's real message ID, receipt handle and system attributes; the
// rest of the record stays as the fixture has it.
func deliver(t *testing.T, q sqsloop.Mailbox, ev events.SQSEvent, vt time.Duration) events.SQSEvent {
	t.Helper()
	out := make([]sqsloop.OutgoingMessage, len(ev.Records))
	for i, r := range ev.Records {
		o := sqsloop.OutgoingMessage{Body: r.Body, MessageGroupID: r.Attributes[sqsloop.AttrMessageGroupID],
			DeduplicationID: r.Attributes[sqsloop.AttrMessageDeduplicationID]}
		for name, a := range r.MessageAttributes {
			if o.MessageAttributes == nil {
				o.MessageAttributes = map[string]sqsloop.MessageAttribute{}
			}
			ma := sqsloop.MessageAttribute{DataType: a.DataType, BinaryValue: a.BinaryValue}
			if a.StringValue != nil {
				ma.StringValue = *a.StringValue
			}
			o.MessageAttributes[name] = ma
		}
		out[i] = o
	}
	mailboxtest.SendAll(t.Context(), t, q, out...)
	byBody := map[string]*sqsloop.Message{}
	for len(byBody) < len(out) {
		msgs, err := q.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: vt})
		if err != nil || len(msgs) == 0 {
			t.Fatalf("received %d of %d messages (%v)", len(byBody), len(out), err)
		}
		for _, m := range msgs {
			byBody[m.Body] = m
		}
	}
	delivered := events.SQSEvent{Records: slices.Clone(ev.Records)}
	for i := range delivered.Records {
		r := &delivered.Records[i]
		m := byBody[r.Body]
		rec := record(m, r.EventSourceARN)
		r.MessageId, r.ReceiptHandle = rec.MessageId, rec.ReceiptHandle
		r.Attributes = maps.Clone(r.Attributes)
		maps.Copy(r.Attributes, rec.Attributes)
	}
	return delivered
}

// openerAt returns a Config.OpenQueue that opens q for url.
func openerAt(t *testing.T, url string, q Queue) func(string) (Queue, error) {
	return func(u string) (Queue, error) {
		if u != url {
			t.Errorf("OpenQueue(%q), want %q", u, url)
			return nil, fmt.Errorf("unknown queue %s", u)
		}
		return q, nil
	}
}

// hookedDLQ is a memmailbox queue whose dead-letter queue's Send goes
// through send, given the real dead-letter queue.
type hookedDLQ struct {
	*memmailbox.Queue
	send func(ctx context.Context, dlq sqsloop.Mailbox, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error)
}

func (h *hookedDLQ) OpenDeadLetterQueue(ctx context.Context) (sqsloop.Mailbox, error) {
	dlq, err := h.Queue.OpenDeadLetterQueue(ctx)
	if err != nil {
		return nil, err
	}
	return hookedSend{Mailbox: dlq, send: h.send}, nil
}

type hookedSend struct {
	sqsloop.Mailbox
	send func(ctx context.Context, dlq sqsloop.Mailbox, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error)
}

func (s hookedSend) Send(ctx context.Context, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
	return s.send(ctx, s.Mailbox, msgs)
}

// deadLetters returns what q's dead-letter queue holds (hiding it for an
// hour).
func deadLetters(t *testing.T, q *memmailbox.Queue) []*sqsloop.Message {
	t.Helper()
	dlq, err := q.OpenDeadLetterQueue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	return receiveNow(t, dlq)
}

// permanent returns the WARN records about permanent failures, each as
// its message followed by its attributes (key=value).
func (l *logs) permanent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.recs {
		if r.Level != slog.LevelWarn || !strings.Contains(r.Message, "permanent failure") {
			continue
		}
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		out = append(out, b.String())
	}
	return out
}

// mapping deletes the records of ev that resp does not list, with their
// receipt handles, as the event source mapping does after an invocation.
func mapping(t *testing.T, q sqsloop.Mailbox, ev events.SQSEvent, resp events.SQSEventResponse) {
	t.Helper()
	failed := ids(resp)
	for _, r := range ev.Records {
		if slices.Contains(failed, r.MessageId) {
			continue
		}
		if errs, err := q.Delete(t.Context(), []string{r.ReceiptHandle}); err != nil || errs[0] != nil {
			t.Fatalf("the event source mapping's delete of %s: %v %v", r.MessageId, err, errs)
		}
	}
}

const undecodable = `{"file": ` // poison.json's record 2

// A JSON handler given a body that does not decode, with a client: the
// record goes to the dead-letter queue on its first delivery (a copy with
// its body, its message attributes, receive count 1, its message ID and
// the decode error) and is not in batchItemFailures, so the event source
// mapping deletes it; the failing record beside it is reported and nacked
// as before. Stats.Poisoned counts it (and Acked), the observer sees
// dead_lettered, a WARN names it. Once the mapping has deleted what was
// processed, only the failing record comes back.
func TestUndecodableBodyGoesToTheDLQ(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		ev := deliver(t, q, fixture(t, "poison.json"), 30*time.Second)
		var r runs
		rec := newRecorder()
		logger, lg := newLogger()
		h := mustNew(t, jsonHandler(&r), Config{OpenQueue: opener(t, q, nil), Observer: rec, Logger: logger,
			Backoff: func(int) time.Duration { return 5 * time.Second }})
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), idsOf(ev, 3); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want only the failing record %v", got, want)
		}
		if got := r.get(); len(got) != 2 || slices.Contains(got, "") {
			t.Errorf("the job ran for %q, want a.txt and the failing one only", got)
		}
		dead := deadLetters(t, q)
		if len(dead) != 1 {
			t.Fatalf("the DLQ holds %d messages, want 1", len(dead))
		}
		d, a := dead[0], dead[0].MessageAttributes
		if d.Body != undecodable || a["kind"].StringValue != "file" || a["attempt"].DataType != "Number" || a["attempt"].StringValue != "1" ||
			a["checksum"].DataType != "Binary" || string(a["checksum"].BinaryValue) != "\xde\xad\xbe\xef" {
			t.Errorf("DLQ copy: body %q, attributes %v: want the record's", d.Body, a)
		}
		if rc := a[sqsloop.AttrPoisonReceiveCount]; rc.DataType != "Number" || rc.StringValue != "1" ||
			a[sqsloop.AttrPoisonMessageID].StringValue != ev.Records[1].MessageId ||
			!strings.Contains(a[sqsloop.AttrPoisonReason].StringValue, "does not decode into sqslambda.fileJob") {
			t.Errorf("DLQ copy's poison attributes %v: want receive count 1, message ID %s and the decode error", a, ev.Records[1].MessageId)
		}
		st := h.Stats()
		if st.Poisoned != 1 || st.Failed != 2 || st.Succeeded != 1 || st.Acked != 2 || st.Nacked != 1 || st.ItemFailures != 1 {
			t.Errorf("stats %+v: want 1 poisoned, 2 failed, 1 succeeded, 2 acked, 1 nacked, 1 item failure", st)
		}
		outcomes := rec.outcomes(t)
		want := map[string]string{`{"file": "a.txt"}`: "acked", undecodable: "dead_lettered", `{"file": "fail: b.txt"}`: "nacked"}
		if !maps.Equal(outcomes, want) {
			t.Errorf("outcomes %v, want %v", outcomes, want)
		}
		if e := rec.ends[undecodable][0]; e.Delay != 0 || !errors.Is(e.Err, sqsloop.ErrPermanent) {
			t.Errorf("the dead-lettered run's event %+v: want no delay, the Permanent error", e)
		}
		if w := lg.permanent(); len(w) != 1 || !contains(w[0], "copied to the dead-letter queue") || !contains(w[0], ev.Records[1].MessageId) ||
			!contains(w[0], "event_source_arn="+testARN) {
			t.Errorf("warnings %q: want one naming the record moved to the DLQ and its queue", w)
		}

		mapping(t, q, ev, resp)
		time.Sleep(31 * time.Second) // past the back-off and the visibility timeout
		if got := visible(t, q); !slices.Equal(got, []string{`{"file": "fail: b.txt"}`}) {
			t.Errorf("the source queue gives %q, want the failing record only", got)
		}
	})
}

// A permanent failure that cannot go to a dead-letter queue is a failure
// like any other, with a WARN naming the queue and why: without a client
// (nothing nacks it), on a queue without a redrive policy and on a client
// that cannot name its dead-letter queue (nacked with the back-off).
func TestPermanentWithoutADeadLetterQueueIsAFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spec   sqsloop.QueueSpec
		client func(*memmailbox.Queue) Queue // nil: no client
		reason string
	}{
		{name: "no client", spec: sqsloop.QueueSpec{MaxReceiveCount: 5}, reason: "Config.OpenQueue is nil"},
		{name: "no redrive policy", client: func(q *memmailbox.Queue) Queue { return q }, reason: `queue "jobs": sqsloop: queue has no dead-letter queue`},
		{name: "a client that cannot name its DLQ", spec: sqsloop.QueueSpec{MaxReceiveCount: 5},
			client: func(q *memmailbox.Queue) Queue { return &watched{Queue: q} }, reason: "(*sqslambda.watched) cannot name its dead-letter queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc.spec.VisibilityTimeout = 30 * time.Second
				q := newQueue(t, tc.spec)
				ev := deliver(t, q, fixture(t, "poison.json"), 30*time.Second)
				logger, lg := newLogger()
				rec := newRecorder()
				cfg := Config{Logger: logger, Observer: rec, Backoff: func(int) time.Duration { return 5 * time.Second }}
				if tc.client != nil {
					cfg.OpenQueue = opener(t, tc.client(q), nil)
				}
				h := mustNew(t, jsonHandler(&runs{}), cfg)
				resp, err := h.Handle(invocation(t, time.Minute), ev)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := ids(resp), idsOf(ev, 2, 3); !slices.Equal(got, want) {
					t.Errorf("batchItemFailures %v, want the undecodable and the failing record %v", got, want)
				}
				st := h.Stats()
				wantNacks := map[bool]int64{true: 2, false: 0}[tc.client != nil]
				if st.Poisoned != 0 || st.Nacked != wantNacks || st.Acked != 1 {
					t.Errorf("stats %+v: want nothing poisoned, %d nacked, 1 acked", st, wantNacks)
				}
				if o := rec.outcomes(t)[undecodable]; o != "nacked" {
					t.Errorf("the undecodable record's outcome: %s, want nacked", o)
				}
				w := lg.permanent()
				if len(w) != 1 || !contains(w[0], "could not go to the dead-letter queue") || !contains(w[0], "event_source_arn="+testARN) ||
					!contains(w[0], tc.reason) || !contains(w[0], "does not decode") {
					t.Errorf("warnings %q: want one naming the queue, the reason (%s) and the error", w, tc.reason)
				}
				if tc.spec.MaxReceiveCount > 0 {
					if dead := deadLetters(t, q); len(dead) != 0 {
						t.Errorf("the DLQ holds %d messages, want none", len(dead))
					}
				}
			})
		})
	}
}

// A copy to the dead-letter queue that fails leaves the record a failure:
// reported in batchItemFailures, nacked with its back-off (back in the
// source queue after 5 s, not before), with a WARN giving the reason.
func TestFailedCopyIsReportedAndNacked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
		ev := deliver(t, q, fixture(t, "poison.json"), 30*time.Second)
		src := &hookedDLQ{Queue: q, send: func(context.Context, sqsloop.Mailbox, []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
			return nil, errors.New("the DLQ is unreachable")
		}}
		logger, lg := newLogger()
		rec := newRecorder()
		h := mustNew(t, jsonHandler(&runs{}), Config{OpenQueue: opener(t, src, nil), Logger: logger, Observer: rec,
			Backoff: func(int) time.Duration { return 5 * time.Second }})
		begin := time.Now()
		resp, err := h.Handle(invocation(t, time.Minute), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ids(resp), idsOf(ev, 2, 3); !slices.Equal(got, want) {
			t.Errorf("batchItemFailures %v, want the undecodable and the failing record %v", got, want)
		}
		if st := h.Stats(); st.Poisoned != 0 || st.Nacked != 2 {
			t.Errorf("stats %+v: want nothing poisoned, both failures nacked", st)
		}
		if e := rec.ends[undecodable][0]; e.Outcome != sqsloop.OutcomeNacked || e.Delay != 5*time.Second {
			t.Errorf("the undecodable record's event %+v: want nacked after 5s", e)
		}
		if w := lg.permanent(); len(w) != 1 || !contains(w[0], "the DLQ is unreachable") {
			t.Errorf("warnings %q: want one with the copy's error", w)
		}
		mapping(t, q, ev, resp)
		time.Sleep(begin.Add(4 * time.Second).Sub(time.Now()))
		if got := visible(t, q); len(got) != 0 {
			t.Errorf("visible 4 s after the invocation began: %q, want nothing before the 5 s back-off", got)
		}
		time.Sleep(2 * time.Second)
		got := visible(t, q)
		slices.Sort(got)
		if want := []string{undecodable, `{"file": "fail: b.txt"}`}; !slices.Equal(got, want) {
			t.Errorf("visible after the back-off: %q, want %q", got, want)
		}
		if dead := deadLetters(t, q); len(dead) != 0 {
			t.Errorf("the DLQ holds %d messages, want none", len(dead))
		}
	})
}

// The copy comes before the response. A copy that takes 2 s holds the
// response back until it is done (the record then reported processed);
// and had the response been lost (a crash right after the copy), the
// original, which only the event source mapping deletes, comes back to the
// source queue after its visibility timeout: it is in both queues, never
// in neither. A copy that would run past the deadline margin is cut at
// DeadlineMargin/4 past the cut-off (8.875 s into a 10 s invocation):
// Handle answers then, well before the deadline, with the record reported
// failed and nacked.
func TestCopyComesBeforeTheResponse(t *testing.T) {
	t.Run("a slow copy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
			ev := deliver(t, q, fixture(t, "poison.json"), 30*time.Second)
			var answered, answeredDuringCopy atomic.Bool
			src := &hookedDLQ{Queue: q, send: func(ctx context.Context, dlq sqsloop.Mailbox, msgs []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
				time.Sleep(2 * time.Second)
				res, err := dlq.Send(ctx, msgs)
				answeredDuringCopy.Store(answered.Load())
				return res, err
			}}
			h := mustNew(t, jsonHandler(&runs{}), Config{OpenQueue: opener(t, src, nil)})
			begin := time.Now()
			resp, err := h.Handle(invocation(t, time.Minute), ev)
			answered.Store(true)
			took := time.Since(begin)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := ids(resp), idsOf(ev, 3); !slices.Equal(got, want) {
				t.Errorf("batchItemFailures %v, want only the failing record %v", got, want)
			}
			if answeredDuringCopy.Load() || took < 2*time.Second {
				t.Errorf("Handle answered after %v, during the 2 s copy: want after it", took)
			}
			// The response is lost: the mapping deletes nothing.
			time.Sleep(31 * time.Second)
			got := visible(t, q)
			if !slices.Contains(got, undecodable) || len(deadLetters(t, q)) != 1 {
				t.Errorf("after a lost response: the source gives %q and the DLQ holds the copy? want the record in both", got)
			}
		})
	})
	t.Run("a copy past the deadline margin", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := newQueue(t, sqsloop.QueueSpec{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
			ev := deliver(t, q, fixture(t, "poison.json"), 30*time.Second)
			var copyEnded time.Time
			src := &hookedDLQ{Queue: q, send: func(ctx context.Context, _ sqsloop.Mailbox, _ []sqsloop.OutgoingMessage) ([]sqsloop.SendResult, error) {
				<-ctx.Done()
				copyEnded = time.Now()
				return nil, ctx.Err()
			}}
			logger, lg := newLogger()
			h := mustNew(t, jsonHandler(&runs{}), Config{OpenQueue: opener(t, src, nil), Logger: logger,
				Backoff: func(int) time.Duration { return 5 * time.Second }})
			begin := time.Now()
			resp, err := h.Handle(invocation(t, 10*time.Second), ev)
			took := time.Since(begin)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("10 s invocation, 1.5 s margin: the copy ended %v in, Handle answered %v in", copyEnded.Sub(begin), took)
			if want := 10*time.Second - DefaultDeadlineMargin + DefaultDeadlineMargin/4; copyEnded.Sub(begin) != want || took < want || took > 9*time.Second {
				t.Errorf("the copy ended %v in and Handle answered %v in: want the copy cut at %v, the answer after it and before 9 s", copyEnded.Sub(begin), took, want)
			}
			if got, want := ids(resp), idsOf(ev, 2, 3); !slices.Equal(got, want) {
				t.Errorf("batchItemFailures %v, want the undecodable and the failing record %v", got, want)
			}
			if st := h.Stats(); st.Poisoned != 0 || st.Nacked != 2 {
				t.Errorf("stats %+v: want nothing poisoned, both failures nacked", st)
			}
			if w := lg.permanent(); len(w) != 1 || !contains(w[0], "deadline margin") {
				t.Errorf("warnings %q: want one saying the copy ran into the deadline margin", w)
			}
			mapping(t, q, ev, resp)
			time.Sleep(begin.Add(took + 6*time.Second).Sub(time.Now()))
			if got := visible(t, q); !slices.Contains(got, undecodable) {
				t.Errorf("visible after the back-off: %q, want the undecodable record back", got)
			}
		})
	})
}

// On a FIFO queue a record moved to the dead-letter queue is processed,
// not failed: the rest of its message group runs (A3 after A2), and it
// stops nothing else, with Config.FIFOStopOnFailure too (B1 still runs,
// after the whole of A, one record at a time). B1's failure stops B as
// before. The copy keeps its message group and deduplication ID.
func TestFIFOGroupGoesOnAfterADeadLetteredRecord(t *testing.T) {
	const url = "https://sqs.us-east-1.amazonaws.com/000000000000/jobs.fifo"
	for _, stopAll := range []bool{false, true} {
		t.Run(fmt.Sprint("FIFOStopOnFailure ", stopAll), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := newQueue(t, sqsloop.QueueSpec{FIFO: true, VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5})
				ev := deliver(t, q, fixture(t, "poisonfifo.json"), 30*time.Second)
				var r runs
				h := mustNew(t, jsonHandler(&r), Config{OpenQueue: openerAt(t, url, q), Concurrency: 1, FIFOStopOnFailure: stopAll})
				resp, err := h.Handle(invocation(t, time.Minute), ev)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := ids(resp), idsOf(ev, 2, 4); !slices.Equal(got, want) {
					t.Errorf("batchItemFailures %v, want B1 and B2 %v", got, want)
				}
				if got, want := r.get(), []string{"A1", "A3", "fail: B1"}; !slices.Equal(got, want) {
					t.Errorf("jobs run %q, want %q", got, want)
				}
				dead := deadLetters(t, q)
				if len(dead) != 1 {
					t.Fatalf("the DLQ holds %d messages, want 1", len(dead))
				}
				if d := dead[0]; d.MessageGroupID != "A" || d.Attributes[sqsloop.AttrMessageDeduplicationID] != "dedup-3" || d.Body != `{"file": 2}` {
					t.Errorf("DLQ copy: body %q, group %q, attributes %v: want A2's, group A, deduplication ID dedup-3", d.Body, d.MessageGroupID, d.Attributes)
				}
				if st := h.Stats(); st.Poisoned != 1 || st.Skipped != 1 {
					t.Errorf("stats %+v: want 1 poisoned, 1 skipped", st)
				}
			})
		})
	}
}
