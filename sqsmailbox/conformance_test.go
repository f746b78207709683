package sqsmailbox_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// TestSqsmailboxConformance runs the conformance suite on sqsmailbox against
// the SQS-compatible server at SQS_ENDPOINT, on the wall clock (about as
// long as the longest scenario, some 5 s). SQS_SERVER says which server that
// is, so its declared differences apply (harness.SQS.Features). Without
// SQS_ENDPOINT the test skips, saying how to get a server, except under
// CI=true, where it fails.
func TestSqsmailboxConformance(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s: conformance suite took %v", h.Name(), time.Since(start).Round(time.Millisecond)) })
	mailboxtest.Run(t, h)
}

// newHarness returns a harness on the server the environment names
// (harness.ReadEnv: SQS_ENDPOINT, SQS_SERVER, the region, and the
// environment's credentials or dummy ones for an emulator). Its client is
// built with sqsmailbox.NewClient, so AWS_CA_BUNDLE applies; the connections
// it dials are closed when t ends, leaving no goroutine behind for goleak to
// report.
//
// It skips t when SQS_ENDPOINT is unset (fails it under CI=true), and
// fails t when SQS_SERVER is not a known kind or the server does not answer.
func newHarness(t *testing.T) *harness.SQS {
	t.Helper()
	if os.Getenv("SQS_ENDPOINT") == "" {
		const how = "SQS_ENDPOINT is unset, so sqsmailbox's conformance suite has no SQS-compatible server to run on.\n" +
			"*** ./scripts/test.sh starts one (fauxqs, installed by `npm ci --prefix integration`) and runs every test on it;\n" +
			"*** or start one with `cd integration && go run ./cmd/sqsserver` and export the SQS_ENDPOINT and SQS_SERVER lines it prints\n" +
			"*** (LocalStack: SQS_ENDPOINT=http://127.0.0.1:4566 SQS_SERVER=localstack)."
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " CI=true: a skipped suite would hide that nothing was tested.")
		}
		t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
	}
	env, err := harness.ReadEnv(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	client, err := sqsmailbox.NewClient(ctx, env.Endpoint, harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		t.Fatalf("SQS_ENDPOINT=%s: %v", env.Endpoint, err)
	}
	var conns harness.ConnTracker
	client = sqs.New(client.Options(), conns.Track)
	t.Cleanup(conns.CloseAll)
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := client.ListQueues(callCtx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)}); err != nil {
		t.Fatalf("SQS_ENDPOINT=%s does not answer ListQueues: %v", env.Endpoint, err)
	}
	return harness.NewSQS(env.Kind, client)
}
