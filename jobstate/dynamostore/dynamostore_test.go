package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/jobstate/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client returns a client of the DynamoDB-compatible server
// DYNAMODB_ENDPOINT names (scripts/test.sh starts dynalite and sets it)
// and a new table on it (without Time to Live: dynalite does not
// implement UpdateTimeToLive, and the Store does not depend on it). Unset, it skips t, saying how to get one, except
// under CI=true, where it fails t.
func client(t testing.TB) (*dynamodb.Client, string) {
	t.Helper()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	if endpoint == "" {
		const how = "DYNAMODB_ENDPOINT is unset, so there is no DynamoDB-compatible server to test jobstate/dynamostore on.\n" +
			"*** ./scripts/test.sh starts one (dynalite, from npm in integration/); or run\n" +
			"*** `(cd integration && npm ci && node node_modules/.bin/dynalite --port 4567 &)` and set DYNAMODB_ENDPOINT=http://localhost:4567."
		if os.Getenv("CI") == "true" {
			t.Fatal(how + " CI=true: a skipped suite would hide that nothing was tested.")
		}
		t.Skip("\n*** SKIPPING: " + how + " (CI=true makes this a failure.)")
	}
	env, err := harness.ReadEnv(func(k string) string {
		if k == "SQS_SERVER" {
			return "" // the SQS server's kind says nothing of this one
		}
		return os.Getenv(k)
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadDefaultConfig(t.Context(), harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		t.Fatal(err)
	}
	// A transport of the test's own, whose connections it closes at the
	// end: goleak would report their goroutines.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	c := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.HTTPClient = &http.Client{Transport: tr}
	})
	table := fmt.Sprintf("sqsloop-jobstate-%d", time.Now().UnixNano())
	if err := dynamostore.CreateTable(t.Context(), c, table); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	return c, table
}

func newStore(t testing.TB, c dynamostore.Client, table string) *dynamostore.Store {
	t.Helper()
	s, err := dynamostore.New(c, table)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The conformance suite on the server, every client a Store of its own on
// one table.
func TestConformance(t *testing.T) {
	c, table := client(t)
	storetest.Run(t, storetest.HarnessFunc(func(t *testing.T) jobstate.Store { return newStore(t, c, table) }))
}

// noOldItem is a client whose refused conditional writes do not return
// the item standing, as a server that ignores
// ReturnValuesOnConditionCheckFailure: the Store reads it instead.
type noOldItem struct{ *dynamodb.Client }

func (c noOldItem) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnValuesOnConditionCheckFailure = ""
	return c.Client.PutItem(ctx, in, optFns...)
}

func (c noOldItem) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	in.ReturnValuesOnConditionCheckFailure = ""
	return c.Client.DeleteItem(ctx, in, optFns...)
}

// The suite again, with refused writes' items read instead of returned.
func TestConformanceWithoutReturnedItems(t *testing.T) {
	c, table := client(t)
	storetest.Run(t, storetest.HarnessFunc(func(t *testing.T) jobstate.Store { return newStore(t, noOldItem{c}, table) }))
}

// New checks its arguments.
func TestNewChecks(t *testing.T) {
	if _, err := dynamostore.New(nil, "x"); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Errorf("New(nil, \"x\"): %v, want ErrInvalidArgument", err)
	}
}

// What the middlewares add per message on the DynamoDB-compatible server
// (jobbench.Benchmark; dynalite locally, not DynamoDB's latency).
func BenchmarkDynamoDB(b *testing.B) {
	c, table := client(b)
	jobbench.Benchmark(b, newStore(b, c, table))
}
