package postgres_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// A queue on PostgreSQL, shared by every process that opens the same
// database (here the one PG_DSN names; the example prints nothing without
// it, so its output is checked only where there is a server). Migrating is
// a step of its own, before the workers start (a deploy's migration job,
// with a role that may create tables); the workers' Store only checks the
// schema's version. The pool is the program's: it configures tracing, TLS
// or RDS IAM authentication (BeforeConnect) there, and closes it.
func Example() {
	dsn := os.Getenv("PG_DSN") // e.g. postgres://user@127.0.0.1:5432/db?sslmode=disable
	if dsn == "" {
		return
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		fmt.Println(err)
		return
	}

	st, err := postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	name := fmt.Sprint("example-", time.Now().UnixNano())
	orders, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: name})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.DeleteQueue(context.WithoutCancel(ctx), name)
	defer orders.Close()
	if _, err := orders.Send(ctx, []sqsloop.OutgoingMessage{{Body: "order 1"}}); err != nil {
		fmt.Println(err)
		return
	}
	msgs, err := orders.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute, WaitTime: time.Second})
	if err != nil || len(msgs) != 1 {
		fmt.Println(len(msgs), err)
		return
	}
	errs, err := orders.Delete(ctx, []string{msgs[0].ReceiptHandle})
	fmt.Println(msgs[0].Body, errs[0], err)
}
