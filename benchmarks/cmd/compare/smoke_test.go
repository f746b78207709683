package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
	"github.com/sqsloop/sqsloop/integration"
)

// TestEveryImplementationConsumesAll runs each implementation once on a
// small queue of the real server the benchmark uses (fauxqs, unless
// SQS_ENDPOINT names another) and checks what the table relies on: every
// message handled exactly once and deleted, and the wire count equal to the
// SDK's count.
func TestEveryImplementationConsumesAll(t *testing.T) {
	if testing.Short() {
		t.Skip("needs an SQS-compatible server")
	}
	ctx := context.Background()
	e, err := newEnv(ctx, "../../../integration", t.Logf)
	if errors.Is(err, integration.ErrNoServer) {
		t.Skipf("no server: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.close() })
	sc := scenario{name: "smoke", messages: 60, concurrency: 4,
		visibility: 30 * time.Second, interval: 10 * time.Second, extension: 30 * time.Second, timeout: time.Minute}
	for _, im := range impls() {
		t.Run(im.name, func(t *testing.T) {
			r := runOnce(ctx, e, sc, im, 1, options{logLevel: slog.LevelWarn})
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.countCheck != nil {
				t.Error(r.countCheck)
			}
			if r.distinct != 60 || r.duplicates != 0 || r.unknown != 0 {
				t.Errorf("distinct %d, duplicates %d, unknown %d; want 60, 0, 0", r.distinct, r.duplicates, r.unknown)
			}
			if r.left.total() != 0 {
				t.Errorf("left in the queue: %+v", r.left)
			}
			if r.requests[wire.ReceiveMessage] == 0 || r.requests[wire.DeleteMessage]+r.requests[wire.DeleteMessageBatch] == 0 {
				t.Errorf("requests %v: want receives and deletes counted", r.requests)
			}
		})
	}
}
