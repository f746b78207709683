package sqlite

import (
	"context"
	"net/url"

	"github.com/sqsloop/sqsloop/internal/openurl"
	"github.com/sqsloop/sqsloop/sqlmailbox"
)

func init() { sqlmailbox.Register("sqlite", openURL) }

// openURL opens the Store of a sqlite: URL (sqlmailbox.Open,
// sqsloop.OpenMailbox with ?queue=NAME): sqlite:jobs.db (relative to the
// working directory) or sqlite:///var/lib/jobs.db, with Options' defaults.
// It has no parameter of its own.
func openURL(ctx context.Context, u *url.URL) (*sqlmailbox.Store, error) {
	if err := openurl.Parse(u).Err("sqlite"); err != nil {
		return nil, err
	}
	path, err := openurl.SQLitePath(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path, Options{})
}
