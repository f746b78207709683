package heartbeat

import (
	"errors"
	"fmt"
	"time"
)

// WatchdogConfig configures a [Watchdog]. Zero fields take their documented
// default, except Threshold, which is required.
type WatchdogConfig struct {
	// Threshold is how long a handler may go without an observed beat (or,
	// if it never beat, since [New]) before it counts as stuck. Required;
	// must be > 0. Pick it well above the longest quiet stretch of a healthy
	// handler, and below the queue's visibility timeout if the point is to
	// hear about a stuck handler before its lease lapses.
	Threshold time.Duration

	// CheckInterval is how often the Watchdog looks at every watched
	// Heartbeat. 0 means Threshold/4 (at least 1ns); otherwise it must be
	// in (0, Threshold]. A stuck handler is reported between Threshold and
	// Threshold+CheckInterval after its last observed beat.
	CheckInterval time.Duration

	// OnStuck, if not nil, is called once per stuck episode, when a check
	// first finds a handler stuck (not on every later check). It runs on
	// the goroutine of [Watchdog.Run], one call at a time, so it must not
	// block for long: while it runs, no handler is checked.
	OnStuck func(StuckHandler)

	// OnRecovered, if not nil, is called when a handler reported by
	// OnStuck beats again, ending the episode. Its Since is the same as
	// OnStuck's and its Elapsed is the whole gap, from Since to the
	// observed beat that ended the episode. It runs like OnStuck, on the
	// goroutine of Run. A handler that is unwatched while stuck is not
	// reported as recovered.
	OnRecovered func(StuckHandler)
}

// Validate reports every out-of-range field, joined with [errors.Join];
// each error wraps [ErrInvalidArgument] and names the field and its allowed
// range. It returns nil for a usable config. Validate does not modify c.
func (c WatchdogConfig) Validate() error {
	var errs []error
	if c.Threshold <= 0 {
		errs = append(errs, fmt.Errorf("%w: WatchdogConfig.Threshold is %v; want > 0", ErrInvalidArgument, c.Threshold))
	}
	if c.CheckInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: WatchdogConfig.CheckInterval is %v; want 0 (default Threshold/4) or in (0, Threshold]", ErrInvalidArgument, c.CheckInterval))
	} else if c.Threshold > 0 && c.CheckInterval > c.Threshold {
		errs = append(errs, fmt.Errorf("%w: WatchdogConfig.CheckInterval is %v; want 0 (default Threshold/4) or in (0, Threshold=%v]", ErrInvalidArgument, c.CheckInterval, c.Threshold))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with zero fields replaced by their defaults. It
// expects a config that passed Validate.
func (c WatchdogConfig) withDefaults() WatchdogConfig {
	if c.CheckInterval == 0 {
		c.CheckInterval = max(c.Threshold/4, time.Nanosecond)
	}
	return c
}
