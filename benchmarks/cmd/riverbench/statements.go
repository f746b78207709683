package main

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// statements reads pg_stat_statements (PostgreSQL's contrib extension,
// loaded by shared_preload_libraries): what each run sent, statement by
// statement, to say where its database time went and whether anything
// runs per job that should run per batch. Its functions and view live in
// the database dsn names, where newStatements creates the extension; they
// see every database's statements.
type statements struct {
	dsn      string
	planning bool // pg_stat_statements.track_planning: plans and planning time are counted
}

// newStatements returns a reader of pg_stat_statements on dsn's server, or
// nil when the server does not load it (start it with
// PG_SERVER_OPTS="-c shared_preload_libraries=pg_stat_statements").
func newStatements(ctx context.Context, dsn string) (*statements, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	var loaded bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('shared_preload_libraries') ~ 'pg_stat_statements'`).Scan(&loaded); err != nil || !loaded {
		return nil, err
	}
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return nil, err
	}
	var planning bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('pg_stat_statements.track_planning')::boolean`).Scan(&planning); err != nil {
		return nil, err
	}
	return &statements{dsn: dsn, planning: planning}, nil
}

// statement is one row of pg_stat_statements: a statement text (its
// constants replaced by $n) and what its calls cost, summed.
type statement struct {
	query                string
	calls, plans, rows   int64
	planMS, execMS       float64
	walRecords, walBytes int64
}

// reset clears the statistics of the database conn is connected to.
func (s *statements) reset(ctx context.Context, conn *pgx.Conn) error {
	if s == nil {
		return nil
	}
	var db uint32
	if err := conn.QueryRow(ctx, `SELECT oid FROM pg_database WHERE datname = current_database()`).Scan(&db); err != nil {
		return err
	}
	admin, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	_, err = admin.Exec(ctx, `SELECT pg_stat_statements_reset(0, $1, 0)`, db)
	return err
}

// read returns the statements run in the database db (a DSN), the most
// costly first, at most limit; nil without pg_stat_statements.
func (s *statements) read(ctx context.Context, db string, limit int) ([]statement, error) {
	if s == nil {
		return nil, nil
	}
	u, err := url.Parse(db)
	if err != nil {
		return nil, err
	}
	admin, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return nil, err
	}
	defer admin.Close(ctx)
	rows, err := admin.Query(ctx, `SELECT query, calls, plans, rows, total_plan_time, total_exec_time, wal_records, wal_bytes::bigint
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = $1 ORDER BY total_plan_time + total_exec_time DESC LIMIT $2`, strings.TrimPrefix(u.Path, "/"), limit)
	if err != nil {
		return nil, err
	}
	var out []statement
	var st statement
	_, err = pgx.ForEachRow(rows, []any{&st.query, &st.calls, &st.plans, &st.rows, &st.planMS, &st.execMS, &st.walRecords, &st.walBytes}, func() error {
		out = append(out, st)
		return nil
	})
	return out, err
}

var spaces = regexp.MustCompile(`\s+`)

// printStatements prints r's statements as a table, costs per job.
func printStatements(r result, planning bool) {
	fmt.Printf("\n%s, N = %d (round %d), from pg_stat_statements, the most costly first:\n\n", r.impl, r.n, r.round)
	plans := "plans per call"
	if !planning {
		plans = "plans per call (not tracked)"
	}
	fmt.Printf("| statement | calls per 1,000 jobs | %s | plan ms per call | exec ms per call | server ms per 1,000 jobs | WAL records per job | WAL bytes per job |\n", plans)
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	per := func(v float64) float64 { return v / float64(r.n) }
	for _, s := range r.stmts {
		q := spaces.ReplaceAllString(s.query, " ")
		q = strings.ReplaceAll(q, "|", `\|`)
		if len(q) > 70 {
			q = q[:70] + "…"
		}
		div := func(v float64, by int64) string {
			if by == 0 {
				return "–"
			}
			return fmt.Sprintf("%.3f", v/float64(by))
		}
		fmt.Printf("| `%s` | %.1f | %s | %s | %s | %.1f | %.2f | %.0f |\n", q, per(float64(s.calls))*1000,
			div(float64(s.plans), s.calls), div(s.planMS, s.plans), div(s.execMS, s.calls),
			per(s.planMS+s.execMS)*1000, per(float64(s.walRecords)), per(float64(s.walBytes)))
	}
}
