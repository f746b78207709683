package consumer

import (
	"context"
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// A Consumer's handler is its middleware in order, Middleware[0] first,
// around the handler.
func TestMiddlewareOrder(t *testing.T) {
	var trace []string
	mw := func(name string) sqsloop.Middleware {
		return func(next sqsloop.Handler) sqsloop.Handler {
			return func(ctx context.Context, m *sqsloop.Message) error {
				trace = append(trace, name)
				return next(ctx, m)
			}
		}
	}
	c, err := New(&memmailbox.Queue{}, func(context.Context, *sqsloop.Message) error { trace = append(trace, "h"); return nil },
		Config{Middleware: []sqsloop.Middleware{mw("a"), mw("b")}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.handler(context.Background(), &sqsloop.Message{})
	if got := strings.Join(trace, ","); got != "a,b,h" {
		t.Fatalf("order %s, want a,b,h", got)
	}
}
