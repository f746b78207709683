package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// job hashes the file a record names, in chunks reads that beat the
// heartbeat, pausing slow after each.
type job struct {
	log    *slog.Logger
	slow   time.Duration
	chunks int
}

func (j *job) handle(ctx context.Context, m *sqsloop.Message) error {
	switch {
	case strings.HasPrefix(m.Body, "fail"):
		return errors.New("this job always fails")
	case strings.HasPrefix(m.Body, "panic"):
		panic("this job always panics")
	case strings.HasPrefix(m.Body, "poison"):
		return sqsloop.Permanent(errors.New("this job can never succeed"))
	}
	sum := sha256.New()
	n, err := j.hash(ctx, sum, m.Body)
	if err != nil {
		return err
	}
	j.log.Info("hashed", slog.String("message_id", m.ID), slog.String("file", m.Body),
		slog.Int64("bytes", n), slog.String("sha256", hex.EncodeToString(sum.Sum(nil))))
	return nil
}

// hash writes the file at path into sum through a beating reader.
func (j *job) hash(ctx context.Context, sum hash.Hash, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	chunk := min(max(fi.Size()/int64(max(j.chunks, 1)), 1), 1<<20)
	r := heartbeat.NewReader(f, heartbeat.FromContext(ctx))
	var total int64
	for {
		n, err := io.CopyN(sum, r, chunk)
		total += n
		switch {
		case errors.Is(err, io.EOF):
			return total, nil
		case err != nil:
			return total, fmt.Errorf("hash %s: %w", path, err)
		case j.slow > 0:
			select {
			case <-ctx.Done():
				return total, context.Cause(ctx)
			case <-time.After(j.slow):
			}
		}
	}
}
