package sqlharness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
)

// FreshDatabase creates a database of t's own on the server PG_DSN names
// (see PGDSN), with sqlmailbox's schema migrated, dropped when t ends, and
// returns its DSN: for tests that need tables of their own.
func FreshDatabase(t testing.TB) string {
	t.Helper()
	dsn := EmptyDatabase(t)
	Migrate(t, dsn)
	return dsn
}

// EmptyDatabase creates an empty database on the server PG_DSN names (see
// PGDSN), dropped when t ends, and returns its DSN: for tests of the
// schema's versions and migrations.
func EmptyDatabase(t testing.TB) string {
	t.Helper()
	dsn := PGDSN(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	name := "sqsloop_test_" + hex.EncodeToString(r[:])
	if err := Exec(dsn, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s on PG_DSN: %v", name, err)
	}
	t.Cleanup(func() {
		if err := Exec(dsn, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Logf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("PG_DSN: want a postgres:// URL here: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// Migrate migrates sqlmailbox's schema in the database dsn names
// (postgres.Migrate), failing t on an error.
func Migrate(t testing.TB, dsn string) {
	t.Helper()
	if err := migrate(dsn); err != nil {
		t.Fatalf("migrating sqlmailbox's schema: %v", err)
	}
}

// migrate migrates sqlmailbox's schema in the database dsn names.
func migrate(dsn string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	_, err = postgres.Migrate(ctx, pool)
	return err
}

// Exec runs sql, one or more statements, on a connection of its own to
// the database dsn names, with a 30 s budget: for a test's administration
// (databases, roles, grants).
func Exec(dsn, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// PGServer is a PostgreSQL server of a test's own, on a temporary directory
// and a free loopback port, which the test may stop and start again: for
// the tests of a database that goes away. Build it with StartPGServer.
type PGServer struct {
	bin, dir, data string
	port           int
	as             []string // runuser -u postgres -- as root (PostgreSQL refuses to run as root)
}

// StartPGServer starts a server with the binaries in PG_BIN (set by
// scripts/postgres.sh) or Debian's /usr/lib/postgresql/<version>/bin; it
// skips t when there are none (fails it under CI=true). Its database has
// sqlmailbox's schema migrated. The server is stopped when t ends.
func StartPGServer(t testing.TB) *PGServer {
	t.Helper()
	bin := os.Getenv("PG_BIN")
	if bin == "" {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		if len(matches) > 0 {
			bin = matches[len(matches)-1]
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); bin == "" || err != nil {
		const how = "no PostgreSQL binaries (PG_BIN, /usr/lib/postgresql/*/bin): scripts/test.sh installs them"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip("SKIPPING: " + how)
	}
	dir, err := os.MkdirTemp("", "sqsloop-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	s := &PGServer{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, and no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		s.as = []string{"runuser", "-u", "postgres", "--"}
	}
	t.Cleanup(func() {
		_ = s.run("pg_ctl", "-D", s.data, "-m", "immediate", "stop")
		_ = os.RemoveAll(dir)
	})
	if err := s.run("initdb", "-D", s.data, "-U", "sqsloop", "--auth=trust", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	if err := s.Start(); err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	Migrate(t, s.DSN())
	return s
}

// DSN is the server's connection string.
func (s *PGServer) DSN() string {
	return fmt.Sprintf("postgres://sqsloop@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the server (again) on its port and data, and waits until it
// accepts connections.
func (s *PGServer) Start() error {
	return s.run("pg_ctl", "-D", s.data, "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off", s.port, s.dir), "start")
}

// Crash stops the server the way a crash does (pg_ctl stop -m immediate:
// every server process exits at once, no checkpoint; the next start
// recovers from the write-ahead log), dropping every connection.
func (s *PGServer) Crash() error {
	return s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop")
}

// run runs one of the server's binaries, as the postgres user under root.
func (s *PGServer) run(name string, args ...string) error {
	argv := append(append(append([]string(nil), s.as...), filepath.Join(s.bin, name)), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return nil
}
