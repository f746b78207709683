package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/mailboxtest"
)

// stateOf returns where the job children of q keep their jobstate: the
// SQLite file or the PostgreSQL database of q's mailbox (tables of their
// own beside it), and for a queue on the SQS server a new table on the
// DynamoDB-compatible server (a SQLite file of the test's own without one,
// except under CI=true).
func stateOf(t *testing.T, q processQueue) (dialect, target string) {
	t.Helper()
	switch q.child.Dialect {
	case "postgres":
		if err := migrateState(t.Context(), q.child.Target); err != nil {
			t.Fatal(err)
		}
		return "postgres", q.child.Target
	case "sqlite":
		return "sqlite", q.child.Target
	}
	// On SQS, the store users on AWS pick: DynamoDB (dynalite), so that
	// its conditional writes decide between the processes; a SQLite file
	// when no DynamoDB-compatible server is at hand (not under CI=true).
	if os.Getenv("DYNAMODB_ENDPOINT") != "" || os.Getenv("CI") == "true" {
		c, err := dynamoClient(t.Context())
		if err != nil {
			t.Fatalf("the SQS backend's jobstate: %v (scripts/test.sh starts dynalite and sets DYNAMODB_ENDPOINT)", err)
		}
		table := fmt.Sprintf("sqsloop-e2e-%d", time.Now().UnixNano())
		if err := dynamostore.CreateTable(t.Context(), c, table); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table}) })
		return "dynamodb", table
	}
	t.Logf("%s: DYNAMODB_ENDPOINT is unset: the jobstate is a SQLite file", q.backend)
	return "sqlite", filepath.Join(t.TempDir(), "jobstate.db")
}

// A job of 20 steps that checkpoints after each, its consumer process
// SIGKILLed mid-run 3 times (each time after 2 more steps began), on the
// SQS server and on both databases: each delivery resumes from the last
// checkpoint, so at most one step per kill runs again (3 in all), and the
// result, a hash chained through every step, is the one an uninterrupted
// run computes. Without checkpoints each kill would start again from
// step 0.
func TestE2ECheckpointedJobResumesAfterSIGKILL(t *testing.T) {
	t.Parallel()
	const (
		lease = 2 * time.Second
		steps = 20
		kills = 3
	)
	forEachProcessBackend(t, lease, func(t *testing.T, q processQueue) {
		ctx := t.Context()
		ids := mailboxtest.SendBodies(ctx, t, q.mb, "render")
		dialect, target := stateOf(t, q)
		cfg := jobChildConfig{Queue: q.child, StateDialect: dialect, StateTarget: target, Steps: steps, StepTime: 100 * time.Millisecond}
		cfg.Queue.Lease = lease
		var ran []int // every step begun, in order, over every process
		var result string
		for run := 0; run <= kills && result == ""; run++ {
			p := startChild(t, jobChildEnv, cfg)
			begun := 0
			for line := range p.Within(t, time.Minute) {
				f := strings.Fields(line)
				switch {
				case len(f) == 3 && f[0] == "step" && f[1] == ids[0]:
					n, _ := strconv.Atoi(f[2])
					ran = append(ran, n)
					begun++
				case len(f) == 3 && f[0] == "result" && f[1] == ids[0]:
					result = f[2]
				}
				if (run < kills && begun == 2) || result != "" {
					break
				}
			}
			if err := p.Cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Rest(t, patience); run < kills && !killedBy(err, syscall.SIGKILL) {
				t.Fatalf("run %d ended with %v before the kill; stderr:\n%s", run+1, err, p.Stderr())
			}
		}
		want := ""
		for n := range steps {
			want = stepHash(want, "render", n)
		}
		redone := len(ran) - steps
		t.Logf("%s: steps begun over %d kills: %v (%d redone)", q.backend, kills, ran, redone)
		if result != want {
			t.Errorf("%s: the job's result %q, want %q (every step once, in order)", q.backend, result, want)
		}
		if redone > kills || redone < 0 {
			t.Errorf("%s: %d steps run again over %d kills, want at most one per kill", q.backend, redone, kills)
		}
		for i := 1; i < len(ran); i++ {
			if ran[i] != ran[i-1]+1 && ran[i] != ran[i-1] {
				t.Errorf("%s: step %d followed step %d: a resume went back further than the step under way", q.backend, ran[i], ran[i-1])
			}
		}
	})
}
