package integration

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/localstack"
)

// LocalStackImage is the LocalStack image StartSQSServer runs when a Docker
// engine answers.
const LocalStackImage = "localstack/localstack:4.4"

// dockerProbeTimeout bounds the check for a Docker engine, so a machine
// without one falls through to fauxqs at once.
const dockerProbeTimeout = 3 * time.Second

// dockerAnswers reports whether a Docker engine answers testcontainers-go.
// testcontainers-go panics in places when it finds no engine; that counts as
// no.
func dockerAnswers(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("testcontainers-go: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, dockerProbeTimeout)
	defer cancel()
	p, err := testcontainers.NewDockerProvider()
	if err != nil {
		return err
	}
	return p.Health(ctx) // closes p's client too
}

// startLocalStack runs LocalStackImage and returns a server for its SQS
// endpoint; Close removes the container.
func startLocalStack(ctx context.Context) (*SQSServer, error) {
	if err := dockerAnswers(ctx); err != nil {
		return nil, fmt.Errorf("no Docker engine answers: %w", err)
	}
	c, err := runLocalStack(ctx)
	if err != nil {
		if c != nil {
			err = errors.Join(err, testcontainers.TerminateContainer(c))
		}
		return nil, fmt.Errorf("starting %s: %w", LocalStackImage, err)
	}
	endpoint, err := c.PortEndpoint(ctx, "4566/tcp", "http")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("LocalStack endpoint: %w", err), testcontainers.TerminateContainer(c))
	}
	s := &SQSServer{
		Kind: KindLocalStack, Endpoint: endpoint, Region: "us-east-1", staticCreds: true,
		stop: func() error { return testcontainers.TerminateContainer(c) },
	}
	if err := s.waitReady(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("LocalStack at %s does not answer: %w", endpoint, err), s.Close())
	}
	return s, nil
}

// runLocalStack recovers testcontainers-go's panics (it panics when it
// cannot find the Docker socket) into an error.
func runLocalStack(ctx context.Context) (c *localstack.LocalStackContainer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("testcontainers-go: %v", r)
		}
	}()
	return localstack.Run(ctx, LocalStackImage)
}
