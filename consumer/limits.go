package consumer

import (
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/leases"
	"github.com/sqsloop/sqsloop/jobstate"
)

// RateLimit starts at most Rate messages per Per of each key Key picks, in
// every process whose consumer has a RateLimit of the same Name on the
// same Store: "50 a second of kind email" (Key: the message's kind,
// "email" or ""), or "10 a minute per tenant" (Key: its tenant). The
// turns are kept by Store (GCRA, one take per message: see
// jobstate.Rate), so that processes, however many, share one limit.
type RateLimit struct {
	// Name names the limit, 1–100 bytes, unique among a Config's: the
	// keys in Store are Name + "/" + Key(m).
	Name string

	// Key returns the key a message counts against; "" means the limit
	// does not cover it. Nil: every message counts against one key, Name.
	// Called from the receive loops, concurrently; it must be quick and
	// must not keep the message.
	Key func(m *sqsloop.Message) string

	// Rate and Per: at most Rate messages of a key start per Per, evenly
	// spaced (Per ÷ Rate apart, 1 µs–24 h), unless Burst lets more go at
	// once. Rate ≥ 1; Per > 0.
	Rate int
	Per  time.Duration

	// Burst is how many messages of a key may start at once after a
	// quiet spell, 1–1,000,000; 0 means 1.
	Burst int

	// Store keeps the turns, shared by the processes that use it: a
	// jobstate store (pgstate, sqlitestate, dynamostore) is one. Nil: a
	// jobstate.Memory of this consumer's, for this process alone.
	Store jobstate.RateLimiter
}

// rate is the limit's jobstate.Rate.
func (l RateLimit) rate() jobstate.Rate {
	burst := l.Burst
	if burst == 0 {
		burst = 1
	}
	var interval time.Duration
	if l.Rate > 0 {
		interval = l.Per / time.Duration(l.Rate)
	}
	return jobstate.Rate{Interval: interval, Burst: burst}
}

// maxLimitName bounds RateLimit.Name: 100 bytes.
const maxLimitName = 100

// validateLimits returns the problems of the fleet settings: GroupLimit,
// GroupOf and RateLimits (c with defaults).
func (c Config) validateLimits() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format+": %w", append(args, sqsloop.ErrInvalidArgument)...))
	}
	if c.GroupLimit < 0 || c.GroupLimit > c.Concurrency && c.Concurrency > 0 {
		bad("GroupLimit: must be 0 (none) or between 1 and Concurrency (%d), got %d", c.Concurrency, c.GroupLimit)
	}
	if c.GroupOf != nil && c.GroupLimit == 0 {
		bad("GroupOf: set without GroupLimit, which it serves")
	}
	names := map[string]bool{}
	for i, l := range c.RateLimits {
		if len(l.Name) == 0 || len(l.Name) > maxLimitName {
			bad("RateLimits[%d].Name: must be 1 to %d bytes, got %d", i, maxLimitName, len(l.Name))
		} else if names[l.Name] {
			bad("RateLimits[%d].Name: %q names another limit too", i, l.Name)
		}
		names[l.Name] = true
		if l.Rate < 1 {
			bad("RateLimits[%d].Rate: must be ≥ 1, got %d", i, l.Rate)
		}
		if l.Per <= 0 {
			bad("RateLimits[%d].Per: must be > 0, got %v", i, l.Per)
		}
		if l.Burst < 0 {
			bad("RateLimits[%d].Burst: must be 0 (1) or between 1 and 1000000, got %d", i, l.Burst)
		}
		if l.Rate >= 1 && l.Per > 0 && l.Burst >= 0 {
			if err := l.rate().Validate(); err != nil { // wraps sqsloop.ErrInvalidArgument
				errs = append(errs, fmt.Errorf("RateLimits[%d]: Per ÷ Rate (%v) must be between 1µs and 24h, Burst at most 1000000: %w", i, l.rate().Interval, err))
			}
		}
	}
	return errs
}

// slowedDown nacks m, whose handler returned sqsloop.SlowDown, after the
// retry-after it carries, counting no failure; under limits, each rate
// limit covering m pauses its key until then (gate.pause).
func (c *Consumer) slowedDown(m *sqsloop.Message, lease *leases.Lease, err error) failure {
	c.st.slowed.Add(1)
	delay := min(max(c.nackDelay(m, err), 0), sqsloop.MaxVisibilityTimeout)
	if c.gate != nil {
		c.gate.pause(m, time.Now().Add(delay))
	}
	lease.Nack(delay)
	return failure{delay: delay}
}
