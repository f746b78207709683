package consumer

import (
	"context"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
)

func TestMiddlewareOrder(t *testing.T) {
	var trace []string
	mw := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				trace = append(trace, name)
				return next(ctx, m)
			}
		}
	}
	h := chain(func(context.Context, *sqsloop.Message) error { trace = append(trace, "h"); return nil }, mw("a"), mw("b"))
	h(context.Background(), &sqsloop.Message{})
	if got := strings.Join(trace, ","); got != "a,b,h" {
		t.Fatalf("order %s, want a,b,h", got)
	}
}
