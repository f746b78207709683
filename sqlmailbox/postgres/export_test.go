package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateTo migrates the schema of pool's database up to version to, for
// the tests of a database an older sqsloop migrated.
func MigrateTo(ctx context.Context, pool *pgxpool.Pool, to int) error {
	d := newDriver(pool, false)
	defer d.Close()
	_, err := d.migrate(ctx, to)
	return err
}

// NotifyWindow is notifyWindow, for the test that counts NOTIFYs.
const NotifyWindow = notifyWindow

// Statements by id, for the test of their plans under stale statistics:
// a standard queue's receive of up to 10 with a dead-letter queue, a
// visibility change, an ack.
var (
	QueryReceive = receiveQuery(receiveStandard, 1, 0, 10)
	QueryChange  = qChange
	QueryDelete  = qDelete
)
