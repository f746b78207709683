package lifecycle_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop/lifecycle"
)

// queueWorker stands in for a consumer in drain mode: paused, it finishes
// its one job in flight and holds nothing.
type queueWorker struct {
	mu       sync.Mutex
	paused   bool
	inFlight int
}

func (w *queueWorker) Run(ctx context.Context) error { <-ctx.Done(); return nil }
func (w *queueWorker) Pause()                        { w.mu.Lock(); w.paused = true; w.mu.Unlock() }
func (w *queueWorker) Resume()                       { w.mu.Lock(); w.paused = false; w.mu.Unlock() }
func (w *queueWorker) Paused() (bool, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.paused, w.inFlight
}

// Drain mode without exit, as an operator uses it (kubectl port-forward,
// then curl -X POST localhost:8082/drain): the process stops taking work,
// finishes what is in flight, stays up and not ready, until POST /resume.
func ExampleLoopGroup_DrainHandler() {
	group := &lifecycle.LoopGroup{Signals: []os.Signal{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	orders := &queueWorker{inFlight: 1}
	_ = group.Add("orders", orders)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- group.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	for group.Ready() != nil { // Run has started
		time.Sleep(time.Millisecond)
	}

	mux := http.NewServeMux()
	mux.Handle(lifecycle.DrainPath, group.DrainHandler()) // loopback clients only
	mux.Handle(lifecycle.ResumePath, group.DrainHandler())
	srv := httptest.NewServer(mux) // on 127.0.0.1
	defer srv.Close()
	call := func(method, path string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%s %s: %d %s", method, path, resp.StatusCode, body)
	}
	call("POST", lifecycle.DrainPath)
	orders.mu.Lock()
	orders.inFlight = 0 // its job finished
	orders.mu.Unlock()
	call("GET", lifecycle.DrainPath)
	fmt.Println("ready:", group.Ready())
	call("POST", lifecycle.ResumePath)
	// Output:
	// POST /drain: 202 {"state":"draining","loops":[{"name":"orders","state":"draining","in_flight":1}]}
	// GET /drain: 200 {"state":"drained","loops":[{"name":"orders","state":"drained","in_flight":0}]}
	// ready: lifecycle: loop "orders" paused (drain mode)
	// POST /resume: 200 {"state":"running","loops":[{"name":"orders","state":"running","in_flight":0}]}
}
