package sqsloop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestExponentialBackoff(t *testing.T) {
	f := sqsloop.ExponentialBackoff(time.Second, 10*time.Second)
	for count, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 50: 10 * time.Second} {
		if got := f(count); got != want {
			t.Errorf("f(%d) = %v, want %v", count, got, want)
		}
	}
	if got := sqsloop.ExponentialBackoff(0, 0)(20); got != 5*time.Minute {
		t.Errorf("the default back-off at receive 20 = %v, want 5m0s", got)
	}
}

// Permanent marks an error that errors.Is matches with ErrPermanent, keeps
// its chain, and names its class "permanent" for error.type.
func TestPermanent(t *testing.T) {
	if sqsloop.Permanent(nil) != nil {
		t.Error("Permanent(nil) is not nil")
	}
	cause := errors.New("unknown customer")
	err := fmt.Errorf("charge: %w", sqsloop.Permanent(cause))
	if !errors.Is(err, sqsloop.ErrPermanent) || !errors.Is(err, cause) {
		t.Errorf("%v: want it to match ErrPermanent and its cause", err)
	}
	var typed interface{ ErrorType() string }
	if !errors.As(err, &typed) || typed.ErrorType() != "permanent" {
		t.Errorf("%v: want an ErrorType of \"permanent\" in its chain", err)
	}
	if errors.Is(cause, sqsloop.ErrPermanent) {
		t.Error("a plain error matches ErrPermanent")
	}
}

// NackAfter keeps its error's chain and carries its delay where the
// runtimes read it.
func TestNackAfter(t *testing.T) {
	if sqsloop.NackAfter(nil, time.Second) != nil {
		t.Error("NackAfter(nil) is not nil")
	}
	fail := errors.New("not yet")
	err := fmt.Errorf("wrapped: %w", sqsloop.NackAfter(fail, 42*time.Second))
	if !errors.Is(err, fail) {
		t.Errorf("%v does not match its cause", err)
	}
	var nd interface{ NackDelay() time.Duration }
	if !errors.As(err, &nd) || nd.NackDelay() != 42*time.Second {
		t.Errorf("%v: want a NackDelay of 42s in its chain", err)
	}
}

// fixedLease is a Lease of a test's own.
type fixedLease struct{ ext time.Duration }

func (l *fixedLease) Extension() time.Duration { return l.ext }
func (l *fixedLease) SetExtension(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("d %v: %w", d, sqsloop.ErrInvalidArgument)
	}
	l.ext = d
	return nil
}

// A context carries a Lease to its handler; SetExtension reaches it and
// does nothing without one.
func TestLeaseContext(t *testing.T) {
	ctx := context.Background()
	if sqsloop.LeaseFromContext(ctx) != nil {
		t.Error("LeaseFromContext of a bare context is not nil")
	}
	if err := sqsloop.SetExtension(ctx, time.Minute); err != nil {
		t.Errorf("SetExtension without a lease = %v, want nil", err)
	}
	l := &fixedLease{ext: 30 * time.Second}
	ctx = sqsloop.NewLeaseContext(ctx, l)
	if err := sqsloop.SetExtension(ctx, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := sqsloop.LeaseFromContext(ctx).Extension(); got != 5*time.Minute {
		t.Errorf("Extension after SetExtension(5m) = %v", got)
	}
	if err := sqsloop.SetExtension(ctx, -1); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("SetExtension(-1) = %v, want the lease's error", err)
	}
}
