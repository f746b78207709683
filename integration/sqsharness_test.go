package integration

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness"
)

// newSQSHarness returns the harness sqsmailbox's own conformance test runs
// on (harness.SQS), on server: its client is the server's
// (SQSServer.NewClient: AWS_CA_BUNDLE and the rest of the SDK's
// configuration apply, and Close closes its connections). Errors are
// NewClient's.
func newSQSHarness(ctx context.Context, server *SQSServer) (*harness.SQS, error) {
	client, err := server.NewClient(ctx)
	if err != nil {
		return nil, err
	}
	return harness.NewSQS(server.Kind, client), nil
}

// The SQS server and its harness are made once, by the first test that needs
// them, and the server is stopped by TestMain after every test has run.
var sqsEnv struct {
	once    sync.Once
	server  *SQSServer
	harness *harness.SQS
	err     error
}

// sqsServerHarness returns the shared harness on the shared SQS-compatible
// server (sqsEnv.server), starting the server on first use (see
// StartSQSServer for the order tried). When no server can be had it skips t
// with a loud message, or fails t under CI=true, where a skipped suite would
// hide that nothing was tested.
func sqsServerHarness(t *testing.T) *harness.SQS {
	t.Helper()
	sqsEnv.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*DefaultStartTimeout)
		defer cancel()
		start := time.Now()
		sqsEnv.server, sqsEnv.err = StartSQSServer(ctx, ServerOptions{Logf: t.Logf})
		if sqsEnv.err != nil {
			return
		}
		t.Logf("integration: %s server at %s, started in %v", sqsEnv.server.Kind, sqsEnv.server.Endpoint, time.Since(start).Round(time.Millisecond))
		sqsEnv.harness, sqsEnv.err = newSQSHarness(ctx, sqsEnv.server)
	})
	switch err := sqsEnv.err; {
	case err == nil:
		return sqsEnv.harness
	case errors.Is(err, ErrNoServer) && os.Getenv("CI") != "true":
		t.Skipf("\n*** SKIPPING: no SQS-compatible server, so sqsmailbox is not tested on one: %v\n"+
			"*** Set SQS_ENDPOINT, start Docker, or run `npm ci --prefix integration` (CI=true makes this a failure).", err)
	default:
		t.Fatalf("no SQS-compatible server: %v", err)
	}
	return nil
}

// stopSQSServer stops the shared server if a test started it.
func stopSQSServer() error {
	if sqsEnv.server == nil {
		return nil
	}
	return sqsEnv.server.Close()
}

// sqsServer returns the shared SQS-compatible server, starting it on first
// use; it skips or fails t as sqsServerHarness does.
func sqsServer(t *testing.T) *SQSServer {
	t.Helper()
	sqsServerHarness(t)
	return sqsEnv.server
}
