package consumer

import (
	"context"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
)

// The consumer keeps its own handler pool and intake instead of
// golang.org/x/sync's errgroup (SetLimit) and semaphore: these benchmarks
// are why. One op is one message handed to a handler goroutine and its unit
// given back, 16 at a time, as the consumer does at concurrency 16.

// takeOne takes one unit from in, waiting for room.
func takeOne(in *intake) {
	for n, _ := in.take(0, 1, true); n == 0; n, _ = in.take(0, 1, true) {
		<-in.room
	}
}

// BenchmarkPoolSubmit: long-lived workers, a unit of the intake per
// message.
func BenchmarkPoolSubmit(b *testing.B) {
	in := newIntake(16)
	var done sync.WaitGroup
	p := newPool(16, 16, func(*sequence) { in.release(0, 1); done.Done() })
	s := &sequence{}
	b.ReportAllocs()
	for b.Loop() {
		takeOne(in)
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

// BenchmarkSemaphoreSlots: the same hand-off with a semaphore.Weighted
// instead of the intake (which also changes its limit as the receive-ahead
// depth does, which a semaphore cannot).
func BenchmarkSemaphoreSlots(b *testing.B) {
	sem := semaphore.NewWeighted(16)
	var done sync.WaitGroup
	p := newPool(16, 16, func(*sequence) { sem.Release(1); done.Done() })
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
	in := newIntake(16)
	var done sync.WaitGroup
	p := newPool(16, 16, func(*sequence) { deep(32); in.release(0, 1); done.Done() })
	s := &sequence{}
	b.ReportAllocs()
	for b.Loop() {
		takeOne(in)
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
