package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
	"github.com/sqsloop/sqsloop/integration"
)

// env is the server of one benchmark run and its admin client.
type env struct {
	server *integration.SQSServer
	// admin creates, preloads, inspects and deletes queues; its requests
	// are never counted against a consumer.
	admin *sqs.Client
}

func newEnv(ctx context.Context, integrationDir string, logf func(string, ...any)) (*env, error) {
	// Absolute: the node binary's path is joined to Dir and then run with
	// Dir as its working directory, so a relative Dir would count twice.
	dir, err := filepath.Abs(integrationDir)
	if err != nil {
		return nil, fmt.Errorf("-integration-dir %q: %w", integrationDir, err)
	}
	srv, err := integration.StartSQSServer(ctx, integration.ServerOptions{Dir: dir, Logf: logf})
	if err != nil {
		return nil, err
	}
	e := &env{server: srv}
	if e.admin, err = e.client(ctx, nil, 0); err != nil {
		_ = srv.Close()
		return nil, err
	}
	return e, nil
}

// client returns a new SQS client of the server with an HTTP client (and so
// connections) of its own; with a non-nil meter, every request it makes is
// counted on the wire and by the SDK middleware; with a latency, every
// request is held that long before it is sent. The HTTP client is the SDK's
// BuildableClient (which AWS_CA_BUNDLE requires), wrapped in the SQS
// client's options.
func (e *env) client(ctx context.Context, m *wire.Meter, latency time.Duration) (*sqs.Client, error) {
	return e.clientWith(ctx, m, wire.WithLatency(latency, nil))
}

// clientWith is client with the round-trip emulation (and anything else)
// given as options, applied before the meter's.
func (e *env) clientWith(ctx context.Context, m *wire.Meter, extra ...func(*sqs.Options)) (*sqs.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx, e.server.ConfigOptions()...)
	if err != nil {
		return nil, fmt.Errorf("loading AWS config: %w", err)
	}
	opts := append([]func(*sqs.Options){func(o *sqs.Options) { o.BaseEndpoint = aws.String(e.server.Endpoint) }}, extra...)
	if m != nil {
		opts = append(opts, m.Instrument())
	}
	return sqs.NewFromConfig(cfg, opts...), nil
}

func (e *env) close() error { return e.server.Close() }
