package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/internal/harness"
)

// runtimeAPI serves the AWS Lambda Runtime API (version 2018-06-01, the
// custom runtime's protocol) on 127.0.0.1: a runtime long-polls
// GET /runtime/invocation/next for an event, and answers it with
// POST /runtime/invocation/{id}/response or …/{id}/error. The test hands it
// events with invoke and reads the answers.
type runtimeAPI struct {
	srv    *httptest.Server
	events chan invocation
	mu     sync.Mutex
	waits  map[string]chan answer // by request ID
	n      int
}

// invocation is one event handed to the runtime.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
}

// answer is what the runtime posted for an invocation.
type answer struct {
	kind     string // "response" or "error"
	body     []byte
	at       time.Time // when the Runtime API received it
	deadline time.Time // the invocation's deadline, as Lambda-Runtime-Deadline-Ms gave it
}

func newRuntimeAPI(t *testing.T) *runtimeAPI {
	t.Helper()
	api := &runtimeAPI{events: make(chan invocation), waits: map[string]chan answer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case inv := <-api.events:
			h := w.Header()
			h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
			h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
			h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:sqsloop-example")
			h.Set("Lambda-Runtime-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
			h.Set("Content-Type", "application/json")
			w.Write(inv.payload)
		case <-r.Context().Done(): // the runtime went away, as a frozen one would
		}
	})
	post := func(kind string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			api.mu.Lock()
			ch := api.waits[r.PathValue("id")]
			api.mu.Unlock()
			if ch == nil {
				http.Error(w, "unknown request ID", http.StatusBadRequest)
				return
			}
			ch <- answer{kind: kind, body: body, at: time.Now()}
			w.WriteHeader(http.StatusAccepted)
		}
	}
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", post("response"))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", post("error"))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		t.Errorf("runtime init error: %s", body)
		w.WriteHeader(http.StatusAccepted)
	})
	api.srv = httptest.NewServer(mux)
	return api
}

// addr is the Runtime API's address, as AWS_LAMBDA_RUNTIME_API holds it.
func (api *runtimeAPI) addr() string { return strings.TrimPrefix(api.srv.URL, "http://") }

// invoke hands payload to the runtime with timeout until its deadline and
// waits for the answer (at most timeout and 30 s more).
func (api *runtimeAPI) invoke(ctx context.Context, payload []byte, timeout time.Duration) (answer, error) {
	api.mu.Lock()
	api.n++
	id := fmt.Sprintf("8476a536-e9f4-11e8-9739-%012d", api.n)
	ch := make(chan answer, 1)
	api.waits[id] = ch
	api.mu.Unlock()
	inv := invocation{id: id, payload: payload, deadline: time.Now().Add(timeout)}
	limit := time.NewTimer(timeout + 30*time.Second)
	defer limit.Stop()
	select {
	case api.events <- inv:
	case <-limit.C:
		return answer{}, fmt.Errorf("the runtime did not ask for invocation %s", id)
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
	select {
	case a := <-ch:
		a.deadline = time.UnixMilli(inv.deadline.UnixMilli())
		return a, nil
	case <-limit.C:
		return answer{}, fmt.Errorf("no answer to invocation %s", id)
	case <-ctx.Done():
		return answer{}, ctx.Err()
	}
}

// buildLambdaExample builds examples/lambda as a custom runtime's
// bootstrap.
func buildLambdaExample(t *testing.T) string {
	t.Helper()
	return buildExample(t, "lambda", "-tags", "lambda.norpc")
}

// buildExample builds the program examples/name (with the go build flags
// given) in the examples module, as a user builds it, and returns the
// binary's path.
func buildExample(t *testing.T, name string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	build := exec.CommandContext(t.Context(), "go", append(append([]string{"build"}, flags...), "-o", bin, "./"+name)...)
	build.Dir = filepath.Join("..", "examples")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startRuntime runs bin as Lambda runs a custom runtime: with the Runtime
// API's address and the function's environment, plus env. It is killed,
// and api closed, when the test ends; stderr holds what it logged.
func startRuntime(t *testing.T, bin string, api *runtimeAPI, env ...string) *harness.Buffer {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"AWS_LAMBDA_RUNTIME_API="+api.addr(),
		"AWS_LAMBDA_FUNCTION_NAME=sqsloop-example",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT="+filepath.Dir(bin),
	)
	cmd.Env = append(cmd.Env, env...)
	stderr := &harness.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		api.srv.Close()
		if t.Failed() {
			t.Logf("runtime's log:\n%s", stderr.String())
		}
	})
	return stderr
}
