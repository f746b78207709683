package integration

import (
	"context"
	"errors"
	"fmt"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
)

// PostgresImage is the PostgreSQL image StartPostgres runs.
const PostgresImage = "postgres:16-alpine"

// PGServer is a PostgreSQL server in a container, for tests.
type PGServer struct {
	// DSN is its URL, as PG_DSN: user and password sqsloop, database
	// postgres, e.g. postgres://sqsloop:sqsloop@127.0.0.1:32768/postgres?sslmode=disable.
	DSN  string
	stop func() error
}

// Close removes the container. Not safe to call twice.
func (s *PGServer) Close() error { return s.stop() }

// StartPostgres runs PostgresImage through testcontainers-go's PostgreSQL
// module when a Docker engine answers, set up as scripts/postgres.sh sets
// up a server for tests (fsync off, 300 connections), and returns once it
// accepts connections. It fails at once, after at most 3 s, when no Docker
// engine answers.
func StartPostgres(ctx context.Context) (*PGServer, error) {
	if err := dockerAnswers(ctx); err != nil {
		return nil, fmt.Errorf("no Docker engine answers: %w", err)
	}
	c, err := runPostgres(ctx)
	if err != nil {
		if c != nil {
			err = errors.Join(err, testcontainers.TerminateContainer(c))
		}
		return nil, fmt.Errorf("starting %s: %w", PostgresImage, err)
	}
	dsn, err := c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		return nil, errors.Join(fmt.Errorf("PostgreSQL's address: %w", err), testcontainers.TerminateContainer(c))
	}
	return &PGServer{DSN: dsn, stop: func() error { return testcontainers.TerminateContainer(c) }}, nil
}

// runPostgres recovers testcontainers-go's panics (it panics when it cannot
// find the Docker socket) into an error.
func runPostgres(ctx context.Context) (c *postgres.PostgresContainer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("testcontainers-go: %v", r)
		}
	}()
	return postgres.Run(ctx, PostgresImage,
		postgres.WithUsername("sqsloop"), postgres.WithPassword("sqsloop"), postgres.WithDatabase("postgres"),
		testcontainers.WithCmdArgs("-c", "full_page_writes=off", "-c", "max_connections=300"),
		postgres.BasicWaitStrategies())
}
