package postgres_test

import (
	"testing"
	"time"

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
	ctx := t.Context()
	type result struct {
		msgs    []*sqsloop.Message
		err     error
		elapsed time.Duration
	}
	got := make(chan result, 1)
	go func() {
		start := time.Now()
		msgs, err := receiver.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute, WaitTime: sqsloop.MaxWaitTime})
		got <- result{msgs, err, time.Since(start)}
	}()
	if err := sqlharness.Sleep(ctx, time.Second); err != nil { // the long poll is waiting
		t.Fatal(err)
	}
	id := mailboxtest.SendBodies(ctx, t, sender, body)[0]
	r := <-got
	if r.err != nil || len(r.msgs) != 1 || r.msgs[0].ID != id || r.elapsed >= sqsloop.MaxWaitTime {
		t.Fatalf("20 s long poll on another Store, sent to after 1 s: %d messages, %v, after %v; want %s (%q) before the poll's end: the wake-up did not reach it",
			len(r.msgs), r.err, r.elapsed.Round(time.Millisecond), id, body)
	}
	t.Logf("%q: the other Store's long poll returned it %v after it began", body, r.elapsed.Round(time.Millisecond))
	mailboxtest.AckAll(ctx, t, receiver, r.msgs...)
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
