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
	"unicode/utf8"

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
	st    struct{ saved, resumed, done, permanent, finished, markErrors atomic.Int64 }
}

// Stats are a Checkpoints' counts since New.
type Stats struct {
	// Saved counts the checkpoints saved (Save calls that succeeded).
	Saved int64
	// Resumed counts the deliveries that found a checkpoint.
	Resumed int64
	// Done counts the jobs marked done (their handler returned nil after
	// a checkpoint was saved or found); Permanent those marked failed for
	// good (a permanent failure, sqsloop.Permanent). MarkErrors counts the
	// marks that could not be written (the last checkpoint stands: a
	// redelivery resumes from it).
	Done, Permanent, MarkErrors int64
	// Finished counts the deliveries of a job marked done or failed,
	// answered from the mark without running the handler: acked, or
	// failed for good again (its ack or dead-letter copy had not been
	// made: a kill, a lost lease, a drain).
	Finished int64
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
	return Stats{Saved: c.st.saved.Load(), Resumed: c.st.resumed.Load(), Done: c.st.done.Load(),
		Permanent: c.st.permanent.Load(), MarkErrors: c.st.markErrors.Load(), Finished: c.st.finished.Load()}
}

// cleanupTimeout bounds the mark written after a handler returned: it is
// written without the handler's context's cancellation (a drain that
// cancelled a handler that finished must not lose its mark).
const cleanupTimeout = 5 * time.Second

// ErrFailedBefore is matched (errors.Is) by the error the middleware
// returns, without running the handler, for a delivery of a message whose
// job failed for good on an earlier delivery (its handler returned
// sqsloop.Permanent): the error is sqsloop.Permanent too, so that the
// runtime sends the message to the dead-letter queue, and it says why the
// job failed then.
var ErrFailedBefore = errors.New("checkpoint: the job failed for good on an earlier delivery")

// Middleware wraps next (an sqsloop.Handler): next's context carries the
// message's checkpoint (Save, Load). A redelivery first reads the
// message's record: a job marked done is acked (nil) and a job marked
// failed for good fails again (sqsloop.Permanent, ErrFailedBefore)
// without running next, whose run had ended before its ack or
// dead-letter copy was made. Once next returns nil or a permanent failure
// after a checkpoint was saved or found, the checkpoint is replaced by
// that mark (kept for Config.Retention), never deleted before the ack: a
// delivery after a lost ack does not run the job again from the start. A
// mark that cannot be written is logged (WARN) and counted; the
// checkpoint then stands, and a redelivery resumes from it. It fits
// consumer.Config.Middleware and sqslambda.Config.Middleware as it is.
//
// Errors: next's; ErrFailedBefore's as above; and, for a redelivery whose
// record could not be read (jobstate.Store.Get), an error wrapping the
// store's, without running next (the message is nacked and tried again,
// rather than run from step 0 when its job may be done).
func (c *Checkpoints) Middleware(next func(context.Context, *sqsloop.Message) error) func(context.Context, *sqsloop.Message) error {
	return func(ctx context.Context, m *sqsloop.Message) error {
		r := &run{c: c, m: m, key: c.key(m)}
		if m.ReceiveCount != 1 {
			rec, found, err := c.read(ctx, r.key)
			switch {
			case err != nil:
				return err
			case found && rec.State == jobstate.Completed:
				c.st.finished.Add(1)
				return nil
			case found && rec.State == jobstate.Failed:
				c.st.finished.Add(1)
				return sqsloop.Permanent(fmt.Errorf("%w: %s", ErrFailedBefore, rec.Value))
			case found:
				r.value, r.have = rec.Value, true
				c.st.resumed.Add(1)
			}
		}
		err := next(context.WithValue(ctx, runKey{}, r), m)
		switch {
		case !r.holds():
		case err == nil:
			c.mark(ctx, m, jobstate.Record{Key: r.key, State: jobstate.Completed}, &c.st.done)
		case errors.Is(err, sqsloop.ErrPermanent):
			c.mark(ctx, m, jobstate.Record{Key: r.key, State: jobstate.Failed, Value: reason(err)}, &c.st.permanent)
		}
		return err
	}
}

// read returns the live record under key, and whether there is one. A
// record of another kind (an idempotency key sharing the namespace) is an
// error.
func (c *Checkpoints) read(ctx context.Context, key string) (jobstate.Record, bool, error) {
	rec, err := c.store.Get(ctx, key)
	switch {
	case errors.Is(err, jobstate.ErrNotFound):
		return jobstate.Record{}, false, nil
	case err != nil:
		return rec, false, fmt.Errorf("checkpoint: reading the checkpoint of a redelivered message: %w", err)
	case rec.State == jobstate.InProgress:
		return rec, false, fmt.Errorf("checkpoint: the record of %q is %s, not a checkpoint", key, rec.State)
	}
	return rec, true, nil
}

// mark writes rec, the mark of m's finished job, replacing its checkpoint,
// kept for Config.Retention, and counts it in n.
func (c *Checkpoints) mark(ctx context.Context, m *sqsloop.Message, rec jobstate.Record, n *atomic.Int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	rec.ExpiresAt = time.Now().Add(c.cfg.Retention)
	if err := c.store.Put(ctx, rec); err != nil {
		c.st.markErrors.Add(1)
		c.cfg.Logger.Warn("checkpoint: could not mark a finished job; a redelivery resumes from its last checkpoint",
			slog.String("message_id", m.ID), slog.String("state", string(rec.State)), slog.Any("error", err))
		return
	}
	n.Add(1)
}

// maxReason bounds the reason a Failed mark keeps: 1,024 bytes, as a
// poison message's copy (sqsloop.MaxPoisonReason).
const maxReason = sqsloop.MaxPoisonReason

// reason is err's text, cut to at most maxReason bytes at a character's
// start.
func reason(err error) []byte {
	b := []byte(err.Error())
	if len(b) > maxReason {
		n := maxReason
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	return b
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

	mu    sync.Mutex
	value []byte
	have  bool // value is the message's checkpoint (found or saved)
}

// holds reports whether the store holds the message's checkpoint now:
// this run saved one, or found one.
func (r *run) holds() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.have
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
	r.value, r.have = slices.Clone(value), true
	r.c.st.saved.Add(1)
	return nil
}

// Load returns the checkpoint of the message ctx's handler runs for: the
// last one saved, by this run or by an earlier delivery's, and true; or
// nil and false when there is none. It answers from memory: the middleware
// read the store before the handler ran (on a redelivery only: a first
// delivery, ReceiveCount 1, cannot have one). The caller may modify the
// returned slice.
//
// Errors: ErrNoCheckpoint when ctx does not come from the middleware.
// Safe for concurrent use.
func Load(ctx context.Context) ([]byte, bool, error) {
	r := from(ctx)
	if r == nil {
		return nil, false, ErrNoCheckpoint
	}
	r.mu.Lock()
	defer r.mu.Unlock()
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
