package jobstate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is a Store in this process's memory: for tests, and for a single
// process whose checkpoints and idempotency keys may be lost with it. Its
// zero value is an empty store, ready to use; it must not be copied after
// first use. Safe for concurrent use. Expired records are dropped on the
// write that finds them and by a scan every 1,024 writes, so memory follows
// the live records. It is also a RateLimiter for one process (rate.go's
// rule over a map of its own), its keys dropped likewise once their TAT
// has passed.
type Memory struct {
	mu      sync.Mutex
	records map[string]Record
	writes  int
	rates   map[string]time.Time // a rate key's TAT
	takes   int
}

// Get implements Store.
func (s *Memory) Get(ctx context.Context, key string) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(key, time.Now())
	if !ok {
		return Record{}, fmt.Errorf("jobstate: %q: %w", key, ErrNotFound)
	}
	return clone(r), nil
}

// Put implements Store.
func (s *Memory) Put(ctx context.Context, rec Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.write(clone(rec))
	return nil
}

// Claim implements Store.
func (s *Memory) Claim(ctx context.Context, rec Record) (Record, error) {
	if err := rec.ValidateClaim(); err != nil {
		return Record{}, err
	}
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	if r, ok := s.live(rec.Key, now); ok && !r.Claimable(rec.Owner, now) {
		return clone(r), fmt.Errorf("jobstate: %q is %s: %w", rec.Key, r.State, ErrClaimed)
	}
	s.write(clone(rec))
	return Record{}, nil
}

// Delete implements Store.
func (s *Memory) Delete(ctx context.Context, key, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.live(key, time.Now())
	switch {
	case !ok:
		return nil
	case owner != "" && (r.State != InProgress || r.Owner != owner):
		return fmt.Errorf("jobstate: %q is %s, not held by this owner: %w", key, r.State, ErrClaimed)
	}
	delete(s.records, key)
	return nil
}

// live returns the record under key if it is live at now, dropping it when
// it has expired. Called with s.mu held.
func (s *Memory) live(key string, now time.Time) (Record, bool) {
	r, ok := s.records[key]
	if ok && !r.Live(now) {
		delete(s.records, key)
		return Record{}, false
	}
	return r, ok
}

// write stores r, and every 1,024 writes drops the expired records. Called
// with s.mu held.
func (s *Memory) write(r Record) {
	if s.records == nil {
		s.records = make(map[string]Record)
	}
	s.records[r.Key] = r
	if s.writes++; s.writes%1024 == 0 {
		now := time.Now()
		for k, r := range s.records {
			if !r.Live(now) {
				delete(s.records, k)
			}
		}
	}
}

// clone copies r's Value, so that neither the caller nor the store sees the
// other's later writes to it.
func clone(r Record) Record {
	r.Value = slices.Clone(r.Value)
	return r
}
