package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// migrateCmd is `sqsloop migrate`.
type migrateCmd struct {
	Mailbox string `required:"" placeholder:"sqlite:PATH|postgres://..." help:"The database: sqlite:PATH or a postgres:// (postgresql://) URL."`
}

// Help is migrate's long help.
func (c *migrateCmd) Help() string {
	return `Creates the sqlmailbox schema in the database, or upgrades an older one; a database already at the
latest version is left alone. Run it before the workers start, as a role that may create tables; the
workers' role needs only SELECT, INSERT, UPDATE and DELETE on the tables (and USAGE on their sequences).
PostgreSQL migrations run under an advisory lock: processes migrating together migrate once. A SQLite
file gets its schema when first opened; migrate upgrades one an older sqsloop wrote.

Examples:

  sqsloop migrate --mailbox "postgres://admin@db.internal:5432/app"
  sqsloop migrate --mailbox sqlite:jobs.db`
}

// Run migrates the database.
func (c *migrateCmd) Run(g *globals) error {
	var v sqlmailbox.SchemaVersion
	var err error
	switch {
	case strings.HasPrefix(c.Mailbox, "sqlite:"):
		v, err = sqlite.Migrate(g.ctx, strings.TrimPrefix(c.Mailbox, "sqlite:"))
	case isPostgres(c.Mailbox):
		var pool *pgxpool.Pool
		pool, err = pgxpool.New(g.ctx, c.Mailbox)
		if err != nil {
			return fmt.Errorf("--mailbox: %w", err)
		}
		defer pool.Close()
		v, err = postgres.Migrate(g.ctx, pool)
	default:
		return errors.New("--mailbox: want sqlite:PATH or a postgres:// URL, got " + redact(c.Mailbox))
	}
	if err != nil {
		return err
	}
	if v.Database == v.Latest {
		fmt.Fprintf(g.stdout, "schema at version %d, the latest: nothing to do\n", v.Latest)
	} else {
		fmt.Fprintf(g.stdout, "schema migrated from version %d to %d\n", v.Database, v.Latest)
	}
	return nil
}
