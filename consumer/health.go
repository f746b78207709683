package consumer

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/internal/rules"
)

// NotReadyAfter is how long receives may keep failing, with no success in
// between, before Ready reports the consumer not ready: 30 s, several long
// polls' worth, so one network blip or a throttled call does not flip
// readiness.
const NotReadyAfter = 30 * time.Second

// health follows the outcome of receives for Ready and for the
// access-denied limit. Safe for concurrent use.
type health struct {
	mu           sync.Mutex
	failingSince time.Time // first failure since the last success; zero after a success
	lastErr      error
	denied       int // access-denied receives in a row
}

// received records a receive's outcome.
func (h *health) received(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.failingSince, h.lastErr, h.denied = time.Time{}, nil, 0
		return
	}
	if h.failingSince.IsZero() {
		h.failingSince = time.Now()
	}
	h.lastErr = err
	if rules.FaultOf(err) == rules.Denied {
		h.denied++
	} else {
		h.denied = 0
	}
}

// deniedInARow is how many receives in a row were denied access.
func (h *health) deniedInARow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.denied
}

// failing returns how long receives have failed with no success in
// between, and the last error; 0 and nil while they succeed.
func (h *health) failing() (time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failingSince.IsZero() {
		return 0, nil
	}
	return time.Since(h.failingSince), h.lastErr
}

// Ready reports whether the consumer is doing its work, for a readiness
// probe (lifecycle.LoopGroup asks every loop that has this method): nil
// while Run is receiving and receives succeed, or have failed for less
// than NotReadyAfter. Otherwise a non-nil error that says why: Run not
// started, shutdown begun, paused (Pause), the lease owner failed (wrapping its error,
// e.g. sqsloop.ErrAccessDenied), or receives failing for longer than
// NotReadyAfter (wrapping the last receive error; an endpoint that is down
// stays a transient error: Run keeps retrying with back-off). Safe for
// concurrent use; it never blocks.
func (c *Consumer) Ready() error {
	switch c.state.Load() {
	case stateNew:
		return errors.New("consumer: Run not started")
	case stateDraining, stateStopped:
		return errors.New("consumer: shutting down")
	}
	if paused, _ := c.pause.state(); paused {
		return errors.New("consumer: paused (drain mode)")
	}
	if err := c.leases.Err(); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	if d, err := c.health.failing(); d > NotReadyAfter {
		return fmt.Errorf("consumer: no receive has succeeded for %v: %w", d.Round(time.Second), err)
	}
	return nil
}
