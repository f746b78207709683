package main

import (
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// --metrics-addr serves the consumer's metrics for Prometheus, the health
// probes and the lease page while sqsloop exec runs.
func TestMetricsAddr(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, _ := b.create(t, 5)
		b.run(t, "", append([]string{"send", "a", "b"}, queue...)...)
		args := append([]string{"exec", "--metrics-addr", "127.0.0.1:0", "--wait-time", "1s"}, queue...)
		p := b.start(t, "", append(args, "--", "sh", "-c", "cat >/dev/null")...)
		serving := regexp.MustCompile(`sqsloop: serving (http://127\.0\.0\.1:[0-9]+)`)
		var base string
		waitFor(t, "sqsloop to log the address it serves", func() bool {
			m := serving.FindStringSubmatch(p.stderr.String())
			if m != nil {
				base = m[1]
			}
			return m != nil
		})
		get := func(path string) (int, string) {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		waitFor(t, "/metrics to count 2 messages consumed", func() bool {
			_, body := get("/metrics")
			return consumed(body) == 2
		})
		for _, path := range []string{"/livez", "/readyz", "/debug/sqsloop"} {
			if code, body := get(path); code != http.StatusOK {
				t.Errorf("GET %s: %d, want 200: %s", path, code, body)
			}
		}
		p.signal(t, syscall.SIGTERM)
		if err := p.wait(t); err != nil {
			t.Fatalf("exec after SIGTERM: %v; stderr:\n%s", err, p.stderr.String())
		}
	})
}

// consumed sums the samples of messaging.client.consumed.messages in a
// Prometheus text exposition.
func consumed(exposition string) float64 {
	var sum float64
	for l := range strings.Lines(exposition) {
		if !strings.HasPrefix(l, "messaging_client_consumed_messages") {
			continue
		}
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}
