package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// app is a small HTTP application `sqsloop http` POSTs to: it records each
// request and answers as its handler says.
type app struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []appRequest
}

// appRequest is what the application saw of one request.
type appRequest struct {
	header    http.Header
	body      string
	cancelled bool // its context ended before the handler was done
	finished  bool // the handler ran to its end
}

// newApp starts the application; handle answers each request and reports
// whether the request's context ended first.
func newApp(t *testing.T, handle func(w http.ResponseWriter, r *http.Request) (cancelled bool)) *app {
	a := &app{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		i := len(a.requests)
		a.requests = append(a.requests, appRequest{header: r.Header.Clone(), body: string(body)})
		a.mu.Unlock()
		cancelled := handle(w, r)
		a.mu.Lock()
		a.requests[i].cancelled, a.requests[i].finished = cancelled, !cancelled
		a.mu.Unlock()
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *app) seen() []appRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.requests)
}

// streamFor writes a line and flushes it every 0.5 s for d, unless the
// request's context ends first (it reports true then).
func streamFor(w http.ResponseWriter, r *http.Request, d time.Duration) bool {
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	end := time.After(d)
	for {
		select {
		case <-r.Context().Done():
			return true
		case <-end:
			return false
		case <-tick.C:
			_, _ = io.WriteString(w, "working\n")
			w.(http.Flusher).Flush()
		}
	}
}

// silentFor answers nothing for d, then status, unless the request's
// context ends first (it reports true then).
func silentFor(w http.ResponseWriter, r *http.Request, d time.Duration, status int) bool {
	select {
	case <-r.Context().Done():
		return true
	case <-time.After(d):
		w.WriteHeader(status)
		return false
	}
}

// httpArgs is `sqsloop http` on queue with flags, POSTing to a.
func httpArgs(a *app, queue []string, flags ...string) []string {
	args := append([]string{"http", "--to", a.srv.URL + "/work"}, queue...)
	return append(args, flags...)
}

// queueNameOf is the name sqsloop gives the queue the flags name.
func queueNameOf(queue []string) string {
	for i, f := range queue {
		switch f {
		case "--queue":
			return queue[i+1]
		case "--queue-url":
			return queueName(queue[i+1])
		}
	}
	return ""
}

// An application that streams its answer (a chunk every 0.5 s for 6 s,
// three times the 2 s visibility timeout) gets the message once, with
// sqsd's headers, and its 200 acks it.
func TestHTTPStreamingAckedOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 2)
		id := strings.TrimSpace(b.run(t, "", append([]string{"send", `{"job": 1}`, "--attr", "color=blue", "--attr", "n.o=7"}, queue...)...))
		a := newApp(t, func(w http.ResponseWriter, r *http.Request) bool { return streamFor(w, r, 6*time.Second) })
		before := time.Now()
		p := b.start(t, "", httpArgs(a, queue, fastWorker...)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("http: %v; stderr:\n%s", err, p.stderr.String())
		}
		reqs := a.seen()
		if len(reqs) != 1 || !reqs[0].finished {
			t.Fatalf("requests = %+v, want one that ran to its end; stderr:\n%s", reqs, p.stderr.String())
		}
		h := reqs[0].header
		for name, want := range map[string]string{
			"X-Aws-Sqsd-Msgid":         id,
			"X-Aws-Sqsd-Receive-Count": "1",
			"X-Aws-Sqsd-Queue":         queueNameOf(queue),
			"X-Aws-Sqsd-Attr-color":    "blue",
			"X-Aws-Sqsd-Attr-n.o":      "7",
			"Content-Type":             "application/json",
			"User-Agent":               userAgent,
		} {
			if got := h.Get(name); got != want {
				t.Errorf("header %s = %q, want %q", name, got, want)
			}
		}
		first, err := time.Parse(time.RFC3339, h.Get("X-Aws-Sqsd-First-Received-At"))
		if err != nil || first.Before(before.Add(-time.Minute)) || first.After(time.Now().Add(time.Minute)) {
			t.Errorf("X-Aws-Sqsd-First-Received-At = %q (%v), want the time of the receive in RFC 3339", h.Get("X-Aws-Sqsd-First-Received-At"), err)
		}
		if reqs[0].body != `{"job": 1}` {
			t.Errorf("body = %q, want the message's", reqs[0].body)
		}
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("after the request: %+v, want every count 0 (acked)", got)
		}
	})
}

// An application that answers nothing for 6 s but POSTs its beat URL every
// 0.5 s keeps the message, and its 200 acks it.
func TestHTTPBeatURLKeepsLease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 2)
		b.run(t, "", append([]string{"send", "job"}, queue...)...)
		a := newApp(t, func(w http.ResponseWriter, r *http.Request) bool {
			beatURL := r.Header.Get("X-Sqsloop-Beat-Url")
			for range 12 {
				select {
				case <-r.Context().Done():
					return true
				case <-time.After(500 * time.Millisecond):
				}
				resp, err := http.Post(beatURL, "", nil)
				if err != nil {
					t.Errorf("beat: %v", err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					t.Errorf("beat: %s, want 204 No Content", resp.Status)
				}
			}
			w.WriteHeader(http.StatusOK)
			return false
		})
		p := b.start(t, "", httpArgs(a, queue, fastWorker...)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("http: %v; stderr:\n%s", err, p.stderr.String())
		}
		if reqs := a.seen(); len(reqs) != 1 || !reqs[0].finished {
			t.Errorf("requests = %d (first finished: %v), want one that ran to its end; stderr:\n%s", len(reqs), len(reqs) > 0 && reqs[0].finished, p.stderr.String())
		}
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("after the request: %+v, want every count 0 (acked)", got)
		}
	})
}

// An application silent for 6 s loses the lease: its request is cancelled,
// the message is POSTed again, and after the queue's max receive count (2)
// it is in the dead-letter queue.
func TestHTTPSilentLosesLease(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 2)
		b.run(t, "", append([]string{"send", "job"}, queue...)...)
		a := newApp(t, func(w http.ResponseWriter, r *http.Request) bool {
			return silentFor(w, r, 6*time.Second, http.StatusOK)
		})
		p := b.start(t, "", httpArgs(a, queue, fastWorker...)...)
		if err := p.wait(t); err != nil {
			t.Fatalf("http: %v; stderr:\n%s", err, p.stderr.String())
		}
		reqs := a.seen()
		var receives []string
		for _, r := range reqs {
			receives = append(receives, r.header.Get("X-Aws-Sqsd-Receive-Count"))
			if !r.cancelled {
				t.Errorf("request of receive %s was not cancelled when its lease was lost", r.header.Get("X-Aws-Sqsd-Receive-Count"))
			}
		}
		if want := []string{"1", "2"}; !slices.Equal(receives, want) {
			t.Errorf("receive counts POSTed = %q, want %q; stderr:\n%s", receives, want, p.stderr.String())
		}
		if got, want := b.counts(t, queue), (counts{DeadLettered: 1}); got != want {
			t.Errorf("after the requests: %+v, want %+v", got, want)
		}
	})
}

// A status other than 200 nacks: the message is POSTed again until the
// queue's max receive count (2) puts it in the dead-letter queue; with
// --poison-status 422, a 422 puts it there on its first delivery.
func TestHTTPErrorStatus(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		for _, c := range []struct {
			status   int
			flags    []string
			requests int
		}{
			{http.StatusInternalServerError, nil, 2},
			{http.StatusUnprocessableEntity, []string{"--poison-status", "422"}, 1},
		} {
			queue, _ := b.create(t, 2)
			b.run(t, "", append([]string{"send", "job"}, queue...)...)
			a := newApp(t, func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(c.status)
				return false
			})
			p := b.start(t, "", httpArgs(a, queue, append(slices.Clone(fastWorker), c.flags...)...)...)
			if err := p.wait(t); err != nil {
				t.Fatalf("http: %v; stderr:\n%s", err, p.stderr.String())
			}
			if got := len(a.seen()); got != c.requests {
				t.Errorf("status %d %v: %d requests, want %d", c.status, c.flags, got, c.requests)
			}
			if got, want := b.counts(t, queue), (counts{DeadLettered: 1}); got != want {
				t.Errorf("status %d %v: %+v, want %+v", c.status, c.flags, got, want)
			}
		}
	})
}

// SIGTERM to `sqsloop http` drains: the requests in flight finish, their
// messages are acked, and it exits 0.
func TestHTTPSIGTERMDrains(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 5)
		b.run(t, "", append([]string{"send", "a", "b", "c"}, queue...)...)
		a := newApp(t, func(w http.ResponseWriter, r *http.Request) bool { return streamFor(w, r, 3*time.Second) })
		p := b.start(t, "", httpArgs(a, queue, "--visibility-timeout", "2s", "--wait-time", "1s", "--concurrency", "3", "--shutdown-timeout", "30s")...)
		waitFor(t, "3 requests in flight", func() bool { return len(a.seen()) == 3 })
		p.signal(t, syscall.SIGTERM)
		if err := p.wait(t); err != nil {
			t.Fatalf("http after SIGTERM: %v, want exit status 0; stderr:\n%s", err, p.stderr.String())
		}
		for _, r := range a.seen() {
			if !r.finished {
				t.Errorf("request for %q did not finish: %+v", r.body, r)
			}
		}
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("after the drain: %+v, want every count 0 (all acked)", got)
		}
	})
}

// sqsloop http receives nothing until the application accepts connections,
// and SIGTERM while it waits is a clean stop (exit 0), the message untouched.
func TestHTTPWaitsForApp(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 5)
		b.run(t, "", append([]string{"send", "job"}, queue...)...)
		down := httptest.NewServer(http.NotFoundHandler())
		down.Close() // its port now refuses connections
		p := b.start(t, "", append([]string{"http", "--to", down.URL + "/work", "--wait-time", "1s"}, queue...)...)
		waitFor(t, "sqsloop to wait for the application", func() bool {
			return strings.Contains(p.stderr.String(), "waiting for the application")
		})
		p.signal(t, syscall.SIGTERM)
		if err := p.wait(t); err != nil {
			t.Fatalf("http after SIGTERM: %v, want exit status 0; stderr:\n%s", err, p.stderr.String())
		}
		if got, want := b.counts(t, queue), (counts{Visible: 1}); got != want {
			t.Errorf("after the stop: %+v, want %+v (never received)", got, want)
		}
	})
}
