package sqlitestate

import (
	"context"
	"net/url"

	"github.com/sqsloop/sqsloop/internal/openurl"
	"github.com/sqsloop/sqsloop/jobstate"
)

func init() { jobstate.Register("sqlite", openURL) }

// openURL opens the Store of a sqlite: URL (jobstate.Open): sqlite:state.db
// (relative to the working directory) or sqlite:///var/lib/state.db, as
// Open does. It has no parameter.
func openURL(ctx context.Context, u *url.URL) (jobstate.OpenedStore, error) {
	if err := openurl.Parse(u).Err("sqlitestate"); err != nil {
		return nil, err
	}
	path, err := openurl.SQLitePath(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, path)
}
