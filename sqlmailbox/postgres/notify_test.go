package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// A message sent by one process wakes another's long poll at once
// (LISTEN/NOTIFY): two Stores on one database, the receiving one looking at
// the database only every minute (Config.PollInterval); its 20 s long poll,
// waiting before the send, returns the message before its wait ends. Were
// the wake-up lost, it would look again only when its 20 s ended.
func TestSendWakesAnotherStoresLongPoll(t *testing.T) {
	dsn := sqlharness.PGDSN(t)
	name := sqlharness.QueueName(t)
	sender := openQueue(t, openStore(t, dsn, sqlmailbox.Config{}), name)
	receiver := openQueue(t, openStore(t, dsn, sqlmailbox.Config{PollInterval: time.Minute}), name)
	expectWokenBy(t, receiver, sender, "first")
	expectWokenBy(t, receiver, sender, "second") // the listener, started by the first poll, still listens
}

// openStore opens a Store on dsn with cfg, closed when t ends.
func openStore(t *testing.T, dsn string, cfg sqlmailbox.Config) *sqlmailbox.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, postgres.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// openQueue returns st's Mailbox of the queue name, created if missing,
// closed when t ends.
func openQueue(t *testing.T, st *sqlmailbox.Store, name string) *sqlmailbox.Mailbox {
	t.Helper()
	mb, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mb.Close() })
	return mb
}

// expectWokenBy starts a 20 s long poll on receiver, sends body through
// sender a second later, and fails t unless that long poll returns the
// message before its 20 s end. receiver's Store must poll the database less
// often than every 20 s, so that only a wake-up from the database brings the
// message earlier (at its end the poll looks once more, and would find it).
func expectWokenBy(t *testing.T, receiver, sender sqsloop.Mailbox, body string) {
	t.Helper()
	expectWoken(t, receiver, body, func() string { return mailboxtest.SendBodies(t.Context(), t, sender, body)[0] })
}

// expectWoken starts a 20 s long poll on receiver, calls act a second
// later, and fails t unless that long poll returns the message whose ID
// act returns before its 20 s end (see expectWokenBy); what names act.
// It acks the message.
func expectWoken(t *testing.T, receiver sqsloop.Mailbox, what string, act func() string) {
	t.Helper()
	ctx := t.Context()
	got := longPoll(ctx, receiver)
	if err := sqlharness.Sleep(ctx, time.Second); err != nil { // the long poll is waiting
		t.Fatal(err)
	}
	id := act()
	r := <-got
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ID != id || r.elapsed >= sqsloop.MaxWaitTime {
		t.Fatalf("20 s long poll on another Store, %s after 1 s: %d messages, %v, after %v; want %s before the poll's end: the wake-up did not reach it",
			what, len(r.msgs), r.err, r.elapsed.Round(time.Millisecond), id)
	}
	t.Logf("%q: the other Store's long poll returned it %v after it began", what, r.elapsed.Round(time.Millisecond))
	mailboxtest.AckAll(ctx, t, receiver, r.msgs...)
}

// polled is what a long poll returned, and after how long.
type polled struct {
	msgs    []*sqsloop.Message
	err     error
	elapsed time.Duration
}

// longPoll starts a 20 s long poll for one message on mb (1-minute lease);
// the channel yields its result.
func longPoll(ctx context.Context, mb sqsloop.Mailbox) <-chan polled {
	got := make(chan polled, 1)
	go func() {
		start := time.Now()
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute, WaitTime: sqsloop.MaxWaitTime})
		got <- polled{msgs, err, time.Since(start)}
	}()
	return got
}

// A nack in a batch, a FIFO delete that frees a group, and a message
// moved to the dead-letter queue, made through one Store, each wake a long
// poll of another Store (LISTEN/NOTIFY) that looks at the database only
// every minute.
func TestEveryRevealWakesAnotherStoresLongPoll(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.PGDSN(t)
	acting := openStore(t, dsn, sqlmailbox.Config{})
	waiting := openStore(t, dsn, sqlmailbox.Config{PollInterval: time.Minute})
	name := sqlharness.QueueName(t)

	mb := openQueue(t, acting, name)
	poll := openQueue(t, waiting, name)
	mailboxtest.SendBodies(ctx, t, mb, "kept", "nacked")
	held := mailboxtest.ReceiveN(ctx, t, mb, 2, 10*time.Second, time.Minute)
	expectWoken(t, poll, "a nack in a batch", func() string {
		changes := []sqsloop.VisibilityChange{{ReceiptHandle: held[0].ReceiptHandle, Timeout: time.Minute}, {ReceiptHandle: held[1].ReceiptHandle}}
		if errs, err := mb.ChangeVisibility(ctx, changes); err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatalf("ChangeVisibility: %v %v", errs, err)
		}
		return held[1].ID
	})

	redriven, err := acting.CreateQueue(ctx, sqsloop.QueueSpec{Name: name + "-r", MaxReceiveCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer redriven.Close()
	dlq, err := waiting.Queue(ctx, name+"-r-dlq")
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	poison := mailboxtest.SendBodies(ctx, t, redriven, "poison")[0]
	once := mailboxtest.ReceiveN(ctx, t, redriven, 1, 10*time.Second, time.Minute)[0]
	if errs, err := redriven.ChangeVisibility(ctx, []sqsloop.VisibilityChange{{ReceiptHandle: once.ReceiptHandle}}); err != nil || errs[0] != nil {
		t.Fatalf("nack: %v %v", errs, err)
	}
	expectWoken(t, dlq, "a move to the dead-letter queue", func() string {
		mailboxtest.ExpectNone(ctx, t, redriven, 0) // received once already: this receive moves it to the DLQ
		return poison
	})

	fifo := openFIFO(t, acting, name+".fifo")
	fifoPoll := openFIFO(t, waiting, name+".fifo")
	fids := mailboxtest.SendAll(ctx, t, fifo,
		sqsloop.OutgoingMessage{Body: "head", MessageGroupID: "g", DeduplicationID: "head"},
		sqsloop.OutgoingMessage{Body: "next", MessageGroupID: "g", DeduplicationID: "next"})
	head := mailboxtest.ReceiveN(ctx, t, fifo, 1, 10*time.Second, time.Minute)
	expectWoken(t, fifoPoll, "the delete of a FIFO group's head", func() string {
		mailboxtest.AckAll(ctx, t, fifo, head...)
		return fids[1]
	})
}

// openFIFO returns st's Mailbox of the FIFO queue name, created if
// missing, closed when t ends.
func openFIFO(t *testing.T, st *sqlmailbox.Store, name string) *sqlmailbox.Mailbox {
	t.Helper()
	mb, err := st.CreateQueue(t.Context(), sqsloop.QueueSpec{Name: name, FIFO: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mb.Close() })
	return mb
}

// No wake-up is lost to the NOTIFY limiter: 8 goroutines of one Store send
// 400 messages, one per Send, as fast as they can, while a receiver of
// another Store, looking at the database only every minute, takes them in
// 20 s long polls; it gets every one within 20 s (a wake-up lost while it
// waited would cost it a whole poll), and the NOTIFYs its database sent
// for the queue, counted by a listener of the test's own, are fewer than
// the sends: at most two per window (postgres.NotifyWindow) of the burst.
func TestNotifyBurstLimitedWithoutLosingAWakeUp(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.PGDSN(t)
	name := sqlharness.QueueName(t)
	sender := openQueue(t, openStore(t, dsn, sqlmailbox.Config{}), name)
	receiver := openQueue(t, openStore(t, dsn, sqlmailbox.Config{PollInterval: time.Minute}), name)

	listener, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	if _, err := listener.Exec(ctx, "LISTEN sqsloop"); err != nil {
		t.Fatal(err)
	}
	var queueID string
	query(t, dsn, `SELECT id::text FROM sqsloop_queues WHERE name = '`+name+`'`, &queueID)

	const senders, each = 8, 50
	got := make(chan error, 1)
	go func() {
		n := 0
		for n < senders*each {
			msgs, err := receiver.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute, WaitTime: sqsloop.MaxWaitTime})
			if err == nil && len(msgs) == 0 {
				err = fmt.Errorf("a 20 s long poll came back empty after %d of %d messages: a wake-up was lost", n, senders*each)
			}
			if err != nil {
				got <- err
				return
			}
			n += len(msgs)
		}
		got <- nil
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for range each {
				if _, err := sender.Send(ctx, []sqsloop.OutgoingMessage{{Body: "burst"}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	burst := time.Since(start)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	notes := 0
	for {
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		n, err := listener.WaitForNotification(wctx)
		cancel()
		if err != nil {
			break // none within 100 ms: the notifier's held NOTIFYs are all in
		}
		if strings.HasPrefix(n.Payload, queueID+" ") {
			notes++
		}
	}
	most := 2*int(burst/postgres.NotifyWindow) + 2
	t.Logf("%d sends in %v: %d NOTIFYs for the queue (at most %d allowed)", senders*each, burst.Round(time.Millisecond), notes, most)
	if notes == 0 || notes > most || notes >= senders*each {
		t.Errorf("%d NOTIFYs for %d sends in %v: want 1 to %d", notes, senders*each, burst.Round(time.Millisecond), min(most, senders*each-1))
	}
}

// A long poll sleeps until the earliest visibility deadline the database
// reported, not until its next look: a Store that looks only every minute
// (Config.PollInterval), a message sent with a 2 s delay, and a 20 s long
// poll begun at the send returns it before its wait ends.
func TestLongPollWakesWhenADelayEnds(t *testing.T) {
	ctx := t.Context()
	mb := openQueue(t, openStore(t, sqlharness.PGDSN(t), sqlmailbox.Config{PollInterval: time.Minute}), sqlharness.QueueName(t))
	ids := mailboxtest.SendAll(ctx, t, mb, sqsloop.OutgoingMessage{Body: "later", Delay: 2 * time.Second})
	start := time.Now()
	msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute, WaitTime: sqsloop.MaxWaitTime})
	elapsed := time.Since(start)
	if err != nil || len(msgs) != 1 || msgs[0].ID != ids[0] || elapsed >= sqsloop.MaxWaitTime {
		t.Fatalf("20 s long poll for a message delayed 2 s: %d messages, %v, after %v; want it before the poll's end",
			len(msgs), err, elapsed.Round(time.Millisecond))
	}
	t.Logf("the long poll returned the delayed message after %v", elapsed.Round(time.Millisecond))
}

// A long poll that finds the visible messages being taken by another
// receive (locked: FOR UPDATE SKIP LOCKED passes them by) looks again soon,
// to learn the leases that receive gives them, and so returns a message
// when its lease lapses, not at the end of its wait: here the test's own
// transaction plays the other receive, locks the queue's one message while
// the long poll (of a Store that looks only every minute) begins, and
// commits a 1 s lease on it half a second later; the 20 s long poll gets
// the message about a second after that.
func TestLongPollSeesALeaseTakenWhileItLooked(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.PGDSN(t)
	mb := openQueue(t, openStore(t, dsn, sqlmailbox.Config{PollInterval: time.Minute}), sqlharness.QueueName(t))
	id := mailboxtest.SendBodies(ctx, t, mb, "taken elsewhere")[0]

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sqsloop_messages WHERE message_id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	got := longPoll(ctx, mb)
	if err := sqlharness.Sleep(ctx, 500*time.Millisecond); err != nil { // the long poll looks meanwhile
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE sqsloop_messages SET visible_at = statement_timestamp() + interval '1 second',
		receive_count = receive_count + 1, received_at = statement_timestamp(), leased = true WHERE message_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ID != id || r.msgs[0].ReceiveCount != 2 || r.elapsed >= 10*time.Second {
		t.Fatalf("20 s long poll begun while another receive held the message: %d messages, %v, after %v; want it, received twice, when the other's 1 s lease lapsed",
			len(r.msgs), r.err, r.elapsed.Round(time.Millisecond))
	}
	t.Logf("the long poll got the message %v after it began (the other lease lapsed about 1.5 s after)", r.elapsed.Round(time.Millisecond))
}

// A receive looks from a second before where the last one of its Store
// began to take, not from the queue's start; a send that commits later
// than that lands before it, and a whole look finds it within a second.
// Here the test's own transaction inserts a message, waits 1.5 s while the
// Store (which looks at the database only every minute) receives a later
// one, then commits: a 20 s long poll of that Store gets it before its end.
func TestLongPollFindsASendThatCommittedLate(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.PGDSN(t)
	name := sqlharness.QueueName(t)
	mb := openQueue(t, openStore(t, dsn, sqlmailbox.Config{PollInterval: time.Minute}), name)
	mailboxtest.SendBodies(ctx, t, mb, "first")
	mailboxtest.ReceiveN(ctx, t, mb, 1, time.Second, time.Minute)

	late, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close(context.Background())
	tx, err := late.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `INSERT INTO sqsloop_messages (queue_id, message_id, body, sent_at, visible_at)
		SELECT id, 'late', 'late', statement_timestamp(), statement_timestamp() FROM sqsloop_queues WHERE name = $1`, name); err != nil {
		t.Fatal(err)
	}
	if err := sqlharness.Sleep(ctx, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mailboxtest.SendBodies(ctx, t, mb, "second")
	if got := mailboxtest.ReceiveN(ctx, t, mb, 1, time.Second, time.Minute); got[0].Body != "second" {
		t.Fatalf("received %q, want the message sent second", got[0].Body)
	}
	got := longPoll(ctx, mb)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].Body != "late" || r.elapsed >= 10*time.Second {
		t.Fatalf("20 s long poll after a send committed 1.5 s after its statement began: %d messages, %v, after %v; want it within about a second",
			len(r.msgs), r.err, r.elapsed.Round(time.Millisecond))
	}
	t.Logf("the long poll got the late message %v after it began", r.elapsed.Round(time.Millisecond))
}
