package leasepage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/internal/rules"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// get serves one request of the page.
func get(t *testing.T, h http.Handler, url string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d", url, rec.Code)
	}
	return rec.Body.String()
}

type snapshot struct {
	InFlight []struct {
		MessageID    string      `json:"message_id"`
		State        string      `json:"state"`
		ReceiveCount int         `json:"receive_count"`
		SinceBeat    *float64    `json:"since_beat_seconds"`
		Extensions   int         `json:"extensions"`
		Beats        []time.Time `json:"beats"`
		DeadlineIn   float64     `json:"deadline_in_seconds"`
	} `json:"in_flight"`
	Outcomes   map[string]int64               `json:"outcomes"`
	LeasesLost map[string]int64               `json:"leases_lost"`
	Drain      struct{ State string }         `json:"drain"`
	Errors     []struct{ What, Error string } `json:"errors"`
}

// A consumer with two handlers on 2 s leases, one beating, one never: the
// page lists both in flight, the beating one with beats and extensions,
// the other with none and then its lease lost; never a body nor a receipt
// handle; once both return, nothing is in flight and the outcomes count.
func TestPageFollowsAConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := new(memmailbox.Broker)
		defer b.Close()
		q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "SECRET-BODY-beats"}, {Body: "SECRET-BODY-stuck"}})
		if err != nil {
			t.Fatal(err)
		}
		page := leasepage.New(leasepage.Options{})
		release := make(chan struct{})
		handles := make(chan string, 4)
		c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
			handles <- m.ReceiptHandle
			if strings.HasSuffix(m.Body, "beats") {
				for {
					heartbeat.Beat(ctx)
					select {
					case <-release:
						return nil
					case <-time.After(200 * time.Millisecond):
					}
				}
			}
			<-release
			return nil
		}, consumer.Config{Concurrency: 2, VisibilityTimeout: 2 * time.Second, WaitTime: time.Second,
			Visibility: visibility.Config{Interval: 500 * time.Millisecond}, Logger: discard, Observer: page})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(context.Background()) }()
		time.Sleep(3500 * time.Millisecond) // the stuck one's 2 s lease lapsed, the other was extended

		html := get(t, page, "/debug/sqsloop")
		var s snapshot
		if err := json.Unmarshal([]byte(get(t, page, "/debug/sqsloop?format=json")), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.InFlight) != 2 {
			t.Fatalf("in flight %+v, want 2", s.InFlight)
		}
		byID := map[string]int{}
		for i, l := range s.InFlight {
			byID[l.MessageID] = i
			if !strings.Contains(html, `data-message-id="`+l.MessageID+`"`) {
				t.Errorf("the HTML has no row for %s", l.MessageID)
			}
		}
		beating, stuck := s.InFlight[byID[res[0].MessageID]], s.InFlight[byID[res[1].MessageID]]
		if beating.State != "running" || beating.Extensions < 2 || len(beating.Beats) < 2 || beating.SinceBeat == nil || beating.DeadlineIn <= 0 {
			t.Errorf("the beating handler's lease: %+v", beating)
		}
		// The start of a handler counts as a beat (the extension, 2.25 s, is
		// longer than the visibility timeout): one extension, from its
		// start, then the lapse.
		if stuck.State != "lease_lost" || stuck.SinceBeat != nil || len(stuck.Beats) != 0 || stuck.Extensions != 1 {
			t.Errorf("the stuck handler's lease: %+v", stuck)
		}
		if s.LeasesLost["no_beats"] != 1 {
			t.Errorf("leases lost %v, want one no_beats", s.LeasesLost)
		}
		if n := strings.Count(html, `<line class="beat"`); n < 2 {
			t.Errorf("the bars mark %d beats, want the beating handler's (≥ 2)", n)
		}
		close(release)
		time.Sleep(time.Second)
		var seen []string
		for len(handles) > 0 {
			seen = append(seen, <-handles)
		}
		if len(seen) < 3 {
			t.Fatalf("%d receipt handles seen by the handlers, want both messages' and the stuck one's second", len(seen))
		}
		for _, out := range []string{html, get(t, page, "/debug/sqsloop?format=json"), get(t, page, "/debug/sqsloop")} {
			if strings.Contains(out, "SECRET-BODY") {
				t.Fatal("the page shows a message body")
			}
			for _, h := range seen {
				if strings.Contains(out, h) {
					t.Fatal("the page shows a receipt handle")
				}
			}
		}
		if err := json.Unmarshal([]byte(get(t, page, "/debug/sqsloop?format=json")), &s); err != nil {
			t.Fatal(err)
		}
		if len(s.InFlight) != 0 || s.Outcomes["acked"] != 2 || s.Outcomes["lease_lost"] != 1 {
			t.Errorf("after both returned (and the stuck one ran again, acked): in flight %+v, outcomes %v", s.InFlight, s.Outcomes)
		}
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		<-done
		if err := json.Unmarshal([]byte(get(t, page, "/debug/sqsloop?format=json")), &s); err != nil {
			t.Fatal(err)
		}
		if s.Drain.State != "ended" {
			t.Errorf("drain state %q after Run returned, want ended", s.Drain.State)
		}
	})
}

// An error quoting a receipt handle (as SQS's InvalidParameterValue does)
// is shown with the handle hidden.
func TestPageHidesReceiptHandlesInErrors(t *testing.T) {
	page := leasepage.New(leasepage.Options{})
	m := &sqsloop.Message{ID: "m-1", ReceiptHandle: "AQEBsecrethandle", ReceivedAt: time.Now(), VisibilityTimeout: time.Minute}
	page.Received(context.Background(), sqsloop.ReceiveEvent{Messages: []*sqsloop.Message{m}})
	page.Settled(sqsloop.SettleEvent{Op: sqsloop.OpChangeVisibility, Start: time.Now(), Entries: []sqsloop.SettleEntry{{
		Message: m, Kind: sqsloop.KindExtend, Err: errors.New("Value AQEBsecrethandle for parameter ReceiptHandle is invalid"),
	}}, Failed: 1})
	for _, url := range []string{"/", "/?format=json"} {
		out := get(t, page, url)
		if strings.Contains(out, "AQEBsecrethandle") || !strings.Contains(out, "[receipt handle]") {
			t.Errorf("GET %s shows the receipt handle, or not the error:\n%s", url, out)
		}
	}
	rec := httptest.NewRecorder()
	page.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", rec.Code)
	}
}

// Every outcome a handler run can end with is counted and shown, the last
// one added (dead_lettered) too, and every reason a lease can be lost for:
// the page keeps no table of its own that a new one could fall off (the
// one it reads, rules', is checked against the root's constants).
func TestPageCountsEveryOutcomeAndReason(t *testing.T) {
	page := leasepage.New(leasepage.Options{})
	var outcomes, reasons []string
	for _, o := range rules.Outcomes {
		m := &sqsloop.Message{ID: "m-" + o, ReceivedAt: time.Now(), VisibilityTimeout: time.Minute}
		page.Received(context.Background(), sqsloop.ReceiveEvent{Messages: []*sqsloop.Message{m}})
		page.ProcessEnd(page.ProcessStart(context.Background(), m), m, sqsloop.ProcessEvent{Outcome: o})
		outcomes = append(outcomes, o)
	}
	for _, r := range rules.LeaseLostReasons {
		m := &sqsloop.Message{ID: "m-" + r}
		page.LeaseLost(m, sqsloop.LeaseLostEvent{Reason: r, Err: errors.New("lost")})
		reasons = append(reasons, r)
	}
	if !slices.Contains(outcomes, sqsloop.OutcomeDeadLettered) {
		t.Fatalf("outcomes %v lack dead_lettered", outcomes)
	}
	var s snapshot
	if err := json.Unmarshal([]byte(get(t, page, "/?format=json")), &s); err != nil {
		t.Fatal(err)
	}
	html := get(t, page, "/")
	for _, name := range outcomes {
		if s.Outcomes[name] != 1 || !strings.Contains(html, name+" <b>1</b>") {
			t.Errorf("outcome %s: JSON counts %d (want 1), or the HTML lacks it: %v", name, s.Outcomes[name], s.Outcomes)
		}
	}
	for _, name := range reasons {
		if s.LeasesLost[name] != 1 || !strings.Contains(html, name+" <b>1</b>") {
			t.Errorf("lost reason %s: JSON counts %d (want 1), or the HTML lacks it: %v", name, s.LeasesLost[name], s.LeasesLost)
		}
	}
}

// A batch call that fails as a whole (every entry with its error) is one
// of the last errors, not ten: the error before it is still shown, and a
// receipt handle of any entry quoted in it is hidden.
func TestPageNotesAFailedCallOnce(t *testing.T) {
	page := leasepage.New(leasepage.Options{})
	page.Received(context.Background(), sqsloop.ReceiveEvent{Err: errors.New("earlier receive failure")})
	var entries []sqsloop.SettleEntry
	for i := range sqsloop.MaxBatchSize {
		m := &sqsloop.Message{ID: fmt.Sprint("m-", i), ReceiptHandle: fmt.Sprint("AQEBhandle", i), ReceivedAt: time.Now(), VisibilityTimeout: time.Minute}
		page.Received(context.Background(), sqsloop.ReceiveEvent{Messages: []*sqsloop.Message{m}})
		entries = append(entries, sqsloop.SettleEntry{Message: m, Kind: sqsloop.KindExtend})
	}
	callErr := errors.New("connection reset while sending AQEBhandle7")
	for i := range entries {
		entries[i].Err = callErr
	}
	page.Settled(sqsloop.SettleEvent{Op: sqsloop.OpChangeVisibility, Start: time.Now(), Entries: entries, Failed: len(entries), Err: callErr})
	var s snapshot
	if err := json.Unmarshal([]byte(get(t, page, "/?format=json")), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Errors) != 2 || s.Errors[1].Error != "earlier receive failure" {
		t.Fatalf("last errors %+v, want the failed call once and the receive failure before it", s.Errors)
	}
	if got := s.Errors[0].Error; strings.Contains(got, "AQEBhandle") || !strings.Contains(got, "[receipt handle]") {
		t.Errorf("the failed call's error reads %q: want its receipt handle hidden", got)
	}
}

// The HTML page reloads every Refresh rounded up to whole seconds (HTML's
// refresh counts seconds), so half a second gives 1 s, not the default.
func TestPageRefresh(t *testing.T) {
	for _, c := range []struct {
		refresh time.Duration
		want    string
	}{{0, "2"}, {500 * time.Millisecond, "1"}, {1500 * time.Millisecond, "2"}, {5 * time.Second, "5"}} {
		html := get(t, leasepage.New(leasepage.Options{Refresh: c.refresh}), "/")
		if !strings.Contains(html, `http-equiv="refresh" content="`+c.want+`"`) {
			t.Errorf("Refresh %v: the page does not reload every %s s", c.refresh, c.want)
		}
	}
}
