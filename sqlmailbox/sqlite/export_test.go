package sqlite

import "context"

// MigrateTo migrates the schema of the file at path up to version to, for
// the tests of a file an older sqsloop migrated.
func MigrateTo(ctx context.Context, path string, to int) error {
	d, err := newDriver(path, Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = d.migrate(ctx, to)
	return err
}
