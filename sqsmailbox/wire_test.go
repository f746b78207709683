package sqsmailbox

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

// wireServer is a loopback HTTP server speaking just enough of SQS's JSON 1.0
// protocol to show what a real *sqs.Client puts on the wire. It records every
// request body by operation and answers with handle.
type wireServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies map[string][]map[string]any
	auths  []string                                                // Authorization header of every request, in order
	handle func(w http.ResponseWriter, r *http.Request, op string) // nil: answer {}
}

func newWireServer(t *testing.T) *wireServer {
	t.Helper()
	ws := &wireServer{bodies: map[string][]map[string]any{}}
	ws.Server = httptest.NewUnstartedServer(http.HandlerFunc(ws.serve))
	ws.Config.SetKeepAlivesEnabled(false) // no idle connection outlives a test
	ws.Start()
	t.Cleanup(ws.Close)
	return ws
}

func (ws *wireServer) serve(w http.ResponseWriter, r *http.Request) {
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	ws.mu.Lock()
	ws.bodies[op] = append(ws.bodies[op], body)
	ws.auths = append(ws.auths, r.Header.Get("Authorization"))
	handle := ws.handle
	ws.mu.Unlock()
	if handle != nil {
		handle(w, r, op)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = io.WriteString(w, "{}")
}

// requests returns the Authorization header of every request so far.
func (ws *wireServer) requests() []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return append([]string(nil), ws.auths...)
}

func (ws *wireServer) body(t *testing.T, op string) map[string]any {
	t.Helper()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(ws.bodies[op]) != 1 {
		t.Fatalf("%s requests = %d, want 1", op, len(ws.bodies[op]))
	}
	return ws.bodies[op][0]
}

// hermeticAWS keeps the developer's AWS files and variables out of a test
// (AWS_CA_BUNDLE stays: test machines set it).
func hermeticAWS(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// mailbox returns a Mailbox over client for a queue of ws, closed when t
// ends.
func (ws *wireServer) mailbox(t *testing.T, client API) *Mailbox {
	t.Helper()
	m, err := New(client, ws.URL+"/000000000000/jobs")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// wireMailbox builds a Mailbox over a real *sqs.Client from NewClient,
// pointed at ws.
func wireMailbox(t *testing.T, ws *wireServer) *Mailbox {
	t.Helper()
	hermeticAWS(t)
	client, err := NewClient(t.Context(), ws.URL,
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithRetryMaxAttempts(1),
	)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return ws.mailbox(t, client)
}

// The SDK leaves out int32 fields that hold 0; SQS would then use the queue's
// ReceiveMessageWaitTimeSeconds and VisibilityTimeout. Both must be on the
// wire, 0 included.
func TestWireReceiveSendsZeros(t *testing.T) {
	ws := newWireServer(t)
	m := wireMailbox(t, ws)
	if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 3}); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	body := ws.body(t, "ReceiveMessage")
	for field, want := range map[string]float64{"WaitTimeSeconds": 0, "VisibilityTimeout": 0, "MaxNumberOfMessages": 3} {
		got, ok := body[field]
		if !ok || got != want {
			t.Errorf("%s on the wire = %v (present %v), want %v; body %v", field, got, ok, want, body)
		}
	}
	if got := body["QueueUrl"]; got != m.QueueURL() {
		t.Errorf("QueueUrl = %v, want %s", got, m.QueueURL())
	}
}

func TestWireReceiveSendsNonZeroOnce(t *testing.T) {
	ws := newWireServer(t)
	m := wireMailbox(t, ws)
	if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 1500 * time.Millisecond, VisibilityTimeout: time.Minute}); err != nil {
		t.Fatalf("Receive: %v", err)
	}
	body := ws.body(t, "ReceiveMessage")
	if body["WaitTimeSeconds"] != 2.0 || body["VisibilityTimeout"] != 60.0 {
		t.Errorf("WaitTimeSeconds, VisibilityTimeout = %v, %v; want 2, 60", body["WaitTimeSeconds"], body["VisibilityTimeout"])
	}
}

func TestWireNackSendsZero(t *testing.T) {
	ws := newWireServer(t)
	ws.handle = func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, `{"Successful":[{"Id":"0"}],"Failed":[]}`)
	}
	m := wireMailbox(t, ws)
	errs, err := m.ChangeVisibility(t.Context(), []sqsloop.VisibilityChange{{ReceiptHandle: "rh", Timeout: 0}})
	if err != nil || errs[0] != nil {
		t.Fatalf("ChangeVisibility = %v, %v", errs, err)
	}
	entries, _ := ws.body(t, "ChangeMessageVisibilityBatch")["Entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("Entries = %v", entries)
	}
	entry, _ := entries[0].(map[string]any)
	if v, ok := entry["VisibilityTimeout"]; !ok || v != 0.0 {
		t.Errorf("VisibilityTimeout on the wire = %v (present %v), want 0", v, ok)
	}
}

// A real SQS error answer, as the SDK decodes it: the query-compatible code
// in x-amzn-query-error, the JSON type in the body.
func TestWireQueueDoesNotExist(t *testing.T) {
	ws := newWireServer(t)
	ws.handle = func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.NonExistentQueue;Sender")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
	}
	m := wireMailbox(t, ws)
	_, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1})
	if !errors.Is(err, sqsloop.ErrQueueNotFound) || !strings.Contains(err.Error(), m.QueueURL()) {
		t.Fatalf("err = %v, want ErrQueueNotFound naming the queue URL", err)
	}
	var typed *types.QueueDoesNotExist
	if !errors.As(err, &typed) {
		t.Errorf("errors.As cannot reach *types.QueueDoesNotExist in %v", err)
	}
}

// The SDK honours ctx: cancelling it ends a long poll at once, with ctx's
// error; Close does the same with ErrMailboxClosed.
func TestWireLongPollEnds(t *testing.T) {
	for _, how := range []string{"cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			ws := newWireServer(t)
			arrived := make(chan struct{}, 1)
			ws.handle = func(_ http.ResponseWriter, r *http.Request, _ string) {
				arrived <- struct{}{}
				<-r.Context().Done() // a long poll that never answers
			}
			m := wireMailbox(t, ws)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20 * time.Second})
				errc <- err
			}()
			<-arrived
			want := context.Canceled
			if how == "cancel" {
				cancel()
			} else {
				_ = m.Close()
				want = sqsloop.ErrMailboxClosed
			}
			if err := <-errc; !errors.Is(err, want) {
				t.Fatalf("Receive = %v, want %v", err, want)
			}
		})
	}
}

func TestNewClientValidation(t *testing.T) {
	hermeticAWS(t)
	for _, endpoint := range []string{"localhost:4566", "ftp://host", "http://", "::"} {
		if _, err := NewClient(t.Context(), endpoint, config.WithRegion("us-east-1")); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "endpoint") {
			t.Errorf("NewClient(%q) = %v, want ErrInvalidArgument naming endpoint", endpoint, err)
		}
	}
	if _, err := NewClient(t.Context(), ""); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "region") {
		t.Errorf("NewClient without region = %v, want ErrInvalidArgument naming region", err)
	}
	c, err := NewClient(t.Context(), "", config.WithRegion("eu-west-1"))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	if o := c.Options(); o.Region != "eu-west-1" || o.BaseEndpoint != nil {
		t.Errorf("Region, BaseEndpoint = %q, %v; want eu-west-1, nil", o.Region, o.BaseEndpoint)
	}
}
