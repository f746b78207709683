package consumer

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// The consumer keeps its own handler pool and slot counter instead of
// golang.org/x/sync's errgroup (SetLimit) and semaphore: these benchmarks
// are why. One op is one message handed to a handler goroutine and its slot
// given back, 16 at a time, as the consumer does at concurrency 16.

// BenchmarkPoolSubmit: long-lived workers, a slot token per message.
func BenchmarkPoolSubmit(b *testing.B) {
	free := newSlots(16)
	var done sync.WaitGroup
	p := newPool(16, func(*sequence) { free.release(1); done.Done() })
	s := &sequence{}
	b.ReportAllocs()
	for b.Loop() {
		free.acquire(context.Background())
		done.Add(1)
		p.submit(s)
	}
	done.Wait()
	p.close()
	p.wait()
}

// BenchmarkErrgroupGo: a goroutine per message, errgroup.SetLimit(16).
func BenchmarkErrgroupGo(b *testing.B) {
	var g errgroup.Group
	g.SetLimit(16)
	b.ReportAllocs()
	for b.Loop() {
		g.Go(func() error { return nil })
	}
	_ = g.Wait()
}

// BenchmarkSemaphoreSlots: the same hand-off with a semaphore.Weighted for
// the slots instead of the token channel.
func BenchmarkSemaphoreSlots(b *testing.B) {
	sem := semaphore.NewWeighted(16)
	var done sync.WaitGroup
	p := newPool(16, func(*sequence) { sem.Release(1); done.Done() })
	s := &sequence{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := sem.Acquire(ctx, 1); err != nil {
			b.Fatal(err)
		}
		done.Add(1)
		p.submit(s)
	}
	done.Wait()
	p.close()
	p.wait()
}

// deep uses about 32 KiB of stack, as a handler that parses or encodes
// something does: a new goroutine grows its stack for it every time, a
// long-lived worker once.
//
//go:noinline
func deep(n int) byte {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return deep(n-1) + buf[n%len(buf)]
}

// BenchmarkPoolSubmitDeepStack and BenchmarkErrgroupGoDeepStack: the same
// with a handler that needs a 32 KiB stack.
func BenchmarkPoolSubmitDeepStack(b *testing.B) {
	free := newSlots(16)
	var done sync.WaitGroup
	p := newPool(16, func(*sequence) { deep(32); free.release(1); done.Done() })
	s := &sequence{}
	b.ReportAllocs()
	for b.Loop() {
		free.acquire(context.Background())
		done.Add(1)
		p.submit(s)
	}
	done.Wait()
	p.close()
	p.wait()
}

func BenchmarkErrgroupGoDeepStack(b *testing.B) {
	var g errgroup.Group
	g.SetLimit(16)
	b.ReportAllocs()
	for b.Loop() {
		g.Go(func() error { deep(32); return nil })
	}
	_ = g.Wait()
}
