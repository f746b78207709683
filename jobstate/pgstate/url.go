package pgstate

import (
	"context"
	"net/url"

	"github.com/sqsloop/sqsloop/jobstate"
)

func init() {
	jobstate.Register("postgres", openURL)
	jobstate.Register("postgresql", openURL)
}

// openURL opens the Store of a postgres:// URL (jobstate.Open) as Open
// does: its parameters are pgx's (sslmode, pool_max_conns, …), and the
// schema must be migrated already (Migrate).
func openURL(ctx context.Context, u *url.URL) (jobstate.OpenedStore, error) {
	s, err := Open(ctx, u.String())
	if err != nil {
		return nil, err
	}
	return closing{s}, nil
}

// closing is a Store opened from a URL: Close closes its pool.
type closing struct{ *Store }

// Close closes the pool Open made; it returns nil.
func (c closing) Close() error {
	c.Store.Close()
	return nil
}
