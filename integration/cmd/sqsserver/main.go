// Command sqsserver starts an SQS-compatible server for tests, the way the
// integration tests get theirs (integration.StartSQSServer: the server at
// SQS_ENDPOINT if set; else LocalStack through testcontainers-go when a
// Docker engine answers; else the fauxqs emulator that
// `npm ci --prefix integration` installs), and prints, on standard output,
// once the server answers:
//
//	SQS_ENDPOINT=http://127.0.0.1:41234
//	SQS_SERVER=fauxqs
//
// Export both and every module's tests use that one server (SQS_SERVER names
// its kind, so the conformance suite declares that server's differences; it
// is empty for a server at SQS_ENDPOINT whose kind SQS_SERVER did not say).
// Nothing else is written to standard output; progress and errors go to
// standard error.
//
// The server runs until sqsserver's standard input closes (end of file) or
// sqsserver gets SIGTERM or SIGINT; then sqsserver stops it (the fauxqs
// process is stopped, killed if it lingers; LocalStack's container is
// removed) and exits 0. A script that starts it in the background must give
// it a pipe it holds open, e.g. as a coprocess (scripts/test.sh does): a
// background command's standard input is otherwise /dev/null, which is at
// its end at once. From a terminal, run it in the foreground and stop it
// with Ctrl+C or Ctrl+D.
//
// Usage, from the repository root:
//
//	(cd integration && go build -o /tmp/sqsserver ./cmd/sqsserver)
//	/tmp/sqsserver -dir integration
//
// Flags:
//
//	-dir DIR      the directory holding fauxqs.mjs and the node_modules that
//	              npm installed (default ".", integration's own directory)
//	-timeout D    how long starting each kind of server may take
//	              (default 60s)
//
// It exits 1 when no server can be had (the reasons go to standard error)
// or the server fails to stop, and 2 on a bad flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sqsloop/sqsloop/integration"
)

func main() { os.Exit(run()) }

func run() int {
	dir := flag.String("dir", ".", "directory holding fauxqs.mjs and node_modules (npm ci --prefix integration)")
	timeout := flag.Duration("timeout", integration.DefaultStartTimeout, "how long starting each kind of server may take")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "sqsserver: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		return 2
	}
	logger := log.New(os.Stderr, "sqsserver: ", 0)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	start := time.Now()
	srv, err := integration.StartSQSServer(ctx, integration.ServerOptions{Dir: *dir, Logf: logger.Printf, StartTimeout: *timeout})
	if err != nil {
		logger.Printf("no server: %v", err)
		if errors.Is(err, integration.ErrNoServer) {
			logger.Printf("set SQS_ENDPOINT, start a Docker engine, or run `npm ci --prefix integration` from the repository root")
		}
		return 1
	}
	kind := srv.Kind
	if kind == integration.KindEndpoint {
		kind = "" // SQS_SERVER was unset: a server taken to behave like Amazon SQS
	}
	if _, err := fmt.Printf("SQS_ENDPOINT=%s\nSQS_SERVER=%s\n", srv.Endpoint, kind); err != nil {
		logger.Printf("writing to standard output: %v", err)
		return closeServer(logger, srv, 1)
	}
	logger.Printf("%s server at %s, answering after %v; it stops when standard input closes, or on SIGTERM or SIGINT",
		srv.Kind, srv.Endpoint, time.Since(start).Round(time.Millisecond))

	stdinClosed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // returns at end of file (or on a read error)
		close(stdinClosed)
	}()
	select {
	case <-ctx.Done():
		logger.Printf("signal received: stopping the %s server", srv.Kind)
	case <-stdinClosed:
		logger.Printf("standard input closed: stopping the %s server", srv.Kind)
	}
	return closeServer(logger, srv, 0)
}

// closeServer stops srv and returns code, or 1 when stopping failed.
func closeServer(logger *log.Logger, srv *integration.SQSServer, code int) int {
	if err := srv.Close(); err != nil {
		logger.Printf("stopping the %s server: %v", srv.Kind, err)
		return 1
	}
	logger.Printf("%s server stopped", srv.Kind)
	return code
}
