package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// differentialSeeds is how many sequences differential runs: 120, or
// SQSLOOP_DIFFERENTIAL_SEEDS (SQSLOOP_DIFFERENTIAL_SEED runs only the one
// of that seed).
func differentialSeeds(t *testing.T) int {
	if v := os.Getenv("SQSLOOP_DIFFERENTIAL_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SQSLOOP_DIFFERENTIAL_SEEDS=%q: want a positive number", v)
		}
		return n
	}
	return 120
}

// differential runs seeded random sequences of calls (sends, receives,
// batch acks and batch visibility changes naming any handle a receive gave,
// stale ones and one handle twice included, and queue attributes) on a
// queue of the Store and on a memmailbox queue of the same spec, and fails
// at the first call whose outcome differs: memmailbox is the oracle. Each
// sequence has a queue of its own, standard or FIFO, with or without a
// dead-letter queue; no time passes that matters (leases of 30 s and more,
// or 0), so outcomes do not depend on the machine's speed.
func differential(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	var failed []string
	for seed := range differentialSeeds(t) {
		if v := os.Getenv("SQSLOOP_DIFFERENTIAL_SEED"); v != "" && v != fmt.Sprint(seed) {
			continue // one sequence, to look at
		}
		if diff := runSequence(ctx, t, st, uint64(seed)); diff != "" {
			failed = append(failed, diff)
		}
	}
	for _, f := range failed {
		t.Error(f)
	}
}

// side is one mailbox of a sequence and what its calls returned.
type side struct {
	mb      sqsloop.Mailbox
	handles []string // by receive order: the handles the sequence refers to by index
}

// runSequence runs the sequence of seed on both mailboxes and returns a
// description of the first difference, or "".
func runSequence(ctx context.Context, t *testing.T, st *sqlmailbox.Store, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0xd1ff))
	spec := sqsloop.QueueSpec{Name: fmt.Sprintf("diff-%d", seed), VisibilityTimeout: time.Minute}
	if r.IntN(2) == 0 {
		spec.FIFO, spec.ContentBasedDeduplication = true, true
		spec.Name += sqsloop.FIFOSuffix
	}
	if r.IntN(2) == 0 {
		spec.MaxReceiveCount = 2 + r.IntN(2)
	}
	db, err := st.CreateQueue(ctx, spec)
	if err != nil {
		t.Fatalf("seed %d: CreateQueue: %v", seed, err)
	}
	defer db.Close()
	b := new(memmailbox.Broker)
	defer b.Close()
	mem, err := b.CreateQueue(spec)
	if err != nil {
		t.Fatalf("seed %d: memmailbox CreateQueue: %v", seed, err)
	}
	sides := [2]*side{{mb: mem}, {mb: db}}
	var log []string
	bodies := 0
	for step := range 40 {
		var op string
		var got [2]string
		switch k := r.IntN(10); {
		case k < 3: // send 1–4
			msgs := make([]sqsloop.OutgoingMessage, 1+r.IntN(4))
			for i := range msgs {
				if bodies > 0 && r.IntN(6) == 0 {
					msgs[i].Body = fmt.Sprint("m", r.IntN(bodies)) // a duplicate on a FIFO queue
				} else {
					msgs[i].Body = fmt.Sprint("m", bodies)
					bodies++
				}
				if spec.FIFO {
					msgs[i].MessageGroupID = fmt.Sprint("g", r.IntN(3))
				}
			}
			op = fmt.Sprintf("Send %s", describeSends(msgs))
			for i, s := range sides {
				got[i] = sendOutcome(ctx, s.mb, msgs)
			}
		case k < 6: // receive
			req := sqsloop.ReceiveRequest{MaxMessages: 1 + r.IntN(10), VisibilityTimeout: []time.Duration{0, 30 * time.Second, time.Minute}[r.IntN(3)]}
			op = fmt.Sprintf("Receive max %d, visibility %v", req.MaxMessages, req.VisibilityTimeout)
			for i, s := range sides {
				got[i] = s.receive(ctx, req)
			}
		case k < 8: // delete 1–4 handles
			picks := pickHandles(r, len(sides[0].handles))
			if picks == nil {
				continue
			}
			op = fmt.Sprintf("Delete handles %v", picks)
			for i, s := range sides {
				errs, err := s.mb.Delete(ctx, s.pick(picks))
				got[i] = entryOutcome(errs, err)
			}
		case k < 9: // change the visibility of 1–4 handles
			picks := pickHandles(r, len(sides[0].handles))
			if picks == nil {
				continue
			}
			timeouts := make([]time.Duration, len(picks))
			for i := range timeouts {
				timeouts[i] = []time.Duration{0, 10 * time.Second, time.Minute, sqsloop.MaxVisibilityTimeout}[r.IntN(4)]
			}
			op = fmt.Sprintf("ChangeVisibility handles %v to %v", picks, timeouts)
			for i, s := range sides {
				hs := s.pick(picks)
				cs := make([]sqsloop.VisibilityChange, len(hs))
				for j, h := range hs {
					cs[j] = sqsloop.VisibilityChange{ReceiptHandle: h, Timeout: timeouts[j]}
				}
				errs, err := s.mb.ChangeVisibility(ctx, cs)
				got[i] = entryOutcome(errs, err)
			}
		default:
			op = "QueueAttributes"
			for i, s := range sides {
				got[i] = counts(ctx, s.mb)
			}
		}
		log = append(log, fmt.Sprintf("  %2d %s -> %s", step, op, got[0]))
		if got[0] != got[1] {
			return fmt.Sprintf("seed %d, %s queue%s: step %d differs from memmailbox:\n%s\n     %s: %s",
				seed, map[bool]string{false: "standard", true: "FIFO"}[spec.FIFO], redrive(spec), step, strings.Join(log, "\n"),
				"sqlmailbox", got[1])
		}
	}
	return ""
}

// counts describes a queue's messages by state, and its DLQ's when it has
// one.
func counts(ctx context.Context, mb sqsloop.Mailbox) string {
	a, err := mb.(sqsloop.AttributesReader).QueueAttributes(ctx)
	out := fmt.Sprintf("visible %d, in flight %d, delayed %d, %v", a.ApproximateMessages, a.ApproximateMessagesInFlight,
		a.ApproximateMessagesDelayed, errClass(err))
	if err != nil || a.DeadLetterQueue == "" {
		return out
	}
	dlq, err := mb.(sqsloop.DeadLetterQueueOpener).OpenDeadLetterQueue(ctx)
	if err != nil {
		return out + "; DLQ: " + errClass(err)
	}
	defer dlq.Close()
	return out + "; DLQ: " + counts(ctx, dlq)
}

func redrive(spec sqsloop.QueueSpec) string {
	if spec.MaxReceiveCount == 0 {
		return ""
	}
	return fmt.Sprintf(" with a DLQ after %d receives", spec.MaxReceiveCount)
}

// pickHandles chooses 1–4 indexes of the n handles received so far, one of
// them twice now and then; nil when there are none.
func pickHandles(r *rand.Rand, n int) []int {
	if n == 0 {
		return nil
	}
	picks := make([]int, 1+r.IntN(4))
	for i := range picks {
		picks[i] = n - 1 - r.IntN(min(n, 8)) // mostly recent ones
		if i > 0 && r.IntN(4) == 0 {
			picks[i] = picks[r.IntN(i)]
		}
	}
	return picks
}

func (s *side) pick(picks []int) []string {
	hs := make([]string, len(picks))
	for i, p := range picks {
		hs[i] = s.handles[p]
	}
	return hs
}

// receive receives with req, remembering the handles, and describes what
// came: bodies, receive counts and groups, in order.
func (s *side) receive(ctx context.Context, req sqsloop.ReceiveRequest) string {
	msgs, err := s.mb.Receive(ctx, req)
	if err != nil {
		return errClass(err)
	}
	var out []string
	for _, m := range msgs {
		s.handles = append(s.handles, m.ReceiptHandle)
		out = append(out, fmt.Sprintf("%s#%d%s", m.Body, m.ReceiveCount, m.MessageGroupID))
	}
	return "[" + strings.Join(out, " ") + "]"
}

// sendOutcome sends msgs and describes each entry: stored, a duplicate (of
// which earlier entry's message), or its error.
func sendOutcome(ctx context.Context, mb sqsloop.Mailbox, msgs []sqsloop.OutgoingMessage) string {
	res, err := mb.Send(ctx, msgs)
	if err != nil {
		return errClass(err)
	}
	var out []string
	for i, r := range res {
		switch {
		case r.Err != nil:
			out = append(out, errClass(r.Err))
		default:
			out = append(out, fmt.Sprint(slices.IndexFunc(res[:i+1], func(o sqsloop.SendResult) bool { return o.MessageID == r.MessageID })))
		}
	}
	return strings.Join(out, " ")
}

func describeSends(msgs []sqsloop.OutgoingMessage) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Body+m.MessageGroupID)
	}
	return strings.Join(out, " ")
}

// entryOutcome describes a batch call's per-entry results.
func entryOutcome(errs []error, err error) string {
	if err != nil {
		return errClass(err)
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = errClass(e)
	}
	return strings.Join(out, " ")
}

// errClass names the sentinel err wraps: what the differential compares.
func errClass(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{sqsloop.ErrReceiptHandleExpired, "expired"},
		{sqsloop.ErrLeaseCeiling, "ceiling"},
		{sqsloop.ErrInvalidArgument, "invalid"},
		{sqsloop.ErrQueueNotFound, "no queue"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}
