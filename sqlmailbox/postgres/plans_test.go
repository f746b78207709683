package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// A statement that names messages by id reads each through the primary
// key, whatever the planner's statistics say of the queue. The state the
// public benchmark's idle transaction leaves: an old snapshot keeps 20,000
// messages of the queue that were received and acked, and the table was
// analyzed under it while none was live (the queue keeps up), so its
// statistics count none. A receive of 10 messages sent since (on a queue
// with a dead-letter queue, as the benchmark's), a visibility change and
// an ack of them, each planned generically (as the server plans pgx's
// prepared statements after their fifth run, when that plan costs no more)
// and then for the call's values, read a few pages a message, not the
// queue's dead entries (with the old key, led by the queue, the ack
// read all 20,000 of them, twice).
func TestLookupsByIDReadTheKeyUnderStaleStatistics(t *testing.T) {
	ctx := t.Context()
	dsn := sqlharness.FreshDatabase(t)
	execSQL(t, dsn, `INSERT INTO sqsloop_queues
		(name, fifo, content_based_dedup, visibility_timeout, delay, retention, max_message_size, max_receive_count, key)
		VALUES ('jobs', false, false, 30, 0, 345600, 262144, 0, '\x00'), ('jobs-dlq', false, false, 30, 0, 345600, 262144, 0, '\x01')`)
	var q, dlq int64
	query(t, dsn, `SELECT (SELECT id FROM sqsloop_queues WHERE name = 'jobs'), (SELECT id FROM sqsloop_queues WHERE name = 'jobs-dlq')`, &q, &dlq)
	execSQL(t, dsn, fmt.Sprintf(`INSERT INTO sqsloop_messages (queue_id, message_id, body, sent_at, visible_at, receive_count, received_at, leased)
		SELECT %d, 'm' || n, 'b', now(), now() + interval '1 hour', 1, now(), true FROM generate_series(1, 20000) n`, q))
	pin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pin.Close(context.Background())
	if _, err := pin.Exec(ctx, `BEGIN; SELECT txid_current()`); err != nil {
		t.Fatal(err)
	}
	execSQL(t, dsn, `DELETE FROM sqsloop_messages`)
	execSQL(t, dsn, `ANALYZE sqsloop_messages`)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ones := "'{" + strings.Repeat("1,", 9) + "1}'"
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		execSQL(t, dsn, fmt.Sprintf(`INSERT INTO sqsloop_messages (queue_id, message_id, body, sent_at, visible_at)
			SELECT %d, 'new' || n, 'b', now(), now() - interval '1 second' FROM generate_series(1, 10) n`, q))
		var ids string
		query(t, dsn, `SELECT array_agg(id ORDER BY id)::text FROM sqsloop_messages`, &ids)
		if _, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode); err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct{ name, sql, args string }{
			{"receive", postgres.QueryReceive, fmt.Sprintf("%d, 30, 'r', '{}', NULL, '-infinity', 0, 5, %d, 'jobs', 'too many receives', 'dead-lettered'", q, dlq)},
			{"change", postgres.QueryChange, fmt.Sprintf("%d, '%s', %s, '{60,60,60,60,60,60,60,60,60,60}', 43200, NULL", q, ids, ones)},
			{"ack", postgres.QueryDelete, fmt.Sprintf("%d, '%s', %s, false, NULL", q, ids, ones)},
		} {
			stmt := strings.TrimPrefix(mode, "force_") + "_" + s.name
			if _, err := conn.Exec(ctx, "PREPARE "+stmt+" AS "+s.sql); err != nil {
				t.Fatal(err)
			}
			var out []byte
			if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "+stmt+"("+s.args+")").Scan(&out); err != nil {
				t.Fatal(err)
			}
			var plans []struct {
				Plan struct {
					Rows int     `json:"Actual Rows"`
					Hit  float64 `json:"Shared Hit Blocks"`
					Read float64 `json:"Shared Read Blocks"`
				}
			}
			if err := json.Unmarshal(out, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("%s, %s: the plan %s: %v", mode, s.name, out, err)
			}
			p := plans[0].Plan
			t.Logf("%s, %s of 10 messages: %d rows, %.0f buffers", mode, s.name, p.Rows, p.Hit+p.Read)
			if p.Rows != 10 {
				t.Errorf("%s, %s returned %d rows, want 10 (one per message)", mode, s.name, p.Rows)
			}
			if b := p.Hit + p.Read; b > 200 {
				t.Errorf("%s, %s of 10 messages read %.0f buffers, want a few a message (the plan: %s)", mode, s.name, b, out)
			}
		}
	}
	var left int
	query(t, dsn, `SELECT count(*) FROM sqsloop_messages`, &left)
	if left != 0 {
		t.Errorf("%d messages left after the ack, want 0", left)
	}
}
