package dynamostore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"go.uber.org/goleak"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/jobstores"
	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
	"github.com/sqsloop/sqsloop/jobstate/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	c, table := jobstores.DynamoDB(t)
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
	c, table := jobstores.DynamoDB(t)
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
	c, table := jobstores.DynamoDB(b)
	jobbench.Benchmark(b, newStore(b, c, table))
}
