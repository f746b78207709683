package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/jobstate"
)

// MaxSize is the largest checkpoint, in bytes: jobstate.MaxValueSize
// (64 KiB).
const MaxSize = jobstate.MaxValueSize

// ErrNoCheckpoint is returned by Save and Load, and their JSON forms, when
// ctx does not come from the middleware (Checkpoints.Middleware).
var ErrNoCheckpoint = errors.New("checkpoint: the context carries no checkpoint (is the checkpoint middleware in Config.Middleware?)")

// Checkpoints is the middleware and its counts. Safe for concurrent use.
type Checkpoints struct {
	store jobstate.Store
	cfg   Config
	st    struct{ saved, resumed, deleted, failed atomic.Int64 }
}

// Stats are a Checkpoints' counts since New.
type Stats struct {
	// Saved counts the checkpoints saved (Save calls that succeeded).
	Saved int64
	// Resumed counts the deliveries whose Load found a checkpoint.
	Resumed int64
	// Deleted counts the checkpoints deleted after an ack or a permanent
	// failure; DeleteFailed those whose delete failed (they expire).
	Deleted, DeleteFailed int64
}

// New returns the middleware saving to store.
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument, naming every bad
// field, when store is nil or cfg is invalid (Config.Validate).
func New(store jobstate.Store, cfg Config) (*Checkpoints, error) {
	err := cfg.Validate()
	if store == nil {
		err = errors.Join(fmt.Errorf("checkpoint: New: store is nil: %w", sqsloop.ErrInvalidArgument), err)
	}
	if err != nil {
		return nil, err
	}
	return &Checkpoints{store: store, cfg: cfg.withDefaults()}, nil
}

// Stats returns the counts so far.
func (c *Checkpoints) Stats() Stats {
	return Stats{Saved: c.st.saved.Load(), Resumed: c.st.resumed.Load(), Deleted: c.st.deleted.Load(), DeleteFailed: c.st.failed.Load()}
}

// cleanupTimeout bounds the delete after a handler returned: it runs
// without the handler's context's cancellation (a drain that cancelled the
// handler must not leave its finished job's checkpoint behind).
const cleanupTimeout = 5 * time.Second

// Middleware wraps next (a sqsloop.Handler): next's context carries the
// message's checkpoint, and once next returns nil or a permanent failure
// the checkpoint is deleted. A delete that fails is logged (WARN) and
// counted; the checkpoint then expires. It fits consumer.Config.Middleware
// and sqslambda.Config.Middleware as it is.
func (c *Checkpoints) Middleware(next func(context.Context, *sqsloop.Message) error) func(context.Context, *sqsloop.Message) error {
	return func(ctx context.Context, m *sqsloop.Message) error {
		r := &run{c: c, m: m, key: c.key(m)}
		err := next(context.WithValue(ctx, runKey{}, r), m)
		if (err == nil || errors.Is(err, sqsloop.ErrPermanent)) && r.mayExist() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			derr := c.store.Delete(dctx, r.key, "")
			cancel()
			if derr != nil {
				c.st.failed.Add(1)
				c.cfg.Logger.Warn("checkpoint: could not delete the checkpoint of a finished message; it expires",
					slog.String("message_id", m.ID), slog.String("retention", c.cfg.Retention.String()), slog.Any("error", derr))
			} else {
				c.st.deleted.Add(1)
			}
		}
		return err
	}
}

// key is the store's key of m's checkpoint.
func (c *Checkpoints) key(m *sqsloop.Message) string {
	return "checkpoint/" + c.cfg.Queue + "/" + m.ID
}

// runKey carries a handler run's *run in its context.
type runKey struct{}

// run is the checkpoint of one handler run.
type run struct {
	c   *Checkpoints
	m   *sqsloop.Message
	key string

	mu     sync.Mutex
	value  []byte
	have   bool // value is the message's checkpoint (loaded or saved)
	looked bool // the store was asked, or needed not be
	saved  bool // this run saved one
}

// mayExist reports whether the store may hold the message's checkpoint
// now: this run saved or loaded one, or it never looked and the message
// was delivered before.
func (r *run) mayExist() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.have || (!r.looked && r.m.ReceiveCount != 1)
}

func from(ctx context.Context) *run {
	r, _ := ctx.Value(runKey{}).(*run)
	return r
}

// Save saves value as the checkpoint of the message ctx's handler runs
// for, replacing the last one, and beats the message's heartbeat
// (heartbeat.Beat): saving proves progress. It returns once the store has
// it: a delivery after a crash, from then on, loads it. value is copied; at
// most MaxSize bytes.
//
// Errors: ErrNoCheckpoint when ctx does not come from the middleware; an
// error wrapping sqsloop.ErrInvalidArgument for a value over MaxSize
// (nothing saved); the store's (jobstate.Store.Put), the last checkpoint
// then standing. Safe for concurrent use: saves of one run are applied in
// the order they were called.
func Save(ctx context.Context, value []byte) error {
	r := from(ctx)
	if r == nil {
		return ErrNoCheckpoint
	}
	heartbeat.Beat(ctx)
	if len(value) > MaxSize {
		return fmt.Errorf("checkpoint: Save: %d bytes, more than MaxSize (%d): %w", len(value), MaxSize, sqsloop.ErrInvalidArgument)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := jobstate.Record{Key: r.key, State: jobstate.Saved, Value: value, ExpiresAt: time.Now().Add(r.c.cfg.Retention)}
	if err := r.c.store.Put(ctx, rec); err != nil {
		return fmt.Errorf("checkpoint: Save: %w", err)
	}
	r.value, r.have, r.looked, r.saved = slices.Clone(value), true, true, true
	r.c.st.saved.Add(1)
	return nil
}

// Load returns the checkpoint of the message ctx's handler runs for: the
// last one saved, by this run or by an earlier delivery's, and true; or
// nil and false when there is none. It asks the store at most once per
// delivery, and never on a first delivery (ReceiveCount 1); later calls
// answer from memory. The caller may modify the returned slice.
//
// Errors: ErrNoCheckpoint when ctx does not come from the middleware; the
// store's (jobstate.Store.Get), when it could not be read (a later Load
// asks again). Safe for concurrent use.
func Load(ctx context.Context) ([]byte, bool, error) {
	r := from(ctx)
	if r == nil {
		return nil, false, ErrNoCheckpoint
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.looked && r.m.ReceiveCount != 1 {
		rec, err := r.c.store.Get(ctx, r.key)
		switch {
		case errors.Is(err, jobstate.ErrNotFound):
		case err != nil:
			return nil, false, fmt.Errorf("checkpoint: Load: %w", err)
		case rec.State != jobstate.Saved:
			return nil, false, fmt.Errorf("checkpoint: Load: the record of %q is %s, not a checkpoint", r.key, rec.State)
		default:
			r.value, r.have = rec.Value, true
			r.c.st.resumed.Add(1)
		}
	}
	r.looked = true
	if !r.have {
		return nil, false, nil
	}
	return slices.Clone(r.value), true, nil
}

// SaveJSON saves v, encoded with encoding/json, as Save does.
//
// Errors: Save's, and json.Marshal's (nothing saved).
func SaveJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("checkpoint: SaveJSON: %w", err)
	}
	return Save(ctx, b)
}

// LoadJSON decodes the checkpoint into v (a pointer) and returns true, or
// leaves v alone and returns false when there is none, as Load does.
//
// Errors: Load's, and json.Unmarshal's for a checkpoint that does not
// decode into v.
func LoadJSON(ctx context.Context, v any) (bool, error) {
	b, ok, err := Load(ctx)
	if !ok || err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("checkpoint: LoadJSON: %w", err)
	}
	return true, nil
}
