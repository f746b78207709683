package leasepage_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/leasepage"
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
