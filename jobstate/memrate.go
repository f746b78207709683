package jobstate

import (
	"context"
	"time"
)

var _ RateLimiter = (*Memory)(nil)

// Take implements RateLimiter.
func (s *Memory) Take(ctx context.Context, key string, r Rate, maxWait time.Duration) (Grant, error) {
	if err := ValidateTake(key, r, maxWait); err != nil {
		return Grant{}, err
	}
	if err := ctx.Err(); err != nil {
		return Grant{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	tat, g := r.TakeAt(s.rates[key], now, maxWait)
	if g.OK {
		s.setRate(key, tat, now)
	}
	return g, nil
}

// Pause implements RateLimiter.
func (s *Memory) Pause(ctx context.Context, key string, r Rate, until time.Time) error {
	now := time.Now()
	if err := ValidatePause(key, r, until, now); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRate(key, r.PauseAt(s.rates[key], until), now)
	return nil
}

// setRate keeps key's TAT, and every 1,024 writes drops the keys whose TAT
// has passed (as good as absent). Called with s.mu held.
func (s *Memory) setRate(key string, tat, now time.Time) {
	if s.rates == nil {
		s.rates = make(map[string]time.Time)
	}
	s.rates[key] = tat
	if s.takes++; s.takes%1024 == 0 {
		for k, t := range s.rates {
			if !t.After(now) {
				delete(s.rates, k)
			}
		}
	}
}
