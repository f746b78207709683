package postgres

import (
	"context"
	"net/url"

	"github.com/sqsloop/sqsloop/sqlmailbox"
)

func init() {
	sqlmailbox.Register("postgres", openURL)
	sqlmailbox.Register("postgresql", openURL)
}

// openURL opens the Store of a postgres:// URL (sqlmailbox.Open,
// sqsloop.OpenMailbox with ?queue=NAME) as Open does, with Options'
// defaults: the URL's other parameters are pgx's (sslmode,
// pool_max_conns, …), and the schema must be migrated already.
func openURL(ctx context.Context, u *url.URL) (*sqlmailbox.Store, error) {
	return Open(ctx, u.String(), Options{})
}
