package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// A lapse whose row another transaction holds while the sweep looks is
// audited all the same: the sweep waits for the row (a moment: a receive,
// an ack) and audits the lapse once it holds it. Before, the sweep skipped
// locked rows (SKIP LOCKED) and still moved the queue's mark past them, so
// that lapse was never audited by any sweep.
func TestSweepAuditsALapseAnotherTransactionHeld(t *testing.T) {
	dsn := sqlharness.FreshDatabase(t)
	ctx := t.Context()
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "held"})
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	id := mailboxtest.SendBodies(ctx, t, mb, "lapses")[0]
	mailboxtest.ReceiveN(ctx, t, mb, 1, 10*time.Second, time.Second)
	if err := sqlharness.Sleep(ctx, 2*time.Second); err != nil { // the lease lapses
		t.Fatal(err)
	}

	holder, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close(context.Background())
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sqsloop_messages WHERE message_id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	swept := make(chan sqlmailbox.SweepStats, 1)
	go func() {
		stats, err := st.Sweep(ctx)
		if err != nil {
			t.Errorf("Sweep: %v", err)
		}
		swept <- stats
	}()
	// Let go of the row once the sweep waits for it, or once it is over.
	var first sqlmailbox.SweepStats
	over := false
	for !over {
		select {
		case first = <-swept:
			over = true // it did not wait
			continue
		default:
		}
		var n int
		if err := holder.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if err := sqlharness.Sleep(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !over {
		first = <-swept
	}
	again, err := st.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if found := first.ExpiredFound + again.ExpiredFound; found != 1 {
		t.Errorf("the two sweeps found %d and %d lapsed leases, want the one lapse once", first.ExpiredFound, again.ExpiredFound)
	}
	recs, err := st.Audit(ctx, "held", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].MessageID != id || recs[0].Kind != sqlmailbox.AuditLeaseExpired {
		t.Errorf("audit %+v, want the lapse of %s", recs, id)
	}
}
