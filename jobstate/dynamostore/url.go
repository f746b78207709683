package dynamostore

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/openurl"
	"github.com/sqsloop/sqsloop/jobstate"
)

func init() { jobstate.Register("dynamodb", openURL) }

// openURL opens the Store of dynamodb://TABLE (jobstate.Open) with a
// client from the standard AWS chain (config.LoadDefaultConfig), as New
// does: it makes no request, and the table must exist (CreateTable).
// Parameters: region (over the chain's), endpoint (a DynamoDB-compatible
// server's base URL: DynamoDB Local, dynalite).
func openURL(ctx context.Context, u *url.URL) (jobstate.OpenedStore, error) {
	q := openurl.Parse(u)
	region, endpoint := q.String("region"), q.String("endpoint")
	if err := q.Err("dynamostore"); err != nil {
		return nil, err
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("dynamostore: %s: want dynamodb://TABLE: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: load AWS config: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	s, err := New(client, u.Host)
	if err != nil {
		return nil, err
	}
	return closing{s}, nil
}

// closing is a Store opened from a URL; its client holds nothing to close.
type closing struct{ *Store }

// Close does nothing and returns nil.
func (closing) Close() error { return nil }
