package integration

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// ErrNoServer means StartSQSServer found no SQS-compatible server to use:
// SQS_ENDPOINT is unset, no Docker engine answers, and fauxqs is not
// installed (run `npm ci --prefix integration`). The wrapping error gives
// each reason.
var ErrNoServer = errors.New("integration: no SQS-compatible server available")

// Kinds of server StartSQSServer can provide, as SQSServer.Kind reports them.
// A server at SQS_ENDPOINT has the kind SQS_SERVER names (fauxqs,
// localstack, elasticmq or aws), or KindEndpoint when SQS_SERVER is unset.
const (
	// KindEndpoint is a server named by the SQS_ENDPOINT environment
	// variable without SQS_SERVER saying which: taken to behave like
	// Amazon SQS.
	KindEndpoint = "endpoint"
	// KindLocalStack is LocalStack: in a container started through
	// testcontainers-go, or at SQS_ENDPOINT with SQS_SERVER=localstack.
	KindLocalStack = "localstack"
	// KindFauxqs is the fauxqs emulator from npm: run as a child process,
	// or at SQS_ENDPOINT with SQS_SERVER=fauxqs.
	KindFauxqs = "fauxqs"
	// KindElasticMQ is ElasticMQ at SQS_ENDPOINT (SQS_SERVER=elasticmq).
	KindElasticMQ = "elasticmq"
	// KindAWS is Amazon SQS itself at SQS_ENDPOINT (SQS_SERVER=aws).
	KindAWS = "aws"
)

// ServerOptions configures StartSQSServer. The zero value is ready to use.
type ServerOptions struct {
	// Dir is the directory holding fauxqs.mjs and the node_modules that
	// `npm ci --prefix integration` installs; empty means the current
	// directory, which is package integration's own while `go test` runs.
	Dir string

	// Getenv reads the environment (SQS_ENDPOINT, AWS_REGION, …); nil means
	// os.Getenv.
	Getenv func(string) string

	// Logf, when set, receives one line per backend tried and why it was
	// passed over.
	Logf func(format string, args ...any)

	// StartTimeout bounds how long starting a backend may take; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
}

// DefaultStartTimeout is how long StartSQSServer waits for a server to
// answer by default: a cold Node.js start of fauxqs takes a few seconds on a
// loaded two-core machine; a LocalStack image pull can take longer, and
// should be pulled beforehand.
const DefaultStartTimeout = 60 * time.Second

// SQSServer is a running SQS-compatible server. Its methods are safe for
// concurrent use.
type SQSServer struct {
	// Kind is one of the Kind constants.
	Kind string
	// Endpoint is the server's base URL, e.g. "http://127.0.0.1:41234".
	Endpoint string
	// Region is the AWS region the clients sign for.
	Region string

	staticCreds bool
	stop        func() error
	closeOnce   sync.Once
	closeErr    error

	conns harness.ConnTracker // the connections of the clients NewClient made
}

// StartSQSServer provides an SQS-compatible server, chosen in this order:
// the one at SQS_ENDPOINT if that is set; else LocalStack through
// testcontainers-go when a Docker engine answers; else fauxqs, started from
// opts.Dir on a free 127.0.0.1 port. Each try may take up to
// opts.StartTimeout.
//
// It returns an error wrapping ErrNoServer when none can be had (no
// SQS_ENDPOINT, no Docker engine or LocalStack failing to start, fauxqs not
// installed), and another error when the server that should be used fails:
// an SQS_ENDPOINT that does not answer, or a fauxqs that is installed but
// does not start. The caller must Close the server.
func StartSQSServer(ctx context.Context, opts ServerOptions) (*SQSServer, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	// Each backend gets its own timeout, so a LocalStack that fails slowly
	// (an image pull that cannot finish) still leaves fauxqs time to start.
	within := func(start func(context.Context) (*SQSServer, error)) (*SQSServer, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return start(ctx)
	}

	if ep := getenv("SQS_ENDPOINT"); ep != "" {
		env, err := harness.ReadEnv(getenv)
		if err != nil {
			return nil, err
		}
		s := &SQSServer{Kind: cmp.Or(env.Kind, KindEndpoint), Endpoint: ep, Region: env.Region, staticCreds: env.DummyCredentials, stop: func() error { return nil }}
		if _, err := within(func(ctx context.Context) (*SQSServer, error) { return s, s.waitReady(ctx) }); err != nil {
			return nil, fmt.Errorf("SQS_ENDPOINT=%s does not answer: %w", ep, err)
		}
		return s, nil
	}

	var reasons []error
	s, err := within(startLocalStack)
	if err == nil {
		return s, nil
	}
	logf("integration: LocalStack not used: %v", err)
	reasons = append(reasons, fmt.Errorf("LocalStack: %w", err))

	s, err = within(func(ctx context.Context) (*SQSServer, error) { return startFauxqs(ctx, opts.Dir) })
	if err == nil {
		return s, nil
	}
	if !errors.Is(err, errNotInstalled) {
		return nil, fmt.Errorf("fauxqs is installed but did not start: %w", err)
	}
	logf("integration: fauxqs not used: %v", err)
	reasons = append(reasons, fmt.Errorf("fauxqs: %w", err))
	return nil, fmt.Errorf("%w: SQS_ENDPOINT unset; %w", ErrNoServer, errors.Join(reasons...))
}

// ConfigOptions returns the aws-sdk-go-v2 config options a client of this
// server needs: its region, and dummy static credentials for an emulator
// whose environment has none (the environment's credentials otherwise). The
// endpoint is not among them: pass s.Endpoint as the client's base endpoint,
// or use NewClient.
func (s *SQSServer) ConfigOptions() []func(*config.LoadOptions) error {
	return harness.ConfigOptions(s.Region, s.staticCreds)
}

// NewClient returns an SQS client for the server, built as a user builds
// one, with sqsmailbox.NewClient(ctx, s.Endpoint, s.ConfigOptions()...) (so
// AWS_CA_BUNDLE applies), then optFns. Close closes the connections it
// dialed. Errors are sqsmailbox.NewClient's.
func (s *SQSServer) NewClient(ctx context.Context, optFns ...func(*sqs.Options)) (*sqs.Client, error) {
	return s.newClient(ctx, &s.conns, optFns...)
}

// newClient is NewClient with the connections recorded in ct.
func (s *SQSServer) newClient(ctx context.Context, ct *harness.ConnTracker, optFns ...func(*sqs.Options)) (*sqs.Client, error) {
	client, err := sqsmailbox.NewClient(ctx, s.Endpoint, s.ConfigOptions()...)
	if err != nil {
		return nil, err
	}
	return sqs.New(client.Options(), append([]func(*sqs.Options){ct.Track}, optFns...)...), nil
}

// Close stops the server if StartSQSServer started it (fauxqs's process is
// stopped and waited for; LocalStack's container is removed) and closes the
// connections of the clients NewClient made, whose goroutines would
// otherwise outlive the tests (a server at SQS_ENDPOINT keeps running). It
// is idempotent and returns the first stop error.
func (s *SQSServer) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.stop()
		s.conns.CloseAll()
	})
	return s.closeErr
}

// waitReady polls ListQueues until the server answers or ctx is done.
func (s *SQSServer) waitReady(ctx context.Context) error {
	var conns harness.ConnTracker
	client, err := s.newClient(ctx, &conns)
	if err != nil {
		return err
	}
	defer conns.CloseAll()
	for {
		callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := client.ListQueues(callCtx, &sqs.ListQueuesInput{}, func(o *sqs.Options) { o.RetryMaxAttempts = 1 })
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
