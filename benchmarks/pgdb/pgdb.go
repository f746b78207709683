// Package pgdb gives a benchmark a database of its own on a PostgreSQL
// server, so that runs never share tables.
package pgdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// Fresh creates a database named prefix and 8 random hex digits on the
// server of dsn (a postgres:// URL whose user may create databases) and
// returns its DSN and a func that drops it, closing its sessions (DROP
// DATABASE … WITH (FORCE)); the func ignores errors. Errors: the
// server's, or one naming -dsn when dsn is not a URL. Safe for concurrent
// use.
func Fresh(ctx context.Context, dsn, prefix string) (string, func(), error) {
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := prefix + hex.EncodeToString(r[:])
	admin := func(sql string) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("-dsn: want a postgres:// URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), func() { _ = admin("DROP DATABASE " + name + " WITH (FORCE)") }, nil
}
