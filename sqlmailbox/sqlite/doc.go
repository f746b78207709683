// Package sqlite is sqlmailbox on SQLite: a durable queue in one file,
// without a server. It is the only package of sqsloop that imports the
// SQLite driver, modernc.org/sqlite: SQLite itself translated to Go, so a
// build needs no C compiler (cgo), and the whole of SQLite, its
// write-ahead log shared by processes through the file's locks and shared
// memory included, is what runs. (github.com/ncruces/go-sqlite3, the other
// pure-Go choice, runs SQLite compiled to WebAssembly; modernc's is the one
// River's SQLite driver tests against, and it needs nothing but Go.)
//
// [Open] opens (or creates) the file in WAL mode with synchronous=FULL, a
// busy timeout (a file locked by another process is waited for, not
// reported as SQLITE_BUSY) and foreign keys on. It gives a file without a
// sqlmailbox schema (a new one) its schema; a file an older sqsloop wrote
// is refused until [Migrate] has run. Several processes may use one file
// at once, correctly: each call that writes is one immediate
// (write-locking) transaction, so writes are serialized by SQLite's lock;
// reads (a queue's attributes, the receivers, the audit, the archive) are
// deferred transactions that take no write lock, so a dashboard in another
// process neither waits for the workers nor holds them up; a long poll
// sees other processes' messages within DefaultPollInterval (200 ms).
// Within a process, calls queue for the Store's one connection.
//
// SQL lives in queries.go, next to the schema's versions in migrations.go.
package sqlite
