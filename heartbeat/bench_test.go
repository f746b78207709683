package heartbeat_test

import (
	"context"
	"testing"

	"github.com/sqsloop/sqsloop/heartbeat"
)

func BenchmarkBeat(b *testing.B) {
	h := heartbeat.New()
	b.ReportAllocs()
	for b.Loop() {
		h.Beat()
	}
}

// All goroutines beat ONE shared Heartbeat, as the goroutines of one
// handler would.
func BenchmarkBeatParallel(b *testing.B) {
	h := heartbeat.New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Beat()
		}
	})
}

func BenchmarkBeatContext(b *testing.B) {
	ctx := heartbeat.NewContext(context.Background(), heartbeat.New())
	b.ReportAllocs()
	for b.Loop() {
		heartbeat.Beat(ctx)
	}
}

// Beat interleaved with an observer, as under the lease owner.
func BenchmarkBeatObserved(b *testing.B) {
	h := heartbeat.New()
	b.ReportAllocs()
	for b.Loop() {
		h.Beat()
		_ = h.LastBeat()
	}
}
