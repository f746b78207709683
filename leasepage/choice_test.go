package leasepage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// The page shows the lease owner's choice of extension, as the last batch
// call reported it, and the scaling signal of the last receive that
// carried one; before them, dashes and a null.
func TestPageShowsTheLeaseChoiceAndTheScalingSignal(t *testing.T) {
	page := leasepage.New(leasepage.Options{})
	var s struct {
		Lease struct {
			Extension float64 `json:"extension_seconds"`
			BeatGap   float64 `json:"beat_gap_p99_seconds"`
		} `json:"lease"`
		Scaling *struct {
			ReadAt               time.Time `json:"read_at"`
			Backlog              int       `json:"backlog"`
			BacklogPerConsumer   float64   `json:"backlog_per_consumer"`
			RecommendedConsumers *int      `json:"recommended_consumers"`
		} `json:"scaling"`
	}
	read := func() string {
		t.Helper()
		if err := json.Unmarshal([]byte(get(t, page, "/?format=json")), &s); err != nil {
			t.Fatal(err)
		}
		return get(t, page, "/")
	}
	html := read()
	if s.Scaling != nil || s.Lease.Extension != 0 || !strings.Contains(html, `<b id="extension">–</b>`) || strings.Contains(html, `id="backlog"`) {
		t.Fatalf("before any event: %+v\n%s", s, html)
	}

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	page.Received(context.Background(), sqsloop.ReceiveEvent{QueueReadAt: at, Backlog: 120, BacklogPerConsumer: 40})
	page.Settled(sqsloop.SettleEvent{Op: sqsloop.OpDelete, Extension: 18 * time.Second, BeatGap: 6 * time.Second})
	html = read()
	if s.Lease.Extension != 18 || s.Lease.BeatGap != 6 {
		t.Errorf("lease %+v, want 18 s from gaps of 6 s", s.Lease)
	}
	if s.Scaling == nil || !s.Scaling.ReadAt.Equal(at) || s.Scaling.Backlog != 120 || s.Scaling.BacklogPerConsumer != 40 || s.Scaling.RecommendedConsumers != nil {
		t.Errorf("scaling %+v, want 120 visible, 40 per consumer, no recommendation", s.Scaling)
	}
	for _, want := range []string{`<b id="extension">18s</b>`, `<b id="beat-gap">6s</b>`, `<b id="backlog">120</b>`, `<b id="backlog-per-consumer">40.0</b>`, `<b id="recommended">–</b>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML lacks %s", want)
		}
	}

	page.Received(context.Background(), sqsloop.ReceiveEvent{}) // a receive before the next read keeps the last one
	page.Received(context.Background(), sqsloop.ReceiveEvent{QueueReadAt: at.Add(30 * time.Second), Backlog: 90, BacklogPerConsumer: 30, RecommendedConsumers: 7})
	html = read()
	if s.Scaling == nil || s.Scaling.Backlog != 90 || s.Scaling.RecommendedConsumers == nil || *s.Scaling.RecommendedConsumers != 7 {
		t.Errorf("scaling %+v, want 90 visible and 7 consumers", s.Scaling)
	}
	if !strings.Contains(html, `<b id="recommended">7</b>`) {
		t.Error("the HTML lacks the 7 consumers recommended")
	}
}

// A consumer with the adaptive extension and a latency target, the page as
// its Observer: the page follows the lease owner's choice (the queue's
// 30 s visibility timeout at first, 18 s once 16 beat gaps were watched
// for 30 s) and the scaling signal of the queue it reads (100 messages,
// 2 handlers of 20 s, a 10 s latency target), in the JSON and the HTML
// alike.
func TestPageFollowsAConsumersLeaseChoiceAndScalingSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			batch := make([]sqsloop.OutgoingMessage, sqsloop.MaxBatchSize)
			for i := range batch {
				batch[i].Body = "job"
			}
			if _, err := q.Send(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
		}
		page := leasepage.New(leasepage.Options{})
		c, err := consumer.New(q, func(ctx context.Context, _ *sqsloop.Message) error {
			for range 20 {
				heartbeat.Beat(ctx)
				time.Sleep(time.Second)
			}
			return nil
		}, consumer.Config{Concurrency: 2, WaitTime: time.Second, LatencyTarget: 10 * time.Second, Logger: discard, Observer: page})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()

		type state struct {
			Lease struct {
				Extension float64 `json:"extension_seconds"`
				BeatGap   float64 `json:"beat_gap_p99_seconds"`
			} `json:"lease"`
			Scaling *struct {
				Backlog              int     `json:"backlog"`
				BacklogPerConsumer   float64 `json:"backlog_per_consumer"`
				RecommendedConsumers *int    `json:"recommended_consumers"`
			} `json:"scaling"`
		}
		read := func() (state, string) {
			t.Helper()
			var s state
			if err := json.Unmarshal([]byte(get(t, page, "/?format=json")), &s); err != nil {
				t.Fatal(err)
			}
			return s, get(t, page, "/")
		}

		time.Sleep(16 * time.Second) // the first extensions went out 15 s in, as the 30 s deadlines neared
		s, html := read()
		if s.Lease.Extension != 33 || !strings.Contains(html, `<b id="extension">33s</b>`) {
			t.Errorf("16 s in: extension %v s, want the queue's visibility timeout and half an Interval, 33 s, in the JSON and the HTML", s.Lease.Extension)
		}
		if s.Scaling == nil || s.Scaling.Backlog < 90 || s.Scaling.RecommendedConsumers != nil ||
			!strings.Contains(html, fmt.Sprintf(`<b id="backlog">%d</b>`, s.Scaling.Backlog)) || !strings.Contains(html, `<b id="recommended">–</b>`) {
			t.Errorf("16 s in: scaling %+v, want the start-up read (about 100 visible) and no recommendation before a handler returned", s.Scaling)
		}

		time.Sleep(51 * time.Second)
		s, html = read()
		if s.Lease.Extension != 33 || s.Lease.BeatGap != 6 || !strings.Contains(html, `<b id="extension">33s</b>`) || !strings.Contains(html, `<b id="beat-gap">6s</b>`) {
			t.Errorf("67 s in: lease %+v, want 33 s (beats seen at every 6 s look need no more than the floor), in the JSON and the HTML", s.Lease)
		}
		if s.Scaling == nil || s.Scaling.RecommendedConsumers == nil || *s.Scaling.RecommendedConsumers < 2 ||
			!strings.Contains(html, fmt.Sprintf(`<b id="backlog-per-consumer">%.1f</b>`, s.Scaling.BacklogPerConsumer)) {
			t.Fatalf("67 s in: scaling %+v, want a recommendation above the 1 consumer running", s.Scaling)
		}
		// 2 handlers of 20 s cannot empty about 90 messages in 10 s: about
		// (2 + 90 × 20 s / 10 s) / 2 = 91 consumers.
		if n := *s.Scaling.RecommendedConsumers; n < 80 || n > 100 || !strings.Contains(html, fmt.Sprintf(`<b id="recommended">%d</b>`, n)) {
			t.Errorf("67 s in: %d consumers recommended, want about 91, in the JSON and the HTML", n)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-done
	})
}
