package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type (
	handler    = sqsloop.Handler
	middleware = sqsloop.Middleware
)

// Wrap builds the handler as the consumer and sqslambda run it: recovery
// outermost, then the middleware in order, so a panic in a middleware is
// recovered too.
func TestWrapOrderAndRecovery(t *testing.T) {
	var order []string
	mw := func(name string) middleware {
		return func(next handler) handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				order = append(order, name)
				return next(ctx, m)
			}
		}
	}
	h := Wrap(handler(func(context.Context, *sqsloop.Message) error {
		order = append(order, "handler")
		panic("boom")
	}), quiet, []middleware{mw("first"), mw("second")})
	err := h(t.Context(), &sqsloop.Message{ID: "m"})
	if !IsPanic(err) || fmt.Sprint(order) != "[first second handler]" {
		t.Fatalf("err %v, order %v: want a recovered panic after first, second, handler", err, order)
	}
	panicky := Wrap(handler(func(context.Context, *sqsloop.Message) error { return nil }), quiet, []middleware{func(handler) handler {
		return func(context.Context, *sqsloop.Message) error { panic(errors.New("in a middleware")) }
	}})
	if err := panicky(t.Context(), &sqsloop.Message{ID: "m"}); !IsPanic(err) {
		t.Fatalf("middleware panic: err %v, want a recovered panic", err)
	}
	if IsPanic(errors.New("plain")) || IsPanic(nil) {
		t.Fatal("IsPanic is true for an error that is no panic")
	}
}

func TestRetryDelay(t *testing.T) {
	fail := errors.New("fail")
	double := func(n int) time.Duration { return time.Duration(2*n) * time.Second }
	for _, c := range []struct {
		err   error
		count int
		want  time.Duration
	}{
		{fail, 3, 6 * time.Second},
		{sqsloop.NackAfter(fail, 42*time.Second), 3, 42 * time.Second},
		{fmt.Errorf("wrapped: %w", sqsloop.NackAfter(fail, time.Minute)), 1, time.Minute},
	} {
		if got := RetryDelay(c.err, c.count, double); got != c.want {
			t.Errorf("RetryDelay(%v, %d) = %v, want %v", c.err, c.count, got, c.want)
		}
	}
}

func TestRecoverMakesAPanicError(t *testing.T) {
	h := Wrap(handler(func(context.Context, *sqsloop.Message) error { panic(errors.New("inner")) }), quiet, []middleware(nil))
	err := h(context.Background(), &sqsloop.Message{ID: "m"})
	var pe *panicError
	if !errors.As(err, &pe) || len(pe.stack) == 0 || pe.Unwrap() == nil {
		t.Fatalf("err = %v, want a *panicError with a stack", err)
	}
}
