package console

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// sampler reads every queue's counts every interval while the console
// runs, keeping an hour of them for the charts, and the latest list for
// the pages.
type sampler struct {
	interval time.Duration
	reading  sync.Mutex // held while the list is read: a page and the sampler share one read

	mu   sync.Mutex
	last []queueInfo
	at   time.Time // of last
	err  error
	hist map[string][]sample // by queue, oldest first, the last hour
}

// sample is one queue's counts at one time.
type sample struct {
	at    time.Time
	depth int
	acked int64 // -1: not known
}

func newSampler(interval time.Duration) *sampler {
	return &sampler{interval: interval, hist: map[string][]sample{}}
}

// run samples at once and then every interval, until ctx ends.
func (s *sampler) run(ctx context.Context, b backend) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.reading.Lock()
		qs, err := b.queues(ctx)
		if ctx.Err() == nil {
			s.put(qs, err, true)
		}
		s.reading.Unlock()
		if ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// put records a list read now: the pages' latest, and with record a point
// of each queue's chart.
func (s *sampler) put(qs []queueInfo, err error, record bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
	if err != nil {
		return
	}
	s.last, s.at = qs, now
	if !record {
		return
	}
	seen := make(map[string]bool, len(qs))
	for _, q := range qs {
		seen[q.Name] = true
		h := append(s.hist[q.Name], sample{at: now, depth: q.depth(), acked: q.Acked})
		for len(h) > 0 && now.Sub(h[0].at) > chartWindow {
			h = h[1:]
		}
		s.hist[q.Name] = h
	}
	for name := range s.hist {
		if !seen[name] {
			delete(s.hist, name) // deleted queues
		}
	}
}

// list returns the queue list, read again when the latest is older than
// maxAge.
func (s *sampler) list(ctx context.Context, b backend, maxAge time.Duration) ([]queueInfo, time.Time, error) {
	fresh := func() ([]queueInfo, time.Time, bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.last, s.at, s.last != nil && time.Since(s.at) <= maxAge
	}
	if last, at, ok := fresh(); ok {
		return last, at, nil
	}
	s.reading.Lock()
	defer s.reading.Unlock()
	if last, at, ok := fresh(); ok {
		return last, at, nil // read while this call waited
	}
	qs, err := b.queues(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	s.put(qs, nil, false)
	return qs, time.Now(), nil
}

// chart is one queue's depth and throughput over the last hour, drawn as
// two lines of an SVG viewBox chartW × chartH (y down).
type chart struct {
	Depth, Rate       string // polyline points
	MaxDepth, MaxRate string // the scales' tops, in words
	RateName          string
	Points            int
}

const (
	chartW = 240
	chartH = 40
)

// chart returns the queue's chart; zero Points when it has fewer than two
// samples.
func (s *sampler) chart(queue string) chart {
	s.mu.Lock()
	h := append([]sample(nil), s.hist[queue]...)
	s.mu.Unlock()
	c := chart{Points: len(h), RateName: "acked/min"}
	if len(h) < 2 {
		return c
	}
	end := h[len(h)-1].at
	x := func(t time.Time) float64 { return chartW * (1 - float64(end.Sub(t))/float64(chartWindow)) }
	maxDepth := 1
	rates := make([]float64, len(h))
	maxRate := 1.0
	for i, p := range h {
		maxDepth = max(maxDepth, p.depth)
		if i == 0 {
			continue
		}
		mins := p.at.Sub(h[i-1].at).Minutes()
		if mins <= 0 {
			continue
		}
		if p.acked >= 0 && h[i-1].acked >= 0 {
			rates[i] = float64(max(p.acked-h[i-1].acked, 0)) / mins
		} else {
			c.RateName = "drained/min" // SQS reports no deletes: the depth's fall
			rates[i] = float64(max(h[i-1].depth-p.depth, 0)) / mins
		}
		maxRate = max(maxRate, rates[i])
	}
	var d, r strings.Builder
	for i, p := range h {
		fmt.Fprintf(&d, "%.1f,%.1f ", x(p.at), chartH-1-float64(chartH-2)*float64(p.depth)/float64(maxDepth))
		if i > 0 {
			fmt.Fprintf(&r, "%.1f,%.1f ", x(p.at), chartH-1-float64(chartH-2)*rates[i]/maxRate)
		}
	}
	c.Depth, c.Rate = strings.TrimSpace(d.String()), strings.TrimSpace(r.String())
	c.MaxDepth, c.MaxRate = fmt.Sprint(maxDepth), fmt.Sprintf("%.0f", maxRate)
	return c
}
