// Package storetest is the conformance suite of jobstate.Store: every
// Store runs it from its own tests (Run), so that each answers as Memory
// does, operation by operation. Imported only by tests.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// Harness makes the Stores a run uses. NewStore returns a Store of the one
// database the run tests (every call: the same records, through a client of
// its own, as another process would have), and closes it when t ends. The
// scenarios use keys no other run uses, so that a database may be shared.
type Harness interface {
	NewStore(t *testing.T) jobstate.Store
}

// HarnessFunc is a Harness made of its NewStore.
type HarnessFunc func(t *testing.T) jobstate.Store

// NewStore calls f.
func (f HarnessFunc) NewStore(t *testing.T) jobstate.Store { return f(t) }

// scenarios are the suite's, by name.
var scenarios = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"GetMissing", getMissing},
	{"PutThenGet", putThenGet},
	{"PutReplaces", putReplaces},
	{"LargestValue", largestValue},
	{"InvalidRecords", invalidRecords},
	{"ExpiredIsAbsent", expiredIsAbsent},
	{"ClaimAbsent", claimAbsent},
	{"ClaimRefusedWhileLeased", claimRefusedWhileLeased},
	{"ClaimRenewedBySameOwner", claimRenewedBySameOwner},
	{"ClaimAfterLeaseLapsed", claimAfterLeaseLapsed},
	{"ClaimRefusedWhenCompletedFailedOrSaved", claimRefusedWhenDone},
	{"DeleteByOwner", deleteByOwner},
	{"DeleteUnconditional", deleteUnconditional},
	{"ClaimRace", claimRace},
}

// Run runs every scenario as a subtest of t, named after it.
func Run(t *testing.T, h Harness) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) { s.run(t, h) })
	}
}

// key returns a key no other run uses.
func key(t *testing.T) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "storetest/" + t.Name() + "/" + hex.EncodeToString(b[:])
}

// ms is t to the millisecond, as every Store keeps its times at least.
func ms(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// same fails t unless got is want, times to the millisecond and an empty
// Value equal to a nil one.
func same(t *testing.T, what string, got, want jobstate.Record) {
	t.Helper()
	if got.Key != want.Key || got.State != want.State || got.Owner != want.Owner || !bytes.Equal(got.Value, want.Value) ||
		!ms(got.LeaseUntil).Equal(ms(want.LeaseUntil)) || !ms(got.ExpiresAt).Equal(ms(want.ExpiresAt)) {
		t.Errorf("%s: got %s, want %s", what, show(got), show(want))
	}
}

func show(r jobstate.Record) string {
	return fmt.Sprintf("{%q %s owner %q value %q lease %v expires %v}", r.Key, r.State, r.Owner, r.Value,
		ms(r.LeaseUntil).Format(time.StampMilli), ms(r.ExpiresAt).Format(time.StampMilli))
}

func get(t *testing.T, s jobstate.Store, k string) (jobstate.Record, bool) {
	t.Helper()
	r, err := s.Get(t.Context(), k)
	switch {
	case errors.Is(err, jobstate.ErrNotFound):
		return r, false
	case err != nil:
		t.Fatalf("Get %q: %v", k, err)
	}
	return r, true
}

func put(t *testing.T, s jobstate.Store, r jobstate.Record) {
	t.Helper()
	if err := s.Put(t.Context(), r); err != nil {
		t.Fatalf("Put %s: %v", show(r), err)
	}
}

func claim(k, owner string, lease time.Duration) jobstate.Record {
	return jobstate.Record{Key: k, State: jobstate.InProgress, Owner: owner, LeaseUntil: time.Now().Add(lease), ExpiresAt: time.Now().Add(time.Hour)}
}

func getMissing(t *testing.T, h Harness) {
	s := h.NewStore(t)
	if r, ok := get(t, s, key(t)); ok {
		t.Errorf("Get of a key never written: %s, want ErrNotFound", show(r))
	}
}

func putThenGet(t *testing.T, h Harness) {
	s := h.NewStore(t)
	for _, r := range []jobstate.Record{
		{Key: key(t), State: jobstate.Saved, Value: []byte("step 7"), ExpiresAt: time.Now().Add(time.Hour)},
		{Key: key(t), State: jobstate.Completed, Value: []byte{0, 1, 2, 255}},
		{Key: key(t), State: jobstate.Completed},
		{Key: key(t), State: jobstate.Failed, Value: []byte("no such image"), ExpiresAt: time.Now().Add(time.Hour)},
		{Key: key(t), State: jobstate.InProgress, Owner: "run-1", LeaseUntil: time.Now().Add(time.Minute), ExpiresAt: time.Now().Add(time.Hour)},
	} {
		put(t, s, r)
		got, ok := get(t, s, r.Key)
		if !ok {
			t.Errorf("Get after Put %s: ErrNotFound", show(r))
			continue
		}
		same(t, "Get after Put", got, r)
	}
	// Another client sees it too.
	r := jobstate.Record{Key: key(t), State: jobstate.Saved, Value: []byte("shared")}
	put(t, s, r)
	if got, ok := get(t, h.NewStore(t), r.Key); !ok {
		t.Errorf("a second client: ErrNotFound for %s", show(r))
	} else {
		same(t, "a second client's Get", got, r)
	}
}

func putReplaces(t *testing.T, h Harness) {
	s := h.NewStore(t)
	k := key(t)
	put(t, s, claim(k, "run-1", time.Minute))
	done := jobstate.Record{Key: k, State: jobstate.Completed, Value: []byte("42"), ExpiresAt: time.Now().Add(time.Hour)}
	put(t, s, done)
	got, _ := get(t, s, k)
	same(t, "Get after the second Put", got, done)
}

func largestValue(t *testing.T, h Harness) {
	s := h.NewStore(t)
	r := jobstate.Record{Key: key(t), State: jobstate.Saved, Value: bytes.Repeat([]byte{0xa5}, jobstate.MaxValueSize)}
	put(t, s, r)
	got, _ := get(t, s, r.Key)
	if !bytes.Equal(got.Value, r.Value) {
		t.Errorf("a value of MaxValueSize came back as %d bytes", len(got.Value))
	}
}

func invalidRecords(t *testing.T, h Harness) {
	s := h.NewStore(t)
	for _, r := range []jobstate.Record{
		{Key: "", State: jobstate.Saved},
		{Key: string(bytes.Repeat([]byte("k"), jobstate.MaxKeySize+1)), State: jobstate.Saved},
		{Key: key(t), State: jobstate.Saved, Value: make([]byte, jobstate.MaxValueSize+1)},
		{Key: key(t), State: "done"},
		{Key: key(t), State: jobstate.InProgress, Owner: "run-1"}, // no lease
	} {
		if err := s.Put(t.Context(), r); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("Put %.80s: %v, want ErrInvalidArgument", show(r), err)
		}
	}
	if _, err := s.Claim(t.Context(), jobstate.Record{Key: key(t), State: jobstate.Saved}); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("Claim of a Saved record: %v, want ErrInvalidArgument", err)
	}
}

func expiredIsAbsent(t *testing.T, h Harness) {
	s := h.NewStore(t)
	k := key(t)
	put(t, s, jobstate.Record{Key: k, State: jobstate.Completed, Value: []byte("old"), ExpiresAt: time.Now().Add(-time.Second)})
	if r, ok := get(t, s, k); ok {
		t.Errorf("Get of an expired record: %s, want ErrNotFound", show(r))
	}
	if standing, err := s.Claim(t.Context(), claim(k, "run-2", time.Minute)); err != nil {
		t.Errorf("Claim over an expired Completed record: %v (standing %s), want it claimed", err, show(standing))
	}
	k = key(t)
	put(t, s, jobstate.Record{Key: k, State: jobstate.Saved, ExpiresAt: time.Now().Add(-time.Second)})
	if err := s.Delete(t.Context(), k, "run-1"); err != nil {
		t.Errorf("Delete by an owner over an expired record: %v, want nil (nothing live)", err)
	}
}

func claimAbsent(t *testing.T, h Harness) {
	s := h.NewStore(t)
	c := claim(key(t), "run-1", time.Minute)
	if _, err := s.Claim(t.Context(), c); err != nil {
		t.Fatalf("Claim of a free key: %v", err)
	}
	got, _ := get(t, s, c.Key)
	same(t, "Get after Claim", got, c)
}

func claimRefusedWhileLeased(t *testing.T, h Harness) {
	s := h.NewStore(t)
	c := claim(key(t), "run-1", time.Minute)
	if _, err := s.Claim(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	standing, err := h.NewStore(t).Claim(t.Context(), claim(c.Key, "run-2", time.Minute))
	if !errors.Is(err, jobstate.ErrClaimed) {
		t.Fatalf("a second owner's Claim while the first's lease holds: %v, want ErrClaimed", err)
	}
	same(t, "the record standing", standing, c)
	got, _ := get(t, s, c.Key)
	same(t, "Get after the refused Claim", got, c)
}

func claimRenewedBySameOwner(t *testing.T, h Harness) {
	s := h.NewStore(t)
	c := claim(key(t), "run-1", time.Minute)
	if _, err := s.Claim(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	renewed := claim(c.Key, "run-1", 2*time.Minute)
	if _, err := s.Claim(t.Context(), renewed); err != nil {
		t.Fatalf("the owner's renewal: %v", err)
	}
	got, _ := get(t, s, c.Key)
	same(t, "Get after the renewal", got, renewed)
}

func claimAfterLeaseLapsed(t *testing.T, h Harness) {
	s := h.NewStore(t)
	lapsed := claim(key(t), "run-1", -time.Second)
	put(t, s, lapsed)
	next := claim(lapsed.Key, "run-2", time.Minute)
	if standing, err := h.NewStore(t).Claim(t.Context(), next); err != nil {
		t.Fatalf("Claim after the lease lapsed: %v (standing %s)", err, show(standing))
	}
	got, _ := get(t, s, next.Key)
	same(t, "Get after the takeover", got, next)
	// The first owner, back, can neither renew nor release it.
	if _, err := s.Claim(t.Context(), claim(lapsed.Key, "run-1", time.Minute)); !errors.Is(err, jobstate.ErrClaimed) {
		t.Errorf("the first owner's renewal after the takeover: %v, want ErrClaimed", err)
	}
	if err := s.Delete(t.Context(), lapsed.Key, "run-1"); !errors.Is(err, jobstate.ErrClaimed) {
		t.Errorf("the first owner's Delete after the takeover: %v, want ErrClaimed", err)
	}
	got, _ = get(t, s, next.Key)
	same(t, "Get after the first owner's tries", got, next)
}

func claimRefusedWhenDone(t *testing.T, h Harness) {
	s := h.NewStore(t)
	for _, r := range []jobstate.Record{
		{Key: key(t), State: jobstate.Completed, Owner: "run-1", Value: []byte("result"), ExpiresAt: time.Now().Add(time.Hour)},
		{Key: key(t), State: jobstate.Saved, Owner: "run-1", Value: []byte("step 3")},
		{Key: key(t), State: jobstate.Failed, Owner: "run-1", Value: []byte("no such image")},
	} {
		put(t, s, r)
		standing, err := s.Claim(t.Context(), claim(r.Key, "run-1", time.Minute))
		if !errors.Is(err, jobstate.ErrClaimed) {
			t.Errorf("Claim over a %s record, same owner: %v, want ErrClaimed", r.State, err)
			continue
		}
		same(t, "the record standing", standing, r)
	}
}

func deleteByOwner(t *testing.T, h Harness) {
	s := h.NewStore(t)
	c := claim(key(t), "run-1", time.Minute)
	if _, err := s.Claim(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), c.Key, "run-2"); !errors.Is(err, jobstate.ErrClaimed) {
		t.Errorf("Delete by another owner: %v, want ErrClaimed", err)
	}
	if _, ok := get(t, s, c.Key); !ok {
		t.Fatalf("another owner's Delete deleted the claim")
	}
	if err := s.Delete(t.Context(), c.Key, "run-1"); err != nil {
		t.Errorf("Delete by the owner: %v", err)
	}
	if r, ok := get(t, s, c.Key); ok {
		t.Errorf("after the owner's Delete: %s, want ErrNotFound", show(r))
	}
	if err := s.Delete(t.Context(), c.Key, "run-1"); err != nil {
		t.Errorf("Delete of nothing: %v, want nil", err)
	}
	done := jobstate.Record{Key: key(t), State: jobstate.Completed, Owner: "run-1"}
	put(t, s, done)
	if err := s.Delete(t.Context(), done.Key, "run-1"); !errors.Is(err, jobstate.ErrClaimed) {
		t.Errorf("Delete by its owner of a Completed record: %v, want ErrClaimed (only a claim is released)", err)
	}
}

func deleteUnconditional(t *testing.T, h Harness) {
	s := h.NewStore(t)
	for _, r := range []jobstate.Record{
		claim(key(t), "run-1", time.Minute),
		{Key: key(t), State: jobstate.Completed},
		{Key: key(t), State: jobstate.Saved, Value: []byte("x")},
	} {
		put(t, s, r)
		if err := s.Delete(t.Context(), r.Key, ""); err != nil {
			t.Errorf("Delete of a %s record: %v", r.State, err)
		}
		if got, ok := get(t, s, r.Key); ok {
			t.Errorf("after Delete: %s, want ErrNotFound", show(got))
		}
	}
	if err := s.Delete(t.Context(), key(t), ""); err != nil {
		t.Errorf("Delete of nothing: %v, want nil", err)
	}
}

// claimRace: 8 clients (each a Store of its own, as 8 processes) claim
// each of 10 keys at once; exactly one wins each key, and the record is
// the winner's.
func claimRace(t *testing.T, h Harness) {
	const clients, keys = 8, 10
	stores := make([]jobstate.Store, clients)
	for i := range stores {
		stores[i] = h.NewStore(t)
	}
	for range keys {
		k := key(t)
		var wg sync.WaitGroup
		won := make([]bool, clients)
		errs := make([]error, clients)
		start := make(chan struct{})
		for i, s := range stores {
			wg.Go(func() {
				<-start
				_, err := s.Claim(context.WithoutCancel(t.Context()), claim(k, fmt.Sprint("run-", i), time.Minute))
				won[i] = err == nil
				if err != nil && !errors.Is(err, jobstate.ErrClaimed) {
					errs[i] = err
				}
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		winner := ""
		for i, w := range won {
			if w {
				winners++
				winner = fmt.Sprint("run-", i)
			}
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("claims failed otherwise than ErrClaimed: %v", err)
		}
		if winners != 1 {
			t.Fatalf("%d of %d racing claims of one key won, want 1", winners, clients)
		}
		if got, _ := get(t, stores[0], k); got.Owner != winner {
			t.Errorf("the record's owner is %q, want the winner %q", got.Owner, winner)
		}
	}
}
