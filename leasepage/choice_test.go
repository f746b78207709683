package leasepage_test

import (
	"context"
	"encoding/json"
	"errors"
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
// call reported it, and the queue's counts and the scaling signal of the
// last read of the queue that succeeded (a failed one is among the
// errors); before them, dashes and a null.
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
			InFlight             int       `json:"in_flight"`
			DeadLetters          *int      `json:"dead_letters"`
			BacklogPerConsumer   float64   `json:"backlog_per_consumer"`
			RecommendedConsumers int       `json:"recommended_consumers"`
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
	page.QueueRead(sqsloop.QueueEvent{Start: at, Duration: time.Second, Backlog: 120, InFlight: 3, BacklogPerConsumer: 40, RecommendedConsumers: 13})
	page.Settled(sqsloop.SettleEvent{Op: sqsloop.OpDelete, Extension: 18 * time.Second, BeatGap: 6 * time.Second})
	html = read()
	if s.Lease.Extension != 18 || s.Lease.BeatGap != 6 {
		t.Errorf("lease %+v, want 18 s from gaps of 6 s", s.Lease)
	}
	if s.Scaling == nil || !s.Scaling.ReadAt.Equal(at.Add(time.Second)) || s.Scaling.Backlog != 120 || s.Scaling.InFlight != 3 || s.Scaling.DeadLetters != nil ||
		s.Scaling.BacklogPerConsumer != 40 || s.Scaling.RecommendedConsumers != 13 {
		t.Errorf("scaling %+v, want 120 visible, 3 in flight, no dead-letter queue, 40 per consumer, 13 recommended", s.Scaling)
	}
	for _, want := range []string{`<b id="extension">18s</b>`, `<b id="beat-gap">6s</b>`, `<b id="backlog">120</b>`, `<b id="queue-in-flight">3</b>`,
		`<b id="dead-letters">–</b>`, `<b id="backlog-per-consumer">40.0</b>`, `<b id="recommended">13</b>`} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML lacks %s", want)
		}
	}

	page.QueueRead(sqsloop.QueueEvent{Start: at.Add(5 * time.Second), Backlog: 90, DeadLetters: 2, DeadLettersRead: true, BacklogPerConsumer: 30, RecommendedConsumers: 7})
	page.QueueRead(sqsloop.QueueEvent{Start: at.Add(10 * time.Second), Err: errors.New("throttled")}) // a failed read keeps the last one
	html = read()
	if s.Scaling == nil || s.Scaling.Backlog != 90 || s.Scaling.RecommendedConsumers != 7 || s.Scaling.DeadLetters == nil || *s.Scaling.DeadLetters != 2 {
		t.Errorf("scaling %+v, want 90 visible, 2 dead letters and 7 consumers", s.Scaling)
	}
	for _, want := range []string{`<b id="recommended">7</b>`, `<b id="dead-letters">2</b>`, "throttled"} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML lacks %s", want)
		}
	}
}

// A consumer with the adaptive extension and a latency target, the page as
// its Observer: the page follows the lease owner's choice (the queue's
// 30 s visibility timeout at first, 18 s once 16 beat gaps were watched
// for 30 s) and the scaling signal of the queue it reads every 5 s (100
// messages, 2 handlers of 20 s, a 10 s latency target), in the JSON and
// the HTML alike.
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
				RecommendedConsumers int     `json:"recommended_consumers"`
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
		// The read of 15 s: 98 visible, 2 in flight, no handler returned
		// yet: a slot per message, (2 + 98) / 2 = 50 consumers.
		if s.Scaling == nil || s.Scaling.Backlog != 98 || s.Scaling.RecommendedConsumers != 50 ||
			!strings.Contains(html, `<b id="backlog">98</b>`) || !strings.Contains(html, `<b id="recommended">50</b>`) {
			t.Errorf("16 s in: scaling %+v, want the read of 15 s (98 visible) and 50 consumers recommended, in the JSON and the HTML", s.Scaling)
		}

		time.Sleep(51 * time.Second)
		s, html = read()
		if s.Lease.Extension != 33 || s.Lease.BeatGap != 6 || !strings.Contains(html, `<b id="extension">33s</b>`) || !strings.Contains(html, `<b id="beat-gap">6s</b>`) {
			t.Errorf("67 s in: lease %+v, want 33 s (beats seen at every 6 s look need no more than the floor), in the JSON and the HTML", s.Lease)
		}
		if s.Scaling == nil || s.Scaling.RecommendedConsumers < 2 ||
			!strings.Contains(html, fmt.Sprintf(`<b id="backlog-per-consumer">%.1f</b>`, s.Scaling.BacklogPerConsumer)) {
			t.Fatalf("67 s in: scaling %+v, want a recommendation above the 1 consumer running", s.Scaling)
		}
		// 2 handlers of 20 s cannot empty about 90 messages in 10 s: about
		// (2 + 90 × 20 s / 10 s) / 2 = 91 consumers.
		if n := s.Scaling.RecommendedConsumers; n < 80 || n > 100 || !strings.Contains(html, fmt.Sprintf(`<b id="recommended">%d</b>`, n)) {
			t.Errorf("67 s in: %d consumers recommended, want about 91, in the JSON and the HTML", n)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-done
	})
}
