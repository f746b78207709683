package leasepage_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/memmailbox"
	"github.com/sqsloop/sqsloop/otelsqsloop"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// Mounting the page on a debug server, beside OpenTelemetry.
func Example() {
	broker := new(memmailbox.Broker)
	defer broker.Close()
	q, _ := broker.CreateQueue(sqsloop.QueueSpec{Name: "jobs"})
	page := leasepage.New(leasepage.Options{Title: "jobs"})
	otel, _ := otelsqsloop.New(otelsqsloop.Config{Queue: "jobs"})
	_, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error { return nil },
		consumer.Config{Observer: sqsloop.Observers(otel, page), Logger: discard})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/sqsloop", page)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/sqsloop")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Header.Get("Content-Type"), strings.Contains(string(body), "nothing in flight"))
	// Output: text/html; charset=utf-8 true
}
