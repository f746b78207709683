package idempotency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// Errors of the middleware.
var (
	// ErrInProgress is matched (errors.Is) by the error a delivery gets
	// when another run holds its key under a live lease: the message is
	// nacked with a delay that ends when that lease does.
	ErrInProgress = errors.New("idempotency: the key is in progress elsewhere")
	// ErrClaimLost is the cause (context.Cause) of a handler's context
	// cancelled because another run took its key: its claim lapsed (no
	// beat, or no renewal reached the store, for a whole lease).
	ErrClaimLost = errors.New("idempotency: the claim on the key was lost")
	// ErrNoClaim is returned by SetResult when ctx does not come from the
	// middleware.
	ErrNoClaim = errors.New("idempotency: the context carries no claim (is the idempotency middleware in Config.Middleware?)")
)

// MaxResult is the largest result SetResult keeps, in bytes:
// jobstate.MaxValueSize (64 KiB).
const MaxResult = jobstate.MaxValueSize

// Idempotency is the middleware and its counts. Safe for concurrent use.
type Idempotency struct {
	store jobstate.Store
	cfg   Config
	st    struct{ ran, completed, duplicates, busy, lost, storeErrors atomic.Int64 }
}

// Stats are an Idempotency's counts since New.
type Stats struct {
	// Ran counts the handler runs (claims won).
	Ran int64
	// Completed counts the keys recorded completed.
	Completed int64
	// Duplicates counts the deliveries of completed keys, acked (or given
	// to OnDuplicate) without running the handler.
	Duplicates int64
	// Busy counts the deliveries nacked because another run held the key.
	Busy int64
	// LostClaims counts the runs whose claim another run took.
	LostClaims int64
	// StoreErrors counts the store calls that failed: a claim (the message
	// was nacked), a completion, a release or a renewal.
	StoreErrors int64
}

// New returns the middleware keeping its records in store.
//
// Errors: an error wrapping sqsloop.ErrInvalidArgument, naming every bad
// field, when store is nil or cfg is invalid (Config.Validate).
func New(store jobstate.Store, cfg Config) (*Idempotency, error) {
	err := cfg.Validate()
	if store == nil {
		err = errors.Join(fmt.Errorf("idempotency: New: store is nil: %w", sqsloop.ErrInvalidArgument), err)
	}
	if err != nil {
		return nil, err
	}
	return &Idempotency{store: store, cfg: cfg.withDefaults()}, nil
}

// Stats returns the counts so far.
func (i *Idempotency) Stats() Stats {
	return Stats{Ran: i.st.ran.Load(), Completed: i.st.completed.Load(), Duplicates: i.st.duplicates.Load(),
		Busy: i.st.busy.Load(), LostClaims: i.st.lost.Load(), StoreErrors: i.st.storeErrors.Load()}
}

// cleanupTimeout bounds the completion and the release after a handler
// returned: they run without its context's cancellation (a drain that
// cancelled a finished handler must not lose its completion).
const cleanupTimeout = 5 * time.Second

// Middleware wraps next (a sqsloop.Handler) as the package doc says. It
// fits consumer.Config.Middleware and sqslambda.Config.Middleware as it
// is. Put it first (outermost), so that a duplicate costs no other
// middleware's work.
func (i *Idempotency) Middleware(next func(context.Context, *sqsloop.Message) error) func(context.Context, *sqsloop.Message) error {
	return func(ctx context.Context, m *sqsloop.Message) (err error) {
		key, err := i.key(m)
		if err != nil {
			return err
		}
		now := time.Now()
		claim := jobstate.Record{Key: key, State: jobstate.InProgress, Owner: newOwner(), ExpiresAt: now.Add(i.cfg.Retention)}
		// The claim follows the lease, and lasts at least as long as the
		// receive's visibility timeout, which holds the message of a handler
		// that never beats until then whatever the extensions' length.
		claim.LeaseUntil = later(now.Add(claimFor(length(ctx, m))), m.ReceivedAt.Add(m.VisibilityTimeout))
		claim.ExpiresAt = later(claim.ExpiresAt, claim.LeaseUntil)
		standing, err := i.store.Claim(ctx, claim)
		if err != nil {
			return i.refused(ctx, m, key, standing, err)
		}
		i.st.ran.Add(1)
		hctx, cancel := context.WithCancelCause(ctx)
		r := &run{}
		stop := i.renew(hctx, cancel, m, claim)
		returned := false
		defer func() {
			stop()
			cancel(nil)
			if !returned { // a panic: release the claim, let it go on up
				i.release(ctx, m, claim)
			}
		}()
		err = next(context.WithValue(hctx, runKey{}, r), m)
		returned = true
		if err != nil {
			i.release(ctx, m, claim)
			return err
		}
		i.complete(ctx, m, claim, r.get())
		return nil
	}
}

// key returns the store's key of m.
func (i *Idempotency) key(m *sqsloop.Message) (string, error) {
	k := m.ID
	if i.cfg.Key != nil {
		var err error
		if k, err = i.cfg.Key(m); err != nil {
			return "", fmt.Errorf("idempotency: Config.Key of message %s: %w", m.ID, err)
		}
	}
	if k == "" || len(k)+len(i.cfg.Queue) > maxKey {
		return "", fmt.Errorf("idempotency: the key of message %s is %d bytes with Config.Queue, want 1-%d: %w", m.ID, len(k)+len(i.cfg.Queue), maxKey, sqsloop.ErrInvalidArgument)
	}
	return "idempotency/" + i.cfg.Queue + "/" + k, nil
}

// length is the lease length of the message ctx's handler runs for: what
// each extension of its lease asks for now (sqsloop.Lease.Extension, read
// at every renewal, so that an adaptive choice or a SetExtension call
// takes effect); without a lease owner (a test, sqslambda without a
// client) the message's visibility timeout, else DefaultLease.
func length(ctx context.Context, m *sqsloop.Message) time.Duration {
	if l := sqsloop.LeaseFromContext(ctx); l != nil {
		if e := l.Extension(); e > 0 {
			return e
		}
	}
	if m.VisibilityTimeout >= time.Second {
		return m.VisibilityTimeout
	}
	return DefaultLease
}

// claimFor is how long a claim made or renewed now lasts for a lease of
// length e: half as long again. A renewal comes after the beat that earned
// it, and a lease lasts at most e after the look that saw its handler's
// latest beat, an Interval at most after that beat, and an Interval is
// less than half an extension (visibility.Config: Interval <
// Extension/2, MinExtensionPeriod > 2 Intervals), so the claim ends no
// sooner than the lease it follows.
func claimFor(e time.Duration) time.Duration { return e + e/2 }

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// refused answers a delivery whose claim failed: a completed key is a
// duplicate (acked, or OnDuplicate's), a key in progress elsewhere is
// nacked until that lease ends, and a store error is the handler's error
// (nacked with the back-off).
func (i *Idempotency) refused(ctx context.Context, m *sqsloop.Message, key string, standing jobstate.Record, err error) error {
	switch {
	case !errors.Is(err, jobstate.ErrClaimed):
		i.st.storeErrors.Add(1)
		return fmt.Errorf("idempotency: claiming %q: %w", key, err)
	case standing.State == jobstate.Completed:
		i.st.duplicates.Add(1)
		if i.cfg.OnDuplicate != nil {
			return i.cfg.OnDuplicate(ctx, m, standing.Value)
		}
		return nil
	case standing.State == jobstate.InProgress:
		i.st.busy.Add(1)
		return sqsloop.NackAfter(fmt.Errorf("%w: %q is held by another run until %s", ErrInProgress, key,
			standing.LeaseUntil.UTC().Format(time.RFC3339Nano)), busyDelay(standing.LeaseUntil))
	}
	return fmt.Errorf("idempotency: the record of %q is %s, not an idempotency record (a key shared with a checkpoint?)", key, standing.State)
}

// busyDelay is how long a delivery of a key held until leaseUntil waits:
// until then, in whole seconds (SQS's unit), and a second more, so that
// clocks a little apart do not find it held again; at least 1 s.
func busyDelay(leaseUntil time.Time) time.Duration {
	return max(time.Until(leaseUntil).Truncate(time.Second), 0) + time.Second
}

// renew starts the goroutine that renews claim, a claim for m, a period
// (a third of the lease's length) after it was made or last renewed, when
// ctx's heartbeat beat since (every period without a heartbeat; the first
// time, a beat at any time: a handler that sets its extension and beats
// at its start holds its claim as its lease, which the lease owner extends
// then): the claim then lasts claimFor(length) from the renewal, never
// less than it did. The length is read again for each period. On
// finding the key taken it cancels the handler (ErrClaimLost) and stops.
// stop ends the goroutine and waits for it.
func (i *Idempotency) renew(ctx context.Context, cancel context.CancelCauseFunc, m *sqsloop.Message, claim jobstate.Record) (stop func()) {
	hb := heartbeat.FromContext(ctx)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var last time.Time // the first renewal needs no beat: the start counts as one, as for the lease owner
		t := time.NewTimer(length(ctx, m) / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			e := length(ctx, m)
			t.Reset(e / 3)
			if hb != nil {
				b := hb.LastBeat()
				if !b.After(last) {
					continue // no beat since the last renewal: let the claim lapse with the lease
				}
				last = b
			}
			claim.LeaseUntil = later(claim.LeaseUntil, time.Now().Add(claimFor(e)))
			claim.ExpiresAt = later(claim.ExpiresAt, claim.LeaseUntil) // a claim outlives Retention while it holds
			_, err := i.store.Claim(ctx, claim)
			switch {
			case errors.Is(err, jobstate.ErrClaimed):
				i.st.lost.Add(1)
				i.cfg.Logger.Warn("idempotency: another run took the key of a running handler; cancelling it",
					slog.String("key", claim.Key))
				cancel(ErrClaimLost)
				return
			case err != nil && ctx.Err() == nil:
				i.st.storeErrors.Add(1)
				i.cfg.Logger.Warn("idempotency: could not renew a claim; trying again", slog.String("key", claim.Key), slog.Any("error", err))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// complete records claim's key completed with result.
func (i *Idempotency) complete(ctx context.Context, m *sqsloop.Message, claim jobstate.Record, result []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	rec := jobstate.Record{Key: claim.Key, State: jobstate.Completed, Owner: claim.Owner, Value: result, ExpiresAt: time.Now().Add(i.cfg.Retention)}
	if err := i.store.Put(ctx, rec); err != nil {
		i.st.storeErrors.Add(1)
		i.cfg.Logger.Warn("idempotency: the handler succeeded but its key could not be recorded completed; a duplicate delivery would run it again",
			slog.String("message_id", m.ID), slog.String("key", claim.Key), slog.Any("error", err))
		return
	}
	i.st.completed.Add(1)
}

// release deletes claim, if it still holds its key.
func (i *Idempotency) release(ctx context.Context, m *sqsloop.Message, claim jobstate.Record) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := i.store.Delete(ctx, claim.Key, claim.Owner); err != nil && !errors.Is(err, jobstate.ErrClaimed) {
		i.st.storeErrors.Add(1)
		i.cfg.Logger.Warn("idempotency: could not release the claim of a failed run; the retry waits for its lease to lapse",
			slog.String("message_id", m.ID), slog.String("key", claim.Key), slog.Any("error", err))
	}
}

// newOwner returns a claim's owner token: 16 random bytes in hex.
func newOwner() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand.Read crashes the program instead)
	return hex.EncodeToString(b[:])
}

// runKey carries a handler run's *run in its context.
type runKey struct{}

// run is what a handler run sets: its result.
type run struct {
	mu     sync.Mutex
	result []byte
}

func (r *run) get() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.result
}

// SetResult sets the result stored with the key when the handler of ctx
// returns nil: what Config.OnDuplicate gets for a later duplicate. value
// is copied; at most MaxResult bytes; a later call replaces it.
//
// Errors: ErrNoClaim when ctx does not come from the middleware; an error
// wrapping sqsloop.ErrInvalidArgument for a value over MaxResult. Safe for
// concurrent use.
func SetResult(ctx context.Context, value []byte) error {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil {
		return ErrNoClaim
	}
	if len(value) > MaxResult {
		return fmt.Errorf("idempotency: SetResult: %d bytes, more than MaxResult (%d): %w", len(value), MaxResult, sqsloop.ErrInvalidArgument)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.result = slices.Clone(value)
	return nil
}

// SetResultJSON sets v, encoded with encoding/json, as SetResult does.
//
// Errors: SetResult's, and json.Marshal's.
func SetResultJSON(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("idempotency: SetResultJSON: %w", err)
	}
	return SetResult(ctx, b)
}
