package worker

import (
	"context"
	"crypto/sha256"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// hasher handles jobs: it streams each file through SHA-256 with a beating
// reader in chunks (a file of any size takes about the same number of
// chunks), pausing slow after each chunk. With checkpoints (the checkpoint
// middleware in the chain) it saves its place after every chunk, the
// offset and SHA-256's state, and a job delivered again resumes there.
type hasher struct {
	slow        time.Duration
	chunks      int
	checkpoints bool
	bytes       atomic.Int64
	resumed     atomic.Int64 // jobs resumed from a checkpoint
	skipped     atomic.Int64 // chunks those did not read again
}

// progress is a file job's checkpoint: how far it has read, and the
// hash's state there (sha256's MarshalBinary).
type progress struct {
	Offset int64
	State  []byte
}

// handle runs one job: consumer.JSONHandler decoded its body (a body that does
// not decode never gets here: it is a poison message).
func (h *hasher) handle(ctx context.Context, m *sqsloop.Message, j job) error {
	switch j.Kind {
	case kindFail:
		return errors.New("this job always fails")
	case kindStuck:
		if m.ReceiveCount == 1 {
			// Beat for a moment, then hang without beating: the lease
			// lapses, the consumer cancels ctx (CancelOnLeaseLost) and the
			// job goes to the next receiver.
			heartbeat.Beat(ctx)
			<-ctx.Done()
			return context.Cause(ctx)
		}
		return nil // redelivered: this time it works
	}
	_, err := h.hash(ctx, j.File)
	return err
}

func (h *hasher) hash(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(1)
	if fi, err := f.Stat(); err == nil {
		size = max(fi.Size(), 1)
	}
	sum := sha256.New()
	chunk := min(max(size/int64(max(h.chunks, 1)), 1), 1<<20)
	var offset int64
	if h.checkpoints {
		var p progress
		ok, err := checkpoint.LoadJSON(ctx, &p)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := sum.(encoding.BinaryUnmarshaler).UnmarshalBinary(p.State); err != nil {
				return nil, fmt.Errorf("hash %s: the checkpoint's state: %w", path, err)
			}
			if _, err := f.Seek(p.Offset, io.SeekStart); err != nil {
				return nil, fmt.Errorf("hash %s: %w", path, err)
			}
			offset = p.Offset
			h.resumed.Add(1)
			h.skipped.Add(p.Offset / chunk)
		}
	}
	r := heartbeat.NewReader(f, heartbeat.FromContext(ctx))
	buf := make([]byte, chunk)
	for {
		n, err := r.Read(buf)
		sum.Write(buf[:n])
		h.bytes.Add(int64(n))
		offset += int64(n)
		if errors.Is(err, io.EOF) {
			return sum.Sum(nil), nil
		}
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", path, err)
		}
		if h.checkpoints {
			state, err := sum.(encoding.BinaryMarshaler).MarshalBinary()
			if err != nil {
				return nil, err
			}
			if err := checkpoint.SaveJSON(ctx, progress{offset, state}); err != nil {
				return nil, err
			}
		}
		if h.slow > 0 {
			t := time.NewTimer(h.slow)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, context.Cause(ctx)
			case <-t.C:
			}
		}
	}
}
