package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/examples/internal/worker/workertest"
	"github.com/sqsloop/sqsloop/lifecycle"
)

// With -metrics-addr the running job serves its health probes and the lease
// page listing the jobs in flight (as JSON too), and the program's own
// handlers. Wall clock: the server is real; every wait is on a condition,
// bounded.
func TestRunServesTheProbesAndTheLeasePage(t *testing.T) {
	o := Options{Dir: workertest.Files(t, 24, "f"), Slow: 100 * time.Millisecond, Chunks: 40, Concurrency: 8, Progress: time.Second, MetricsAddr: "127.0.0.1:0"}
	base, stop := workertest.Serve(t, func(ctx context.Context, group *lifecycle.LoopGroup, out io.Writer, log *slog.Logger) error {
		_, err := runMemory(ctx, t, o, group, out, log)
		return err
	})
	var page struct {
		InFlight []struct {
			MessageID string `json:"message_id"`
		} `json:"in_flight"`
	}
	for deadline := time.Now().Add(time.Minute); len(page.InFlight) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lease page listed no job in flight within a minute")
		}
		if err := json.Unmarshal([]byte(workertest.Fetch(t, base+LeasesPath+"?format=json")), &page); err != nil {
			t.Fatal(err)
		}
	}
	if html := workertest.Fetch(t, base+LeasesPath); !strings.Contains(html, page.InFlight[0].MessageID) {
		t.Errorf("the HTML page lacks the in-flight job %s", page.InFlight[0].MessageID)
	}
	for _, probe := range []string{lifecycle.LivezPath, lifecycle.ReadyzPath} {
		if got := workertest.Fetch(t, base+probe); got != "ok\n" {
			t.Errorf("%s = %q", probe, got)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
