package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// sqsClient returns a client of the SQS server SQS_ENDPOINT names; without
// one the test skips (fails under CI=true), saying how to get one.
func sqsClient(t testing.TB) *sqs.Client {
	t.Helper()
	env, err := harness.ReadEnv(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if env.Endpoint == "" {
		const how = "SQS_ENDPOINT is unset: no SQS server for the console's SQS tests; " +
			"./scripts/test.sh starts one, or run `(cd integration && go run ./cmd/sqsserver -dir .)` and export what it prints"
		if os.Getenv("CI") == "true" {
			t.Fatal(how)
		}
		t.Skip("\n*** SKIPPING: " + how)
	}
	client, err := sqsmailbox.NewClient(t.Context(), env.Endpoint, harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// recordingClient records every receipt handle the server hands out.
type recordingClient struct {
	SQSAPI
	mu      sync.Mutex
	handles []string
}

func (c *recordingClient) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out, err := c.SQSAPI.ReceiveMessage(ctx, in, opts...)
	if err == nil {
		c.mu.Lock()
		for _, m := range out.Messages {
			c.handles = append(c.handles, aws.ToString(m.ReceiptHandle))
		}
		c.mu.Unlock()
	}
	return out, err
}

// sqsFixture is a console of a queue and its DLQ of their own on the SQS
// server.
type sqsFixture struct {
	client      *recordingClient
	name, dlq   string
	mb, dlqMB   sqsloop.Mailbox
	c           *Console
	srv         *httptest.Server
	log         *syncBuffer
	pages       []string // every page the browser read
	pagesMu     sync.Mutex
	b           *browser
	dlqMessages int
}

func newSQSFixture(t *testing.T, n int) *sqsFixture {
	t.Helper()
	ctx := t.Context()
	raw := sqsClient(t)
	f := &sqsFixture{client: &recordingClient{SQSAPI: raw}, log: &syncBuffer{}}
	f.name = fmt.Sprintf("console-%d-%s", time.Now().UnixNano()%1e9, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")))
	f.name = f.name[:min(len(f.name), 70)]
	f.dlq = f.name + "-dlq"
	mb, err := sqsmailbox.CreateQueue(ctx, raw, sqsloop.QueueSpec{Name: f.name, MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	f.mb = mb
	if f.dlqMB, err = mb.OpenDeadLetterQueue(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, q := range []sqsloop.Mailbox{f.mb, f.dlqMB} {
			u := q.(*sqsmailbox.Mailbox).QueueURL()
			_, _ = raw.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
			q.Close()
		}
	})
	sendTiers(t, f.dlqMB, n)
	f.c, err = NewSQS(f.client, f.name, Options{Hold: 20 * time.Second, Logger: slog.New(slog.NewTextHandler(f.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.c.Close() })
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		f.c.ServeHTTP(rec, r)
		f.pagesMu.Lock()
		f.pages = append(f.pages, rec.Body.String())
		f.pagesMu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(f.srv.Close)
	f.b = newBrowser(t, f.srv.URL)
	return f
}

// drain receives every message of mb (the test's queue, each held a
// minute) and returns the bodies, each message once. A receive whose
// answer was lost on the way (a fauxqs 2.4.1 bug: under parallel receives
// on kept-alive connections an answer now and then breaks off; the SDK
// retries) leaves its messages in flight until their hold ends: it waits for them while the
// queue has more in flight than it holds, a hold and 10 s at most since a
// receive last brought a new message.
func drain(t *testing.T, mb sqsloop.Mailbox) []string {
	t.Helper()
	const hold = time.Minute
	seen := map[string]string{}
	var idle time.Time
	for {
		msgs, err := mb.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: hold, WaitTime: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		fresh := false
		for _, m := range msgs {
			if _, ok := seen[m.ID]; !ok {
				fresh = true
			}
			seen[m.ID] = m.Body
		}
		if fresh {
			idle = time.Time{}
			continue
		}
		if idle.IsZero() {
			idle = time.Now()
		}
		a, err := mb.(sqsloop.AttributesReader).QueueAttributes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if (len(msgs) == 0 && a.ApproximateMessagesInFlight <= len(seen)) || time.Since(idle) > hold+10*time.Second {
			var bodies []string
			for _, b := range seen {
				bodies = append(bodies, b)
			}
			return bodies
		}
	}
}

// A dead-letter queue is looked at on the first visit, without asking;
// its source queue, which has a redrive policy, only once asked. The
// redrive of all matching moves exactly those, every other message is given
// back, and no receipt handle shows in a page or the log.
func TestSQSLookAndRedrive(t *testing.T) {
	f := newSQSFixture(t, 150)
	b := f.b
	code, body := b.get("/queue?name=" + f.dlq)
	if code != 200 || !strings.Contains(body, `id="scan"`) || strings.Contains(body, `id="look-warning"`) {
		t.Fatalf("the DLQ's first page: %d, want a look under way and no warning:\n%s", code, body)
	}
	look, _ := f.c.jobs.get(1)
	if look == nil || b.waitJob(1).Done != 150 || look.view().Kind != actLook {
		t.Fatalf("the look: %+v, want 150 read", b.waitJob(1))
	}
	if _, body := b.get("/queue/count?name=" + f.dlq + "&attr=tier%3Dgold"); !strings.Contains(body, `"n":50,`) {
		t.Fatalf("count of gold: %s, want 50", body)
	}
	_, body = b.get("/queue?name=" + f.name)
	if !strings.Contains(body, `id="look-warning"`) || !strings.Contains(body, "after 3 receives") {
		t.Errorf("the source queue's page does not warn before its first look:\n%s", body)
	}
	if f.c.b.(*sqsBackend).snapshot(f.name) != nil {
		t.Error("the console looked at a queue with a redrive policy unasked")
	}

	code, loc := b.post("/act", url.Values{"csrf": {b.token()}, "queue": {f.dlq}, "action": {"redrive"}, "to": {f.name},
		"rate": {"500"}, "attr": {"tier=gold"}, "planned": {"50"}})
	if code != http.StatusSeeOther {
		t.Fatalf("POST /act: %d", code)
	}
	id, _ := strconv.Atoi(loc[strings.Index(loc, "id=")+3:])
	if v := b.waitJob(id); v.State != jobDone || v.Done != 50 || v.InBoth != 0 {
		t.Errorf("the redrive: %+v, want done, 50 moved", v)
	}
	moved, left := drain(t, f.mb), drain(t, f.dlqMB)
	if len(moved) != 50 || len(left) != 100 {
		t.Fatalf("after the redrive: %d in the queue, %d in the DLQ; want 50 and 100", len(moved), len(left))
	}
	for _, m := range moved {
		if !strings.Contains(m, `"tier":"gold"`) {
			t.Errorf("moved %s", m)
		}
	}
	f.client.mu.Lock()
	handles := slices.Clone(f.client.handles)
	f.client.mu.Unlock()
	f.pagesMu.Lock()
	pages := strings.Join(f.pages, "\n")
	f.pagesMu.Unlock()
	if len(handles) < 200 {
		t.Fatalf("the console received %d times, want the look's 150 and the redrive's 150 at least", len(handles))
	}
	for _, h := range handles {
		if strings.Contains(pages, h) || strings.Contains(f.log.String(), h) {
			t.Fatalf("a receipt handle shows in a page or the log: %s", h)
		}
	}
}

// An export writes every matching message as a line of JSON and gives
// them all back: the queue keeps every message.
func TestSQSExport(t *testing.T) {
	f := newSQSFixture(t, 30)
	b := f.b
	resp, err := b.client.PostForm(f.srv.URL+"/act", url.Values{"csrf": {b.token()}, "queue": {f.dlq}, "action": {"export"}, "attr": {"tier=gold"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Disposition"), f.dlq+".jsonl") {
		t.Fatalf("export: %d %v", resp.StatusCode, resp.Header)
	}
	var lines []exportLine
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var l exportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		lines = append(lines, l)
	}
	if len(lines) != 10 {
		t.Fatalf("exported %d lines, want the 10 gold", len(lines))
	}
	// The receive count leaves out the export's own receive: one less
	// than SQS's count (0 for these, unless a receive whose answer was
	// lost, as fauxqs drops some under load, counted once more).
	for _, l := range lines {
		raw, err := strconv.Atoi(l.Attributes["ApproximateReceiveCount"])
		if l.MessageAttributes["tier"].StringValue != "gold" || l.ID == "" || l.SentAt == nil || err != nil || l.ReceiveCount != raw-1 {
			t.Errorf("exported %+v", l)
		}
	}
	if left := drain(t, f.dlqMB); len(left) != 30 {
		t.Errorf("after the export the DLQ holds %d, want all 30 (given back)", len(left))
	}
}

// moveTaskClient serves StartMessageMoveTask as SQS does: a task that
// moves a whole DLQ, reported by ListMessageMoveTasks, cancellable.
type moveTaskClient struct {
	SQSAPI
	mu        sync.Mutex
	started   *sqs.StartMessageMoveTaskInput
	lists     int
	cancelled bool
}

func (c *moveTaskClient) GetQueueUrl(_ context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	return &sqs.GetQueueUrlOutput{QueueUrl: aws.String("https://sqs.test/1/" + aws.ToString(in.QueueName))}, nil
}

func (c *moveTaskClient) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
		string(types.QueueAttributeNameQueueArn): "arn:aws:sqs:test:1:" + queueName(aws.ToString(in.QueueUrl))}}, nil
}

func (c *moveTaskClient) StartMessageMoveTask(_ context.Context, in *sqs.StartMessageMoveTaskInput, _ ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = in
	return &sqs.StartMessageMoveTaskOutput{TaskHandle: aws.String("task-1")}, nil
}

func (c *moveTaskClient) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists++
	status := "RUNNING"
	if c.lists == 3 {
		status = "COMPLETED"
	}
	return &sqs.ListMessageMoveTasksOutput{Results: []types.ListMessageMoveTasksResultEntry{{
		Status: aws.String(status), ApproximateNumberOfMessagesMoved: int64(100 * c.lists), ApproximateNumberOfMessagesToMove: aws.Int64(300)}}}, nil
}

func (c *moveTaskClient) CancelMessageMoveTask(context.Context, *sqs.CancelMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.CancelMessageMoveTaskOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelled = true
	return &sqs.CancelMessageMoveTaskOutput{}, nil
}

// A redrive of a whole dead-letter queue on SQS is a message move task, at
// the rate asked (500 at most, SQS's bound), followed to its end.
func TestRedriveWholeQueueWithMoveTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := &moveTaskClient{}
		b := newSQSBackend(client, "", time.Minute)
		j := &job{Kind: actRedrive, Queue: "jobs-dlq", To: "jobs", Rate: 900, Started: time.Now(), sink: &jobs{log: slog.New(slog.DiscardHandler)}}
		if err := b.act(t.Context(), j, nil); err != nil {
			t.Fatal(err)
		}
		v := j.view()
		if client.started == nil || aws.ToString(client.started.SourceArn) != "arn:aws:sqs:test:1:jobs-dlq" ||
			aws.ToString(client.started.DestinationArn) != "arn:aws:sqs:test:1:jobs" || aws.ToInt32(client.started.MaxNumberOfMessagesPerSecond) != 500 {
			t.Errorf("StartMessageMoveTask: %+v", client.started)
		}
		if v.Done != 300 || !strings.Contains(v.Method, "StartMessageMoveTask") {
			t.Errorf("job: %+v, want 300 moved by the task", v)
		}

		// Cancelled, it cancels the task.
		client = &moveTaskClient{}
		b = newSQSBackend(client, "", time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		j = &job{Kind: actRedrive, Queue: "jobs-dlq", To: "jobs", Started: time.Now(), sink: j.sink}
		done := make(chan error)
		go func() { done <- b.act(ctx, j, nil) }()
		time.Sleep(1500 * time.Millisecond) // one look at the task
		cancel()
		if err := <-done; err == nil || !client.cancelled {
			t.Errorf("a cancelled move: %v, task cancelled %v; want ctx's error and the task cancelled", err, client.cancelled)
		}
	})
}
