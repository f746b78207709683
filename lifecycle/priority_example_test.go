package lifecycle_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// jobs stands in for a consumer: once Shutdown is called, its in-flight
// work ends when finished is closed.
type jobs struct {
	finished, stopping, done chan struct{}
}

func newJobs(finished chan struct{}) *jobs {
	return &jobs{finished: finished, stopping: make(chan struct{}), done: make(chan struct{})}
}

func (j *jobs) Run(ctx context.Context) error {
	defer close(j.done)
	<-j.stopping
	<-j.finished
	return nil
}

func (j *jobs) Shutdown(ctx context.Context) error {
	close(j.stopping)
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Priority shutdown under one budget: the platform's grace is set once
// (GracePeriod), a background loop of short jobs gets a shorter budget and
// is done first, the critical loop gets the rest, and the server of the
// probes (LoopOption.Last) stops after both, so /readyz says 503 and /livez 200 until
// then. Stats (and the log) say which loop finished when.
func ExampleLoopOption() {
	group := &lifecycle.LoopGroup{
		GracePeriod: 30 * time.Second, // ECS stopTimeout, Kubernetes terminationGracePeriodSeconds
		Signals:     []os.Signal{},    // this example ends the group through Run's context
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	short, long := make(chan struct{}), make(chan struct{})
	close(short)                                                                                                  // short jobs: done as soon as asked
	_ = group.Add("orders", newJobs(long))                                                                        // critical: long jobs
	_ = group.Add("thumbnails", newJobs(short), lifecycle.LoopOption{Background: 5 * time.Second})                // done first
	probes := httptest.NewUnstartedServer(group.HealthHandler())                                                  // /livez, /readyz
	_ = group.Add("http", lifecycle.HTTPServer(probes.Config, probes.Listener), lifecycle.LoopOption{Last: true}) // stopped last

	ctx, shutdown := context.WithCancel(context.Background())
	go func() {
		shutdown() // as SIGTERM does
		for group.Stats().State != lifecycle.StateStopping {
			time.Sleep(time.Millisecond)
		}
		for _, path := range []string{lifecycle.ReadyzPath, lifecycle.LivezPath} {
			resp, err := http.Get("http://" + probes.Listener.Addr().String() + path)
			if err == nil {
				fmt.Println("while draining:", path, resp.StatusCode)
				resp.Body.Close()
			}
		}
		close(long) // the long jobs finish
	}()
	fmt.Println("Run:", group.Run(ctx))
	loops := group.Stats().Loops
	slices.SortStableFunc(loops, func(a, b lifecycle.LoopStats) int { return int(a.Returned - b.Returned) })
	for _, l := range loops {
		fmt.Printf("%s (%s, budget %v) returned\n", l.Name, l.Class, l.Budget)
	}
	// Output:
	// while draining: /readyz 503
	// while draining: /livez 200
	// Run: <nil>
	// thumbnails (background, budget 5s) returned
	// orders (critical, budget 27s) returned
	// http (last, budget 27s) returned
}
