package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
	"github.com/sqsloop/sqsloop/leasepage"
	"github.com/sqsloop/sqsloop/lifecycle"
	"github.com/sqsloop/sqsloop/memmailbox"
)

// The workers page merges the lease pages of the workers it is given and
// drains and resumes each through its drain endpoint; for a database it
// lists the messages in flight and their receivers.
func TestWorkersPage(t *testing.T) {
	// A worker: a consumer holding two messages, its lease page and drain
	// endpoint on one server, as `sqsloop exec --metrics-addr` serves them.
	b := new(memmailbox.Broker)
	defer b.Close()
	q, err := b.CreateQueue(sqsloop.QueueSpec{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(t.Context(), []sqsloop.OutgoingMessage{{Body: "a"}, {Body: "b"}}); err != nil {
		t.Fatal(err)
	}
	page := leasepage.New(leasepage.Options{})
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, err := consumer.New(q, func(ctx context.Context, m *sqsloop.Message) error {
		started.Done()
		<-release
		return nil
	}, consumer.Config{Concurrency: 2, WaitTime: time.Second, Logger: quiet, Observer: page})
	if err != nil {
		t.Fatal(err)
	}
	group := &lifecycle.LoopGroup{Signals: []os.Signal{}, Logger: quiet}
	if err := group.Add("work", c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- group.Run(ctx) }()
	defer func() {
		close(release)
		cancel()
		if err := <-ran; err != nil {
			t.Error(err)
		}
	}()
	started.Wait()
	mux := http.NewServeMux()
	mux.Handle("/debug/sqsloop", page)
	mux.Handle(lifecycle.DrainPath, group.DrainHandler())
	mux.Handle(lifecycle.ResumePath, group.DrainHandler())
	worker := httptest.NewServer(mux)
	defer worker.Close()

	f := newDBFixture(t, 3, Options{Workers: []Worker{{Name: "w1", LeasePage: worker.URL + "/debug/sqsloop"}}})
	held, err := f.dlq.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, VisibilityTimeout: time.Minute})
	if err != nil || len(held) != 1 {
		t.Fatalf("receive: %v, %d", err, len(held))
	}
	br := newBrowser(t, f.srv.URL)
	_, body := br.get("/workers")
	for _, want := range []string{`class="drain-state">running<`, "<td>jobs-dlq</td><td>" + held[0].ID + "</td>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the workers page lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, "<td>running</td>"); n != 2 {
		t.Errorf("the workers page shows %d of the worker's leases running, want its 2:\n%s", n, body)
	}
	if strings.Contains(body, held[0].ReceiptHandle) {
		t.Error("the workers page shows a receipt handle")
	}
	token := br.token()
	if code, _ := br.post("/workers/drain", url.Values{"csrf": {token}, "worker": {"0"}, "op": {"drain"}}); code != http.StatusSeeOther {
		t.Fatalf("drain: %d", code)
	}
	if paused, _ := c.Paused(); !paused {
		t.Error("the worker is not paused after the console drained it")
	}
	if _, body := br.get("/workers"); !strings.Contains(body, `class="drain-state">draining<`) {
		t.Errorf("the workers page does not show the worker draining:\n%s", body)
	}
	if code, _ := br.post("/workers/drain", url.Values{"csrf": {token}, "worker": {"0"}, "op": {"resume"}}); code != http.StatusSeeOther {
		t.Fatalf("resume: %d", code)
	}
	if paused, _ := c.Paused(); paused {
		t.Error("the worker is still paused after the console resumed it")
	}
}
