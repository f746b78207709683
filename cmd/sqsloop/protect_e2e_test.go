package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// exec --ecs-scale-in-protection beside a stand-in for the ECS agent: the
// task is protected while the command runs, and cleared by the time exec
// exits (idle, then the drain of --exit-when-idle). Outside an ECS task
// (no ECS_AGENT_URI) exec refuses to start, naming the flag.
func TestExecScaleInProtection(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []bool
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ProtectionEnabled bool }
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPut || !strings.HasSuffix(r.URL.Path, "/task-protection/v1/state") || json.Unmarshal(b, &body) != nil {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls = append(calls, body.ProtectionEnabled)
		mu.Unlock()
		enabled := "false"
		if body.ProtectionEnabled {
			enabled = "true"
		}
		_, _ = io.WriteString(w, `{"protection":{"ProtectionEnabled":`+enabled+`,"TaskArn":"arn:aws:ecs:task/1"}}`)
	}))
	defer agent.Close()

	b := newBackend(t, "sqlite")
	queue, _ := b.create(t, 2)
	b.run(t, "", append([]string{"send", "job"}, queue...)...)
	args := execArgs(queue, append([]string{"--ecs-scale-in-protection"}, fastWorker...), `read body; sleep 2; echo "$body" >> "$1"`, t.TempDir()+"/runs")
	out := b.start(t, "", args...)
	if err := out.wait(t); exitCode(err) == 0 || !strings.Contains(out.stderr.String(), "--ecs-scale-in-protection") ||
		!strings.Contains(out.stderr.String(), "ECS_AGENT_URI") {
		t.Errorf("exec --ecs-scale-in-protection without ECS_AGENT_URI: %v; stderr:\n%s\nwant a failure naming the flag and ECS_AGENT_URI", err, out.stderr.String())
	}

	b.env = append(b.env, "ECS_AGENT_URI="+agent.URL+"/api/task-1")
	p := b.start(t, "", args...)
	if err := p.wait(t); err != nil {
		t.Fatalf("exec: %v; stderr:\n%s", err, p.stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 2 || !calls[0] || calls[len(calls)-1] {
		t.Errorf("the agent's calls (ProtectionEnabled) = %v, want a protection set while the command ran, then cleared; stderr:\n%s", calls, p.stderr.String())
	}
}
