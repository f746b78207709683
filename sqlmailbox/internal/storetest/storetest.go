// Package storetest holds the scenarios of what a sqlmailbox Store adds to
// the Mailbox contract (queue management, the sweep, the audit and archive
// tables, the receiver registry), which the tests of sqlmailbox/sqlite (in
// virtual time) and sqlmailbox/postgres (on a real server) run on their
// databases, the way mailboxtest's scenarios run on every Mailbox.
package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// Env is what the scenarios run on.
type Env struct {
	// Open returns a new Store on a database of the test's own, with cfg,
	// closed when t ends. Two calls in one test open the same database.
	Open func(t *testing.T, cfg sqlmailbox.Config) *sqlmailbox.Store
	// Run runs a scenario's body (in a synctest bubble for virtual time).
	Run func(t *testing.T, body func(t *testing.T))
	// VirtualTime says Run's waits (sqlharness.Sleep) cost nothing:
	// scenarios then wait out retention periods (a minute at least) too.
	VirtualTime bool
}

// Run runs every scenario on env, each as a parallel subtest.
func Run(t *testing.T, env Env) {
	for name, f := range map[string]func(*testing.T, Env){
		"QueueManagement":        queueManagement,
		"PurgeQueue":             purgeQueue,
		"SweepRecoversLapsed":    sweepRecoversLapsed,
		"AuditAndRetention":      auditAndRetention,
		"Archive":                archive,
		"ReceiverRegistry":       receiverRegistry,
		"ReceiverRowsAfterClose": receiverRowsAfterClose,
		"ReceiverSweptComesBack": receiverSweptComesBack,
		"QueueMessageSize":       queueMessageSize,
		"InFlightAndLeaseStats":  inFlightAndLeaseStats,
		"QueuePriority":          queuePriority,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env.Run(t, func(t *testing.T) { f(t, env) })
		})
	}
	t.Run("Differential", func(t *testing.T) {
		t.Parallel()
		differential(t, env) // on the wall clock, outside Run: see differential
	})
}

// ok fails t on err, else returns v: ok(t)(st.Sweep(ctx)).
func ok[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// queueManagement: CreateQueue is idempotent and names the attributes that
// differ; a missing queue is ErrQueueNotFound; QueueAttributes counts
// messages by state; a DLQ in use cannot be deleted; a deleted queue's
// Mailbox fails with ErrQueueNotFound; OpenDeadLetterQueue reaches the DLQ.
func queueManagement(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	spec := sqsloop.QueueSpec{Name: "orders", VisibilityTimeout: 20 * time.Second, Delay: 0, MaxReceiveCount: 3}
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, spec))
	defer mb.Close()
	again := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, spec))
	defer again.Close()
	_, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "orders", VisibilityTimeout: 40 * time.Second, FIFO: false, MaxReceiveCount: 5})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "VisibilityTimeout") || !strings.Contains(err.Error(), "MaxReceiveCount") {
		t.Errorf("CreateQueue with other attributes: %v, want ErrInvalidArgument naming VisibilityTimeout and MaxReceiveCount", err)
	}
	if _, err := st.Queue(ctx, "nope"); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("Queue(nope): %v, want ErrQueueNotFound", err)
	}

	mailboxtest.SendBodies(ctx, t, mb, "a", "b", "c")
	ok[[]sqsloop.SendResult](t)(mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "later", Delay: time.Minute}}))
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)
	a := ok[sqsloop.QueueAttributes](t)(mb.QueueAttributes(ctx))
	if a.ApproximateMessages != 2 || a.ApproximateMessagesInFlight != 1 || a.ApproximateMessagesDelayed != 1 {
		t.Errorf("counts: visible %d, in flight %d, delayed %d; want 2, 1, 1", a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed)
	}
	if a.RetentionPeriod != sqsloop.DefaultRetentionPeriod || a.MaxMessageSize != sqsloop.MaxMessageSize || a.DeadLetterQueue != "orders-dlq" || a.MaxReceiveCount != 3 {
		t.Errorf("attributes %+v: want the defaults and the redrive policy to orders-dlq", a)
	}

	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()
	if _, err := dlq.(sqsloop.DeadLetterQueueOpener).OpenDeadLetterQueue(ctx); !errors.Is(err, sqsloop.ErrNoDeadLetterQueue) {
		t.Errorf("the DLQ's own OpenDeadLetterQueue: %v, want ErrNoDeadLetterQueue", err)
	}
	if err := st.DeleteQueue(ctx, "orders-dlq"); !errors.Is(err, sqlmailbox.ErrQueueInUse) {
		t.Errorf("DeleteQueue of a DLQ in use: %v, want ErrQueueInUse", err)
	}
	if err := st.DeleteQueue(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteQueue(ctx, "orders"); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("second DeleteQueue: %v, want ErrQueueNotFound", err)
	}
	if _, err := mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "x"}}); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("Send to a deleted queue: %v, want ErrQueueNotFound", err)
	}
	if _, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("Receive from a deleted queue: %v, want ErrQueueNotFound", err)
	}
	if _, err := mb.QueueAttributes(ctx); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("QueueAttributes of a deleted queue: %v, want ErrQueueNotFound", err)
	}
	if err := st.DeleteQueue(ctx, "orders-dlq"); err != nil {
		t.Errorf("DeleteQueue of the DLQ once its queue is gone: %v", err)
	}
}

// purgeQueue: PurgeQueue deletes the queue's messages visible, in flight
// and delayed, and no other queue's (its dead-letter queue's stay); the
// queue goes on working; a missing queue is ErrQueueNotFound.
func purgeQueue(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "purged", MaxReceiveCount: 3}))
	defer mb.Close()
	other := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "kept"}))
	defer other.Close()
	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()

	mailboxtest.SendBodies(ctx, t, mb, "a", "b", "c")
	ok[[]sqsloop.SendResult](t)(mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: "later", Delay: time.Minute}}))
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)
	mailboxtest.SendBodies(ctx, t, other, "x")
	mailboxtest.SendBodies(ctx, t, dlq, "dead")

	if n := ok[int](t)(st.PurgeQueue(ctx, "purged")); n != 4 {
		t.Errorf("PurgeQueue deleted %d messages, want 4 (2 visible, 1 in flight, 1 delayed)", n)
	}
	a := ok[sqsloop.QueueAttributes](t)(mb.QueueAttributes(ctx))
	if a.ApproximateMessages+a.ApproximateMessagesInFlight+a.ApproximateMessagesDelayed != 0 {
		t.Errorf("after PurgeQueue: visible %d, in flight %d, delayed %d; want none", a.ApproximateMessages, a.ApproximateMessagesInFlight, a.ApproximateMessagesDelayed)
	}
	for _, q := range []sqsloop.Mailbox{other, dlq} {
		if a := ok[sqsloop.QueueAttributes](t)(q.(sqsloop.AttributesReader).QueueAttributes(ctx)); a.ApproximateMessages != 1 {
			t.Errorf("another queue after PurgeQueue: %d visible, want its 1", a.ApproximateMessages)
		}
	}
	mailboxtest.SendBodies(ctx, t, mb, "after")
	if got := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute); got[0].Body != "after" {
		t.Errorf("received %q after PurgeQueue, want the message sent after it", got[0].Body)
	}
	if _, err := st.PurgeQueue(ctx, "nope"); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("PurgeQueue(nope): %v, want ErrQueueNotFound", err)
	}
}

// sweepRecoversLapsed: a lease that lapsed is found by Sweep, audited,
// and marked recovered; one that reached maxReceiveCount is moved to the
// DLQ (failed); a lease nacked with a failure recorded is not reported.
func sweepRecoversLapsed(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "sweep", MaxReceiveCount: 2}))
	defer mb.Close()
	// "fails" is received twice, reaching maxReceiveCount; its second
	// lease will lapse.
	fails := mailboxtest.SendBodies(ctx, t, mb, "fails")[0]
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)
	if err := sqlharness.Sleep(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if m := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)[0]; m.ID != fails || m.ReceiveCount != 2 {
		t.Fatalf("second receive: %s count %d, want %s count 2", m.ID, m.ReceiveCount, fails)
	}
	// "lapses" lapses; "recorded" fails with its failure recorded, so its
	// visibility timeout is a back-off, not a lease.
	mailboxtest.SendBodies(ctx, t, mb, "lapses", "recorded")
	for _, m := range mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Second) {
		if m.Body == "recorded" {
			if err := mb.RecordFailure(ctx, m, "handler said no"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sqlharness.Sleep(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	stats := ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx))
	t.Logf("sweep: %+v", stats)
	if stats.ExpiredFound != 2 || stats.Recovered != 1 || stats.Failed != 1 {
		t.Errorf("sweep stats %+v: want 2 expired found, 1 recovered, 1 failed", stats)
	}
	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()
	if d := mailboxtest.ReceiveN(ctx, t, dlq, 1, 10*time.Second, time.Minute); d[0].ID != fails {
		t.Errorf("DLQ holds %s, want %s (\"fails\")", d[0].ID, fails)
	}
	if again := ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx)); again.ExpiredFound != 0 {
		t.Errorf("a second sweep found %d lapsed leases again", again.ExpiredFound)
	}
	kinds := map[sqlmailbox.AuditKind]int{}
	reasons := map[sqlmailbox.AuditKind]string{ // one wording on both databases
		sqlmailbox.AuditDeadLettered: driver.DeadLetterReason(2, "sweep-dlq"),
		sqlmailbox.AuditLeaseExpired: driver.ReasonLeaseExpired,
		sqlmailbox.AuditFailure:      "handler said no",
	}
	for _, r := range ok[[]sqlmailbox.AuditRecord](t)(st.Audit(ctx, "sweep", 100)) {
		kinds[r.Kind]++
		if r.Reason != reasons[r.Kind] {
			t.Errorf("audit row of kind %s: reason %q, want %q", r.Kind, r.Reason, reasons[r.Kind])
		}
	}
	if kinds[sqlmailbox.AuditFailure] != 1 || kinds[sqlmailbox.AuditLeaseExpired] != 1 || kinds[sqlmailbox.AuditDeadLettered] != 1 {
		t.Errorf("audit kinds %v: want 1 failure, 1 lease-expired, 1 dead-lettered", kinds)
	}
}

// auditAndRetention: RecordFailure rows come newest first, with the
// message and reason; with virtual time, Sweep deletes messages past the
// queue's retention period (auditing them) and audit rows past
// AuditRetention.
func auditAndRetention(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{AuditRetention: 2 * time.Minute})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "audit", RetentionPeriod: time.Minute}))
	defer mb.Close()
	mailboxtest.SendBodies(ctx, t, mb, "one", "two")
	msgs := mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Minute)
	for _, m := range msgs {
		if err := mb.RecordFailure(ctx, m, "reason "+m.Body); err != nil {
			t.Fatal(err)
		}
	}
	recs := ok[[]sqlmailbox.AuditRecord](t)(st.Audit(ctx, "", 10))
	if len(recs) != 2 || recs[0].MessageID != msgs[1].ID || recs[0].Reason != "reason "+msgs[1].Body || recs[0].Kind != sqlmailbox.AuditFailure || recs[0].ReceiveCount != 1 {
		t.Fatalf("audit %+v: want the two failures, newest first", recs)
	}
	if err := mb.RecordFailure(ctx, &sqsloop.Message{ID: "x", ReceiptHandle: "forged"}, "r"); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
		t.Errorf("RecordFailure with a forged handle: %v, want ErrReceiptHandleExpired", err)
	}
	if !env.VirtualTime {
		return
	}
	if err := sqlharness.Sleep(ctx, 61*time.Second); err != nil {
		t.Fatal(err)
	}
	stats := ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx))
	if stats.RetentionDeleted != 2 {
		t.Errorf("sweep after the 1 min retention: %+v, want 2 deleted", stats)
	}
	if a := ok[sqsloop.QueueAttributes](t)(mb.QueueAttributes(ctx)); a.ApproximateMessages+a.ApproximateMessagesInFlight != 0 {
		t.Errorf("after retention: %+v, want an empty queue", a)
	}
	if err := sqlharness.Sleep(ctx, 2*time.Minute+time.Second); err != nil {
		t.Fatal(err)
	}
	stats = ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx))
	if stats.AuditTrimmed != 4 { // 2 failures, 2 retention deletes
		t.Errorf("sweep after the 2 min audit retention: %+v, want 4 audit rows trimmed", stats)
	}
}

// archive: with Config.Archive an ack keeps the message in the archive
// table, body and attributes.
func archive(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{Archive: true})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "kept"}))
	defer mb.Close()
	attrs := map[string]sqsloop.MessageAttribute{"k": {DataType: "String", StringValue: "v"}}
	ids := mailboxtest.SendAll(ctx, t, mb, sqsloop.OutgoingMessage{Body: "keep me", MessageAttributes: attrs})
	mailboxtest.AckAll(ctx, t, mb, mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)...)
	got := ok[[]sqlmailbox.ArchivedMessage](t)(st.Archived(ctx, "kept", 10))
	if len(got) != 1 || got[0].MessageID != ids[0] || got[0].Body != "keep me" || got[0].MessageAttributes["k"].StringValue != "v" || got[0].ReceiveCount != 1 {
		t.Fatalf("archive %+v: want the acked message", got)
	}
	if _, err := st.Archived(ctx, "kept", 0); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("Archived with limit 0: %v", err)
	}
}

// receiverRegistry: a receiving Mailbox is listed alive with what it
// holds, and stays alive while it only extends leases (each renews its
// row); one that stops calling is shown dead once Config.ReceiverTTL has
// passed; a closed one is gone. Every bound derives from the TTL. In
// virtual time the receiver is alive whenever it should be; on the wall
// clock, where a stall between a renewal and the listing may make it dead,
// Alive is checked against the rule (seen within the TTL) and the renewals
// by the last-seen time they move on.
func receiverRegistry(t *testing.T, env Env) {
	ctx := t.Context()
	const ttl = 3 * time.Second
	renewal := ttl / 3 // how often a Mailbox renews its row
	st := env.Open(t, sqlmailbox.Config{ReceiverTTL: ttl})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "receivers"}))
	idle := ok[*sqlmailbox.Mailbox](t)(st.Queue(ctx, "receivers"))
	defer idle.Close()
	alive := func(when string, r sqlmailbox.Receiver) {
		t.Helper()
		if r.Alive != (r.SinceSeen < ttl) || (env.VirtualTime && !r.Alive) {
			t.Fatalf("%s: receiver %+v: want it alive, as seen %v ago (shown dead after %v)", when, r, r.SinceSeen, ttl)
		}
	}
	mailboxtest.SendBodies(ctx, t, mb, "a", "b")
	held := mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Minute)
	rs := ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx))
	if len(rs) != 1 || rs[0].ID != mb.ReceiverID() || rs[0].InFlight != 2 || rs[0].Queue != "receivers" || rs[0].PID == 0 {
		t.Fatalf("receivers %+v: want one, holding 2", rs)
	}
	alive("after its receive", rs[0])
	registered := rs[0].LastSeen
	// Busy with long jobs, it receives nothing, but extends their leases,
	// a renewal apart, for longer than it takes to be shown dead: that
	// keeps it alive.
	for range 5 {
		if err := sqlharness.Sleep(ctx, renewal); err != nil {
			t.Fatal(err)
		}
		changes := []sqsloop.VisibilityChange{{ReceiptHandle: held[0].ReceiptHandle, Timeout: time.Minute}, {ReceiptHandle: held[1].ReceiptHandle, Timeout: time.Minute}}
		if errs, err := mb.ChangeVisibility(ctx, changes); err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatalf("extend: %v %v", errs, err)
		}
	}
	rs = ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx))
	if len(rs) != 1 || rs[0].LastSeen.Sub(registered) < ttl {
		t.Fatalf("receivers %+v after 5 extensions and no receive: want it seen more than %v after it registered (%v)",
			rs, ttl, registered)
	}
	alive("after its extensions", rs[0])
	if err := sqlharness.Sleep(ctx, ttl+renewal); err != nil {
		t.Fatal(err)
	}
	rs = ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx))
	if len(rs) != 1 || rs[0].Alive || rs[0].SinceSeen < ttl {
		t.Fatalf("receivers %+v after %v without a call: want it shown dead", rs, ttl+renewal)
	}
	mb.Close()
	if rs := ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx)); len(rs) != 0 {
		t.Fatalf("receivers %+v after Close: want none", rs)
	}
}

// receiverRowsAfterClose: a Store closed without closing its Mailboxes
// first (a worker that returns from main with only a deferred Store.Close)
// leaves no receiver row behind.
func receiverRowsAfterClose(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "closing"}))
	mailboxtest.SendBodies(ctx, t, mb, "a")
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)
	if rs := ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx)); len(rs) != 1 {
		t.Fatalf("receivers %+v after a receive: want one", rs)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	other := env.Open(t, sqlmailbox.Config{})
	if rs := ok[[]sqlmailbox.Receiver](t)(other.Receivers(ctx)); len(rs) != 0 {
		t.Fatalf("receivers %+v after Store.Close: want none", rs)
	}
}

// receiverSweptComesBack: a receiver whose row a sweep deleted (not seen
// for ReceiverRetention: say its process was suspended) is listed again,
// alive, once it renews. It waits out the hour: virtual time only.
func receiverSweptComesBack(t *testing.T, env Env) {
	if !env.VirtualTime {
		t.Skip("waits out ReceiverRetention (an hour): virtual time only")
	}
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{ReceiverTTL: 3 * time.Second})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "swept"}))
	defer mb.Close()
	mailboxtest.SendBodies(ctx, t, mb, "long job")
	held := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, 2*sqlmailbox.ReceiverRetention)[0]
	if err := sqlharness.Sleep(ctx, sqlmailbox.ReceiverRetention+time.Second); err != nil {
		t.Fatal(err)
	}
	if stats := ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx)); stats.ReceiversRemoved != 1 {
		t.Fatalf("sweep after an hour without a renewal: %+v, want 1 receiver removed", stats)
	}
	if errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: held.ReceiptHandle, Timeout: time.Minute}}); err != nil || errs[0] != nil {
		t.Fatalf("extend: %v %v", errs, err)
	}
	rs := ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx))
	if len(rs) != 1 || rs[0].ID != mb.ReceiverID() || !rs[0].Alive || rs[0].InFlight != 1 {
		t.Fatalf("receivers %+v after the swept receiver extended a lease: want it listed again, alive, holding 1", rs)
	}
}

// queueMessageSize: a queue's MaxMessageSize is enforced per entry.
func queueMessageSize(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "small", MaxMessageSize: 1024}))
	defer mb.Close()
	res := ok[[]sqsloop.SendResult](t)(mb.Send(ctx, []sqsloop.OutgoingMessage{{Body: strings.Repeat("x", 1025)}, {Body: "fits"}}))
	if !errors.Is(res[0].Err, sqsloop.ErrInvalidArgument) || !strings.Contains(res[0].Err.Error(), "1024") || res[1].Err != nil {
		t.Fatalf("Send of 1,025 and 4 bytes to a 1,024-byte queue: %v, %v", res[0].Err, res[1].Err)
	}
}

// inFlightAndLeaseStats: InFlight lists what receives hold, with receive
// count, holder, deadline and last extension, the lapsed first;
// LeaseStats counts them, and the acked and dead-lettered by receive
// count, the leases sweeps recovered and the failures reported; a sweep
// says by queue what it recovered.
func inFlightAndLeaseStats(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	start := time.Now()
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "held", MaxReceiveCount: 2}))
	defer mb.Close()
	sleep := func(d time.Duration) {
		t.Helper()
		if err := sqlharness.Sleep(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// d is received twice (reaching maxReceiveCount) and lapses; a is
	// held and extended; b lapses; c is acked.
	d := mailboxtest.SendBodies(ctx, t, mb, "d")[0]
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)
	sleep(2 * time.Second)
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)
	ids := mailboxtest.SendBodies(ctx, t, mb, "a", "b", "c")
	a := mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)[0]
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)
	mailboxtest.AckAll(ctx, t, mb, mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)...)
	if errs, err := mb.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: a.ReceiptHandle, Timeout: 2 * time.Minute}}); err != nil || errs[0] != nil {
		t.Fatalf("extend a: %v %v", errs, err)
	}
	sleep(2 * time.Second)

	held := ok[[]sqlmailbox.InFlightMessage](t)(st.InFlight(ctx, "held", 10))
	if len(held) != 3 || held[0].MessageID != d || held[1].MessageID != ids[1] || held[2].MessageID != ids[0] {
		t.Fatalf("in flight %+v: want d and b (lapsed), then a", held)
	}
	for i, m := range held {
		wantCount := map[int]int{0: 2, 1: 1, 2: 1}[i]
		if m.PastDeadline != (i < 2) || m.ReceiveCount != wantCount || m.Receiver.ID != mb.ReceiverID() || !m.Receiver.Alive ||
			m.Receiver.PID == 0 || m.Receiver.Queue != "held" || m.ReceivedAt.IsZero() || m.SentAt.IsZero() {
			t.Errorf("in flight [%d] %+v: want past deadline %v, receive count %d, held by %s (alive)", i, m, i < 2, wantCount, mb.ReceiverID())
		}
		if extended := !m.ExtendedAt.IsZero(); extended != (i == 2) {
			t.Errorf("in flight [%d] %+v: extended %v, want %v", i, m, extended, i == 2)
		}
	}
	if a := held[2]; a.LeaseDeadline.Sub(a.ExtendedAt) < 119*time.Second || a.SinceRenewed < 2*time.Second || a.SinceRenewed > time.Minute {
		t.Errorf("a %+v: want a deadline 2 min after its extension, renewed 2 s ago", a)
	}
	if got := ok[[]sqlmailbox.InFlightMessage](t)(st.InFlight(ctx, "held", 1)); len(got) != 1 || got[0].MessageID != d {
		t.Errorf("in flight, limit 1: %+v, want d alone", got)
	}
	want := sqlmailbox.LeaseStats{Queue: "held", Since: start.UTC().Truncate(time.Hour), InFlight: 1, PastDeadline: 2,
		Acked: []sqlmailbox.ReceiveCountTally{{ReceiveCount: 1, Messages: 1}}, DeadLettered: []sqlmailbox.ReceiveCountTally{}}
	stats := func(st *sqlmailbox.Store, when string, want sqlmailbox.LeaseStats) {
		t.Helper()
		got := ok[sqlmailbox.LeaseStats](t)(st.LeaseStats(ctx, "held", start))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("lease stats %s:\n got %+v\nwant %+v", when, got, want)
		}
	}
	// Another process sees the ack of c: its Store added it to the tally
	// within a second, and the test waited two.
	other := env.Open(t, sqlmailbox.Config{})
	stats(other, "before the sweep, read by another Store", want)

	swept := ok[sqlmailbox.SweepStats](t)(st.Sweep(ctx))
	if len(swept.ByQueue) != 1 || swept.ByQueue[0] != (sqlmailbox.QueueSweepStats{Queue: "held", ExpiredFound: 2, Recovered: 1, Failed: 1}) {
		t.Errorf("sweep by queue %+v: want held: 2 expired, 1 recovered, 1 failed", swept.ByQueue)
	}
	want.PastDeadline, want.DeadLettered, want.LeasesExpired = 0, []sqlmailbox.ReceiveCountTally{{ReceiveCount: 2, Messages: 1}}, 1
	stats(st, "after the sweep", want)

	// b, received again, is acked at its second receive; a's failure is
	// recorded, and a is no longer held.
	mailboxtest.AckAll(ctx, t, mb, mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Minute)...)
	if err := mb.RecordFailure(ctx, a, "no"); err != nil {
		t.Fatal(err)
	}
	want.InFlight, want.Acked, want.Failures = 0, []sqlmailbox.ReceiveCountTally{{ReceiveCount: 1, Messages: 1}, {ReceiveCount: 2, Messages: 1}}, 1
	stats(st, "after b's second ack and a's failure (the Store's own, read at once)", want)
	// A Store that closes adds what it counted.
	closing := env.Open(t, sqlmailbox.Config{})
	cmb := ok[*sqlmailbox.Mailbox](t)(closing.Queue(ctx, "held"))
	mailboxtest.SendBodies(ctx, t, cmb, "e")
	mailboxtest.AckAll(ctx, t, cmb, mailboxtest.ReceiveN(ctx, t, cmb, 1, 10*time.Second, time.Minute)...)
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	want.Acked[0].Messages = 2
	stats(other, "after another Store acked e and closed", want)
	if got := ok[[]sqlmailbox.InFlightMessage](t)(st.InFlight(ctx, "held", 10)); len(got) != 0 {
		t.Errorf("in flight after the last ack and a failure: %+v, want none", got)
	}
	for _, r := range ok[[]sqlmailbox.Receiver](t)(st.Receivers(ctx)) {
		if r.ID == mb.ReceiverID() && r.InFlight != 0 {
			t.Errorf("receiver %+v after the last ack and a failure: want it holding nothing, as InFlight lists", r)
		}
	}
	if later := ok[sqlmailbox.LeaseStats](t)(st.LeaseStats(ctx, "held", start.Add(2*time.Hour))); len(later.Acked)+later.Failures != 0 {
		t.Errorf("lease stats since 2 h from now: %+v, want no acks and no failures", later)
	}

	if _, err := st.InFlight(ctx, "held", 0); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("InFlight with limit 0: %v, want ErrInvalidArgument", err)
	}
	if _, err := st.InFlight(ctx, "nope", 10); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("InFlight of a missing queue: %v, want ErrQueueNotFound", err)
	}
	if _, err := st.LeaseStats(ctx, "nope", start); !errors.Is(err, sqsloop.ErrQueueNotFound) {
		t.Errorf("LeaseStats of a missing queue: %v, want ErrQueueNotFound", err)
	}
}

// queuePriority: a queue's Priority is one of its attributes: reported,
// compared by CreateQueue, given to its dead-letter queue.
func queuePriority(t *testing.T, env Env) {
	ctx := t.Context()
	st := env.Open(t, sqlmailbox.Config{})
	spec := sqsloop.QueueSpec{Name: "ranked", Priority: true, MaxReceiveCount: 3}
	mb := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, spec))
	defer mb.Close()
	if a := ok[sqsloop.QueueAttributes](t)(mb.QueueAttributes(ctx)); !a.Priority {
		t.Errorf("attributes %+v: want Priority", a)
	}
	dlq := ok[sqsloop.Mailbox](t)(mb.OpenDeadLetterQueue(ctx))
	defer dlq.Close()
	if a := ok[sqsloop.QueueAttributes](t)(dlq.(sqsloop.AttributesReader).QueueAttributes(ctx)); !a.Priority {
		t.Errorf("the DLQ's attributes %+v: want Priority, as its queue's", a)
	}
	_, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "ranked", MaxReceiveCount: 3})
	if !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "Priority") {
		t.Errorf("CreateQueue without Priority of a queue with it: %v, want ErrInvalidArgument naming Priority", err)
	}
	plain := ok[*sqlmailbox.Mailbox](t)(st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "plain"}))
	defer plain.Close()
	// On a queue without priorities the attribute is any attribute: kept,
	// not checked, ordering nothing.
	mailboxtest.SendAll(ctx, t, plain, sqsloop.OutgoingMessage{Body: "first", MessageAttributes: map[string]sqsloop.MessageAttribute{
		sqsloop.PriorityAttribute: {DataType: "String", StringValue: "urgent"}}},
		sqsloop.OutgoingMessage{Body: "second", MessageAttributes: map[string]sqsloop.MessageAttribute{sqsloop.PriorityAttribute: sqsloop.PriorityValue(9)}})
	got := mailboxtest.ReceiveN(ctx, t, plain, 2, 10*time.Second, time.Minute)
	if got[0].Body != "first" || got[0].MessageAttributes[sqsloop.PriorityAttribute].StringValue != "urgent" {
		t.Errorf("a queue without priorities delivered %q first (attributes %v), want \"first\", in the order sent, its attribute kept",
			got[0].Body, got[0].MessageAttributes)
	}
}
