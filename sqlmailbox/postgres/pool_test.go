package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// A Store on the program's own pool uses the pool's configuration for
// every connection, the listener's included: here the pool's BeforeConnect
// hook (where RDS IAM authentication puts its token) names every
// connection, and the connection that LISTENs for the long polls' wake-ups
// has that name; a send from another Store wakes a long poll through it.
// Store.Close leaves the pool open, and Options.MaxConns, which is the
// pool's to set, is refused.
func TestNewUsesTheProgramsPool(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.PGDSN(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := "sqsloop-byo-" + hex.EncodeToString(r[:])
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.RuntimeParams["application_name"] = name
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	if _, err := postgres.New(ctx, pool, postgres.Options{MaxConns: 4}); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("New with Options.MaxConns: %v, want ErrInvalidArgument", err)
	}
	st, err := postgres.New(ctx, pool, postgres.Options{Config: sqlmailbox.Config{PollInterval: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	queue := sqlharness.QueueName(t)
	receiver := openQueue(t, st, queue)
	sender := openQueue(t, openStore(t, dsn, sqlmailbox.Config{}), queue)
	expectWokenBy(t, receiver, sender, "through the program's pool")

	var listening int
	query(t, dsn, `SELECT count(*) FROM pg_stat_activity WHERE application_name = '`+name+`' AND query = 'LISTEN sqsloop'`, &listening)
	if listening != 1 {
		t.Errorf("%d connections named by the pool's BeforeConnect listen, want 1: the listener's", listening)
	}
	receiver.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pool.Ping(ctx); err != nil {
		t.Errorf("the program's pool after Store.Close: %v, want it open", err)
	}
	if _, err := receiver.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, sqsloop.ErrMailboxClosed) {
		t.Errorf("Receive after Store.Close: %v, want ErrMailboxClosed", err)
	}
}
