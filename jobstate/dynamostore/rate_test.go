package dynamostore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sqsloop/sqsloop/internal/harness/jobstores"
	"github.com/sqsloop/sqsloop/internal/jobbench"
	"github.com/sqsloop/sqsloop/jobstate"
	"github.com/sqsloop/sqsloop/jobstate/dynamostore"
)

// UpdateItem of a server that ignores ReturnValuesOnConditionCheckFailure
// (noOldItem): a refused take reads the item instead.
func (c noOldItem) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnValuesOnConditionCheckFailure = ""
	return c.Client.UpdateItem(ctx, in, optFns...)
}

// counting counts a client's requests.
type counting struct {
	*dynamodb.Client
	n atomic.Int64
}

func (c *counting) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n.Add(1)
	return c.Client.GetItem(ctx, in, optFns...)
}

func (c *counting) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n.Add(1)
	return c.Client.PutItem(ctx, in, optFns...)
}

func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n.Add(1)
	return c.Client.UpdateItem(ctx, in, optFns...)
}

// A take is one request while the key stays as the Store last saw it: 3
// processes taking turns of one busy key make 60 takes in 60 requests, but
// for the first guess of the two that find the key busy already: the
// refused write, and the right one (and, on a server that does not return
// the refused item, dynalite, a read between: 64 requests there).
func TestTakeIsOneRequest(t *testing.T) {
	c, table := jobstores.DynamoDB(t)
	r := jobstate.Rate{Interval: time.Minute, Burst: 1}
	var clients [3]*counting
	var stores [3]*dynamostore.Store
	for i := range stores {
		clients[i] = &counting{Client: c}
		stores[i] = newStore(t, clients[i], table)
	}
	const rounds = 20
	for range rounds {
		for _, s := range stores {
			if g, err := s.Take(t.Context(), "one-request", r, 2*time.Hour); err != nil || !g.OK {
				t.Fatalf("Take: %+v, %v", g, err)
			}
		}
	}
	var n int64
	for _, c := range clients {
		n += c.n.Load()
	}
	if takes, most := int64(rounds*len(stores)), int64(rounds*len(stores)+2*(len(stores)-1)); n > most {
		t.Errorf("%d takes made %d requests, want at most %d", takes, n, most)
	}
}

// What a rate limit's take costs on the DynamoDB-compatible server
// (jobbench.Takes; dynalite locally, not DynamoDB's latency).
func BenchmarkTake(b *testing.B) {
	c, table := jobstores.DynamoDB(b)
	jobbench.Takes(b, newStore(b, c, table))
}
