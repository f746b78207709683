package lifecycle

import (
	"context"
	"net/http/httptest"
	"testing"
)

// runningGroup starts a group of n loops and returns it with its stop func.
func runningGroup(b *testing.B, n int) (*LoopGroup, func()) {
	b.Helper()
	g := &LoopGroup{}
	loops := make([]*blockingLoop, n)
	for i := range loops {
		loops[i] = newBlockingLoop()
		_ = g.Add(string(rune('a'+i)), loops[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := runAsync(ctx, g)
	for _, l := range loops {
		<-l.started
	}
	return g, func() { cancel(); <-res }
}

func BenchmarkReady(b *testing.B) {
	g, stop := runningGroup(b, 4)
	defer stop()
	for b.Loop() {
		if g.Ready() != nil {
			b.Fatal("not ready")
		}
	}
}

func BenchmarkHealthHandlerReadyz(b *testing.B) {
	g, stop := runningGroup(b, 4)
	defer stop()
	h := g.HealthHandler()
	req := httptest.NewRequest("GET", ReadyzPath, nil)
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkRunAndShutdown(b *testing.B) {
	for b.Loop() {
		_, stop := runningGroup(b, 4)
		stop()
	}
}
