//go:build unix

// Command pgserver starts a PostgreSQL server for tests in a container,
// through testcontainers-go's PostgreSQL module (integration.StartPostgres),
// when a Docker engine answers, and prints, on standard output, once the
// server accepts connections:
//
//	PG_DSN=postgres://sqsloop:sqsloop@127.0.0.1:32768/postgres?sslmode=disable
//
// scripts/postgres.sh runs it on a machine without PostgreSQL's binaries
// that cannot install them. Nothing else is written to standard output;
// progress and errors go to standard error.
//
// The server runs until pgserver gets SIGTERM or SIGINT, or, with -owner,
// until the process -owner names has exited; then pgserver removes the
// container and exits 0. From a terminal, stop it with Ctrl+C.
//
// Usage, from the repository root:
//
//	(cd integration && go run ./cmd/pgserver)
//
// Flags:
//
//	-owner PID    stop once process PID has exited (checked every 500 ms)
//	-timeout D    how long starting the server may take, pulling its image
//	              included (default 5m)
//
// It exits 1 when no Docker engine answers or the server does not start
// (the reasons go to standard error), and 2 on a bad flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sqsloop/sqsloop/integration"
)

func main() { os.Exit(run()) }

func run() int {
	owner := flag.Int("owner", 0, "stop once the process with this PID has exited")
	timeout := flag.Duration("timeout", 5*time.Minute, "how long starting the server may take, pulling its image included")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "pgserver: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		return 2
	}
	logger := log.New(os.Stderr, "pgserver: ", 0)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, *timeout)
	srv, err := integration.StartPostgres(sctx)
	cancel()
	if err != nil {
		logger.Printf("no server: %v", err)
		return 1
	}
	if _, err := fmt.Printf("PG_DSN=%s\n", srv.DSN); err != nil {
		logger.Printf("writing to standard output: %v", err)
		return closeServer(logger, srv, 1)
	}
	logger.Printf("%s answering after %v", integration.PostgresImage, time.Since(start).Round(time.Millisecond))
	select {
	case <-ctx.Done():
		logger.Printf("signal received: stopping the server")
	case <-gone(ctx, *owner):
		logger.Printf("process %d has exited: stopping the server", *owner)
	}
	return closeServer(logger, srv, 0)
}

// gone is closed once process pid has exited; never for pid 0.
func gone(ctx context.Context, pid int) <-chan struct{} {
	c := make(chan struct{})
	if pid == 0 {
		return c
	}
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			// Signal 0 checks that the process exists; EPERM: it does,
			// owned by another user.
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				close(c)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return c
}

// closeServer removes srv's container and returns code, or 1 when that
// failed.
func closeServer(logger *log.Logger, srv *integration.PGServer, code int) int {
	if err := srv.Close(); err != nil {
		logger.Printf("stopping the server: %v", err)
		return 1
	}
	logger.Printf("server stopped")
	return code
}
