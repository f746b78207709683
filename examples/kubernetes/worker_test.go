// Package kubernetes holds worker.yaml, a queue worker on Kubernetes
// (docs/fleet.md), and a test of its numbers.
package kubernetes

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/consumer"
)

// worker.yaml's grace covers the preStop hook's longest wait, the drain
// budget and what follows it (consumer.DrainGrace, the flush of at least
// 1 s, the exit); the ScaledObject reads the metric the worker exports
// with the latency target that makes it, from the port the worker serves.
func TestWorkerManifest(t *testing.T) {
	b, err := os.ReadFile("worker.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := string(b)
	num := func(re string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(y)
		if m == nil {
			t.Fatalf("worker.yaml has no %s", re)
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	grace := time.Duration(num(`terminationGracePeriodSeconds: (\d+)`)) * time.Second
	preStop := time.Duration(num(`name: PRESTOP_MAX, value: "(\d+)"`)) * time.Second
	m := regexp.MustCompile(`--shutdown-timeout=(\S+)`).FindStringSubmatch(y)
	if m == nil {
		t.Fatal("worker.yaml sets no --shutdown-timeout")
	}
	budget, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if need := preStop + budget + consumer.DrainGrace + time.Second + 3*time.Second; grace < need {
		t.Errorf("terminationGracePeriodSeconds %v < preStop %v + --shutdown-timeout %v + DrainGrace %v + flush 1s + exit 3s = %v",
			grace, preStop, budget, consumer.DrainGrace, need)
	}
	for _, want := range []string{
		"--metrics-addr=:9464", "prometheus.io/port: \"9464\"", "--latency-target=",
		"max(sqsloop_consumers_recommended{", `'"state":"drained"'`, "http://127.0.0.1:9464/drain",
	} {
		if !strings.Contains(y, want) {
			t.Errorf("worker.yaml lacks %q", want)
		}
	}
}
