package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/producer"
)

// senders is how many batches are sent at once: a batch waits for its
// slowest message, so the next ones go out meanwhile (the producer
// coalesces them into calls of 10).
const senders = 4

// produce sends jobs until ctx ends: what the harness's ENQUEUE tokens ask
// (PRODUCER_PACING=harness, fixed rate), or at the fixed rate paced here,
// or to keep the queue TARGET_DEPTH deep.
func produce(ctx context.Context, s settings, p *producer.Producer, t *telemetry) {
	batches := make(chan int, senders)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() { sendBatches(ctx, s, p, t, batches) })
	}
	switch {
	case s.mode == "depth-target":
		t.targetRate.Store(0)
		keepDepth(ctx, s, t, batches)
	case s.pacing == "harness":
		readTokens(ctx, batches)
	default:
		pace(ctx, s, t, batches)
	}
	close(batches)
	wg.Wait()
}

// sendBatches sends a batch of n jobs for each n received, until batches
// is closed. A batch begun is finished after ctx ends, so that what was
// committed is counted.
func sendBatches(ctx context.Context, s settings, p *producer.Producer, t *telemetry, batches <-chan int) {
	ctx = context.WithoutCancel(ctx)
	padding := strings.Repeat("x", max(s.payload-48, 0))
	var seq int64
	for n := range batches {
		msgs := make([]sqsloop.OutgoingMessage, n)
		for i := range msgs {
			seq++
			msgs[i].Body = fmt.Sprintf(`{"seq":%d,"instance":%d,"padding":%q}`, seq, s.instance, padding)
		}
		res, err := p.SendAll(ctx, msgs)
		sent := 0
		for _, r := range res {
			if r.MessageID != "" {
				sent++
			}
		}
		t.enqueued.Add(int64(sent))
		if s.mode == "depth-target" {
			t.sending.Add(-int64(n))
		}
		if err != nil {
			t.sendFailures.Add(int64(n - sent))
			logf("send: %d of %d not sent: %v", n-sent, n, err)
		}
	}
}

// readTokens passes on the harness's "ENQUEUE <n>" lines until ctx ends
// or standard input closes.
func readTokens(ctx context.Context, batches chan<- int) {
	lines := make(chan int)
	go func() { // blocked in Read until the harness closes stdin or the process exits
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "ENQUEUE" {
				if n, err := strconv.Atoi(f[1]); err == nil && n > 0 {
					select {
					case lines <- n:
					case <-ctx.Done():
						return
					}
				}
			}
		}
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-lines:
			if !ok {
				<-ctx.Done()
				return
			}
			select {
			case batches <- n:
			case <-ctx.Done():
				return
			}
		}
	}
}

// pace credits PRODUCER_RATE jobs per second of wall-clock time elapsed
// (the contract's normative pacing), every PRODUCER_BATCH_MS, sending the
// credit in batches of at most PRODUCER_BATCH_MAX.
func pace(ctx context.Context, s settings, t *telemetry, batches chan<- int) {
	period := time.Duration(s.batchMS) * time.Millisecond
	tick := time.NewTicker(period)
	defer tick.Stop()
	credit, last := 0.0, time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rate := readRate(s)
		t.targetRate.Store(int64(rate))
		now := time.Now()
		credit += float64(rate) * now.Sub(last).Seconds()
		last = now
		for credit >= 1 {
			n := min(int(credit), s.batchMax)
			credit -= float64(n)
			select {
			case batches <- n:
			case <-ctx.Done():
				return
			}
		}
	}
}

// readRate is PRODUCER_RATE, or the rate PRODUCER_RATE_CONTROL_FILE holds
// now (the harness writes it for high-load phases).
func readRate(s settings) int {
	if s.rateFile == "" {
		return s.rate
	}
	b, err := os.ReadFile(s.rateFile)
	if err != nil {
		return s.rate
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return s.rate
	}
	return max(int(v), 0)
}

// keepDepth tops the queue up to TARGET_DEPTH visible messages every
// PRODUCER_BATCH_MS, in batches of up to PRODUCER_BATCH_MAX: the depth as
// last read (every 200 ms) plus what was sent since and what is on its
// way.
func keepDepth(ctx context.Context, s settings, t *telemetry, batches chan<- int) {
	tick := time.NewTicker(time.Duration(s.batchMS) * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		want := int64(s.targetDepth) - t.depth.Load() - (t.enqueued.Load() - t.enqueuedAtDepth.Load()) - t.sending.Load()
		for ; want > 0; want -= int64(s.batchMax) {
			n := int(min(want, int64(s.batchMax)))
			t.sending.Add(int64(n))
			select {
			case batches <- n:
			case <-ctx.Done():
				return
			}
		}
	}
}
