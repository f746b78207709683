package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
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

// serverKind returns the kind SQS_SERVER names for the server at
// SQS_ENDPOINT, or an error naming the allowed values.
func serverKind(name string) (string, error) {
	switch name {
	case "":
		return KindEndpoint, nil
	case KindFauxqs, KindLocalStack, KindElasticMQ, KindAWS:
		return name, nil
	}
	return "", fmt.Errorf("SQS_SERVER=%q: want fauxqs, localstack, elasticmq or aws (or unset: a server like Amazon SQS)", name)
}

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

	conns connTracker // the connections of the clients NewClient made
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
		region := getenv("AWS_REGION")
		if region == "" {
			region = getenv("AWS_DEFAULT_REGION")
		}
		if region == "" {
			region = "us-east-1"
		}
		kind, err := serverKind(getenv("SQS_SERVER"))
		if err != nil {
			return nil, err
		}
		// Use the environment's credentials when it has any (real SQS);
		// emulators take anything.
		s := &SQSServer{Kind: kind, Endpoint: ep, Region: region, staticCreds: getenv("AWS_ACCESS_KEY_ID") == "", stop: func() error { return nil }}
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
// (the environment's credentials otherwise). The endpoint is not among them:
// pass s.Endpoint as the client's base endpoint, or use NewClient.
func (s *SQSServer) ConfigOptions() []func(*config.LoadOptions) error {
	opts := []func(*config.LoadOptions) error{config.WithRegion(s.Region)}
	if s.staticCreds {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	}
	return opts
}

// NewClient returns an SQS client for the server, built from ConfigOptions
// with config.LoadDefaultConfig (so AWS_CA_BUNDLE applies), its base
// endpoint set to s.Endpoint, then optFns. Close closes the connections it
// dialed. Errors come from config.LoadDefaultConfig.
func (s *SQSServer) NewClient(ctx context.Context, optFns ...func(*sqs.Options)) (*sqs.Client, error) {
	return s.newClient(ctx, &s.conns, optFns...)
}

// newClient is NewClient with the connections recorded in ct.
func (s *SQSServer) newClient(ctx context.Context, ct *connTracker, optFns ...func(*sqs.Options)) (*sqs.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, s.ConfigOptions()...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS config for %s: %w", s.Endpoint, err)
	}
	opts := append([]func(*sqs.Options){
		func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.Endpoint) },
		ct.track,
	}, optFns...)
	return sqs.NewFromConfig(cfg, opts...), nil
}

// Close stops the server if StartSQSServer started it (fauxqs's process is
// stopped and waited for; LocalStack's container is removed) and closes the
// connections of the clients NewClient made, whose goroutines would
// otherwise outlive the tests (a server at SQS_ENDPOINT keeps running). It
// is idempotent and returns the first stop error.
func (s *SQSServer) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.stop()
		s.conns.closeAll()
	})
	return s.closeErr
}

// waitReady polls ListQueues until the server answers or ctx is done.
func (s *SQSServer) waitReady(ctx context.Context) error {
	var conns connTracker
	client, err := s.newClient(ctx, &conns)
	if err != nil {
		return err
	}
	defer conns.closeAll()
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

// connTracker records the connections SQS clients dial, so that they can be
// closed at the end: their goroutines (net/http's persistConn read and
// write loops) would otherwise outlive the tests and fail goleak. The SDK's
// HTTP client (awshttp.BuildableClient) clones its transport at every change
// and at first use and has no CloseIdleConnections, so the transport it
// sends on cannot be reached from outside; its dial function is copied
// along, and can. The zero value is ready to use; safe for concurrent use.
type connTracker struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// track is an sqs.Options function: on the client's resolved
// BuildableClient, it wraps the transport's dial function so every new
// connection is recorded until it is closed. The SDK's own dialer, timeouts,
// CA bundle and redirect policy stay as they are.
func (ct *connTracker) track(o *sqs.Options) {
	bc, ok := o.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		return
	}
	o.HTTPClient = bc.WithTransportOptions(func(tr *http.Transport) {
		dial := tr.DialContext
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := &trackedConn{Conn: c, ct: ct}
			ct.mu.Lock()
			if ct.conns == nil {
				ct.conns = map[*trackedConn]struct{}{}
			}
			ct.conns[tc] = struct{}{}
			ct.mu.Unlock()
			return tc, nil
		}
	})
}

// closeAll closes every recorded connection still open.
func (ct *connTracker) closeAll() {
	ct.mu.Lock()
	open := make([]*trackedConn, 0, len(ct.conns))
	for c := range ct.conns {
		open = append(open, c)
	}
	ct.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// trackedConn is a connection a connTracker recorded; Close forgets it.
type trackedConn struct {
	net.Conn
	ct *connTracker
}

func (c *trackedConn) Close() error {
	c.ct.mu.Lock()
	delete(c.ct.conns, c)
	c.ct.mu.Unlock()
	return c.Conn.Close()
}
