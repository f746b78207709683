package sqlmailbox

import (
	"context"
	"fmt"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// SchemaVersion says where a database's sqlmailbox schema stands: what the
// ReadSchemaVersion functions of sqlmailbox/sqlite and sqlmailbox/postgres
// report, and their Migrate functions return (as it was before them).
// Migrations are numbered from 1; each sqsloop release knows the versions
// up to its Latest.
type SchemaVersion struct {
	// Database is the database's version: 0 when it has no sqlmailbox
	// schema.
	Database int
	// Latest is the version this sqlmailbox migrates to, and the one
	// opening a Store requires.
	Latest int
}

// checkSchema fails unless the database's schema is the version d needs:
// with ErrSchemaOutdated (none, or older) or ErrSchemaTooNew, saying what
// to do. It only reads.
func checkSchema(ctx context.Context, d driver.Driver) error {
	have, want, err := d.SchemaVersion(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("sqlmailbox: %s: reading the schema version: %w", d.Dialect(), err)
	case have == 0:
		return fmt.Errorf("sqlmailbox: %s: no sqlmailbox schema in the database, this sqlmailbox needs version %d: %w (migrate it first: %s.Migrate)",
			d.Dialect(), want, ErrSchemaOutdated, d.Dialect())
	case have < want:
		return fmt.Errorf("sqlmailbox: %s: schema version %d, this sqlmailbox needs %d: %w (migrate it first: %s.Migrate)",
			d.Dialect(), have, want, ErrSchemaOutdated, d.Dialect())
	case have > want:
		return fmt.Errorf("sqlmailbox: %s: schema version %d, this sqlmailbox knows up to %d: %w (upgrade sqsloop)",
			d.Dialect(), have, want, ErrSchemaTooNew)
	}
	return nil
}
