package heartbeat_test

import (
	"context"
	"testing"

	"github.com/sqsloop/sqsloop/heartbeat"
)

func TestContext(t *testing.T) {
	h := heartbeat.New()
	ctx := heartbeat.NewContext(context.Background(), h)
	if got := heartbeat.FromContext(ctx); got != h {
		t.Fatalf("FromContext = %p, want %p", got, h)
	}
	type other struct{}
	child := context.WithValue(ctx, other{}, 1)
	if got := heartbeat.FromContext(child); got != h {
		t.Fatalf("FromContext(child) = %p, want the parent's %p", got, h)
	}
	if !h.LastBeat().IsZero() {
		t.Fatal("beat before Beat(ctx)")
	}
	heartbeat.Beat(child)
	if h.LastBeat().IsZero() {
		t.Fatal("Beat(ctx) did not beat the carried Heartbeat")
	}
}

func TestContextWithoutHeartbeat(t *testing.T) {
	ctx := context.Background()
	if got := heartbeat.FromContext(ctx); got != nil {
		t.Fatalf("FromContext(Background) = %p, want nil", got)
	}
	heartbeat.Beat(ctx) // no-op, no panic
	var nilCtx context.Context
	heartbeat.Beat(nilCtx)
	if got := heartbeat.FromContext(nilCtx); got != nil {
		t.Fatalf("FromContext(nil) = %p, want nil", got)
	}
	if a := testing.AllocsPerRun(100, func() { heartbeat.Beat(ctx) }); a != 0 {
		t.Fatalf("Beat(ctx without heartbeat) allocates %v, want 0", a)
	}
}

func TestNewContextNilHeartbeatMasksParent(t *testing.T) {
	h := heartbeat.New()
	parent := heartbeat.NewContext(context.Background(), h)
	ctx := heartbeat.NewContext(parent, nil)
	if got := heartbeat.FromContext(ctx); got != nil {
		t.Fatalf("FromContext = %p, want nil (masked)", got)
	}
	heartbeat.Beat(ctx)
	if !h.LastBeat().IsZero() {
		t.Fatal("Beat through a masking context beat the parent's Heartbeat")
	}
	var nilCtx context.Context
	if got := heartbeat.FromContext(heartbeat.NewContext(nilCtx, h)); got != h {
		t.Fatalf("NewContext(nil, h): FromContext = %p, want %p", got, h)
	}
}

func TestBeatContextDoesNotAllocate(t *testing.T) {
	ctx := heartbeat.NewContext(context.Background(), heartbeat.New())
	if a := testing.AllocsPerRun(100, func() { heartbeat.Beat(ctx) }); a != 0 {
		t.Fatalf("Beat(ctx) allocates %v times per call, want 0", a)
	}
}
