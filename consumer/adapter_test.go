package consumer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Wrap builds the handler as New does: recovery outermost, then the
// middleware in order, so a panic in a middleware is recovered too.
func TestWrapOrderAndRecovery(t *testing.T) {
	var order []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				order = append(order, name)
				return next(ctx, m)
			}
		}
	}
	h := Wrap(func(context.Context, *sqsloop.Message) error {
		order = append(order, "handler")
		panic("boom")
	}, quiet, mw("first"), mw("second"))
	err := h(t.Context(), &sqsloop.Message{ID: "m"})
	if !IsPanic(err) || fmt.Sprint(order) != "[first second handler]" {
		t.Fatalf("err %v, order %v: want a recovered panic after first, second, handler", err, order)
	}
	panicky := Wrap(func(context.Context, *sqsloop.Message) error { return nil }, nil, func(Handler) Handler {
		return func(context.Context, *sqsloop.Message) error { panic(errors.New("in a middleware")) }
	})
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
		err     error
		count   int
		backoff func(int) time.Duration
		want    time.Duration
	}{
		{fail, 3, double, 6 * time.Second},
		{NackAfter(fail, 42*time.Second), 3, double, 42 * time.Second},
		{fmt.Errorf("wrapped: %w", NackAfter(fail, time.Minute)), 1, double, time.Minute},
		{fail, 1, nil, time.Second},     // the default: 1 s at the first receive
		{fail, 4, nil, 8 * time.Second}, // doubling
		{fail, 100, nil, 5 * time.Minute},
	} {
		if got := RetryDelay(c.err, c.count, c.backoff); got != c.want {
			t.Errorf("RetryDelay(%v, %d) = %v, want %v", c.err, c.count, got, c.want)
		}
	}
}
