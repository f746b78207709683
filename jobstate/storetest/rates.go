package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/jobstate"
)

// newLimiter returns a RateLimiter of the run's database, a client of its
// own (as another process would have).
type newLimiter func(t *testing.T) jobstate.RateLimiter

// rateScenarios are the scenarios of a RateLimiter, by name. Their rates
// are an hour per take or so, so that a server's round trips (on the wall
// clock) are nothing next to them: a wait is checked to within slack.
var rateScenarios = []struct {
	name string
	run  func(t *testing.T, nl newLimiter)
}{
	{"RateFirstTakeAtOnce", rateFirstTake},
	{"RateSpacedByInterval", rateSpaced},
	{"RateBurst", rateBurst},
	{"RateRefusedCountsNothing", rateRefused},
	{"RatePause", ratePause},
	{"RateInvalidArguments", rateInvalid},
	{"RateRace", rateRace},
}

// slack is how far a server's answer may be from the rule on the wall
// clock: the round trips between the test's clock readings and the
// store's.
const slack = 2 * time.Second

func take(t *testing.T, l jobstate.RateLimiter, k string, r jobstate.Rate, maxWait time.Duration) jobstate.Grant {
	t.Helper()
	g, err := l.Take(t.Context(), k, r, maxWait)
	if err != nil {
		t.Fatalf("Take %q %+v maxWait %v: %v", k, r, maxWait, err)
	}
	return g
}

// near fails t unless g is want, its Wait within slack of wait.
func near(t *testing.T, what string, g jobstate.Grant, ok bool, wait time.Duration) {
	t.Helper()
	if g.OK != ok || g.Wait < wait-slack || g.Wait > wait+slack {
		t.Errorf("%s: %+v, want OK %v and Wait %v (±%v)", what, g, ok, wait, slack)
	}
}

var hourly = jobstate.Rate{Interval: time.Hour, Burst: 1}

func rateFirstTake(t *testing.T, nl newLimiter) {
	l := nl(t)
	if g := take(t, l, key(t), hourly, 0); !g.OK || g.Wait != 0 {
		t.Errorf("the first take of a key: %+v, want granted at once", g)
	}
}

// rateSpaced: Burst 1, one an hour: the second take's turn is an hour
// off (refused with maxWait 0, granted with 2 h), the third's two.
func rateSpaced(t *testing.T, nl newLimiter) {
	l, k := nl(t), key(t)
	take(t, l, k, hourly, 0)
	near(t, "the second take with maxWait 0", take(t, l, k, hourly, 0), false, time.Hour)
	near(t, "the second take with maxWait 2h", take(t, l, k, hourly, 2*time.Hour), true, time.Hour)
	near(t, "the third take with maxWait 2h", take(t, l, k, hourly, 2*time.Hour), true, 2*time.Hour)
	near(t, "the fourth take with maxWait 2h", take(t, l, k, hourly, 2*time.Hour), false, 3*time.Hour)
	near(t, "another client's take", take(t, nl(t), k, hourly, 0), false, 3*time.Hour)
}

// rateBurst: Burst 3 lets three takes go at once, the fourth an Interval
// later.
func rateBurst(t *testing.T, nl newLimiter) {
	l, k := nl(t), key(t)
	r := jobstate.Rate{Interval: time.Hour, Burst: 3}
	for i := range 3 {
		if g := take(t, l, k, r, 0); !g.OK || g.Wait != 0 {
			t.Fatalf("take %d of a burst of 3: %+v, want granted at once", i+1, g)
		}
	}
	near(t, "the fourth take", take(t, l, k, r, 0), false, time.Hour)
}

// rateRefused: a refused take changes nothing: the next one is answered
// as if it had not been made.
func rateRefused(t *testing.T, nl newLimiter) {
	l, k := nl(t), key(t)
	take(t, l, k, hourly, 0)
	for range 3 {
		near(t, "a refused take", take(t, l, k, hourly, time.Minute), false, time.Hour)
	}
	near(t, "the take after three refused", take(t, l, k, hourly, 2*time.Hour), true, time.Hour)
}

// ratePause: a pause holds every take until it ends; an earlier one
// changes nothing; a pause of an absent key makes one.
func ratePause(t *testing.T, nl newLimiter) {
	l, k := nl(t), key(t)
	r := jobstate.Rate{Interval: time.Second, Burst: 5}
	pause := func(until time.Time) {
		t.Helper()
		if err := l.Pause(t.Context(), k, r, until); err != nil {
			t.Fatalf("Pause: %v", err)
		}
	}
	pause(time.Now().Add(time.Hour))
	near(t, "a take of a paused key", take(t, l, k, r, 0), false, time.Hour)
	pause(time.Now().Add(time.Minute))
	near(t, "a take after a shorter pause", take(t, l, k, r, 0), false, time.Hour)
	near(t, "a take waiting out the pause", take(t, l, k, r, 2*time.Hour), true, time.Hour)
	near(t, "the next take after it", take(t, l, k, r, 2*time.Hour), true, time.Hour)
}

func rateInvalid(t *testing.T, nl newLimiter) {
	l := nl(t)
	ctx := t.Context()
	for _, tc := range []struct {
		what, field string
		err         error
	}{
		{"an empty key", "rate key", func() error { _, err := l.Take(ctx, "", hourly, 0); return err }()},
		{"a key too long", "rate key", func() error { _, err := l.Take(ctx, strings.Repeat("k", jobstate.MaxKeySize+1), hourly, 0); return err }()},
		{"a zero Interval", "Rate.Interval", func() error { _, err := l.Take(ctx, key(t), jobstate.Rate{Burst: 1}, 0); return err }()},
		{"a zero Burst", "Rate.Burst", func() error { _, err := l.Take(ctx, key(t), jobstate.Rate{Interval: time.Second}, 0); return err }()},
		{"a negative maxWait", "maxWait", func() error { _, err := l.Take(ctx, key(t), hourly, -time.Second); return err }()},
		{"a pause too long", "until", l.Pause(ctx, key(t), hourly, time.Now().Add(jobstate.MaxRateWait+time.Hour))},
	} {
		if !errors.Is(tc.err, sqsloop.ErrInvalidArgument) || !strings.Contains(fmt.Sprint(tc.err), tc.field) {
			t.Errorf("%s: %v, want an error naming %s and wrapping sqsloop.ErrInvalidArgument", tc.what, tc.err, tc.field)
		}
	}
}

// rateRace: 8 clients (as 8 processes) take 10 turns each of one key at
// once, reserving up to an hour ahead: every take is granted a turn of
// its own, an Interval apart from the next (no two granted the same
// turn), and the 81st is refused. The turns are the store's clock plus
// Wait, read back on the test's, hence the slack.
func rateRace(t *testing.T, nl newLimiter) {
	const clients, takes = 8, 10
	r := jobstate.Rate{Interval: time.Minute, Burst: 1}
	k := key(t)
	var (
		mu    sync.Mutex
		turns []time.Time
		errs  []error
		wg    sync.WaitGroup
	)
	start := make(chan struct{})
	for range clients {
		l := nl(t)
		wg.Go(func() {
			<-start
			for range takes {
				g, err := l.Take(context.WithoutCancel(t.Context()), k, r, 2*time.Hour)
				at := time.Now().Add(g.Wait)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case !g.OK:
					errs = append(errs, fmt.Errorf("a take refused: %+v", g))
				default:
					turns = append(turns, at)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(turns, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(turns); i++ {
		if d := turns[i].Sub(turns[i-1]); d < r.Interval-slack {
			t.Fatalf("turns %d and %d are %v apart, want %v: two takes were granted one turn", i, i+1, d, r.Interval)
		}
	}
	// Measured from the first turn: the race itself may take seconds on a
	// loaded machine.
	first := turns[0]
	if span := turns[len(turns)-1].Sub(first); span < (clients*takes-1)*r.Interval-slack {
		t.Errorf("the last turn is %v after the first, want %v", span, (clients*takes-1)*r.Interval)
	}
	near(t, "the take after the race", take(t, nl(t), k, r, 0), false, time.Until(first.Add(clients*takes*r.Interval)))
}
