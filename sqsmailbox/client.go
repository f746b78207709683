package sqsmailbox

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sqsloop/sqsloop"
)

// NewClient builds an SQS client the usual way: config.LoadDefaultConfig with
// optFns (the default credential chain, region, retryer, and AWS_CA_BUNDLE
// when set), then sqs.NewFromConfig.
//
// endpoint, when not empty, is the base URL of an SQS-compatible server
// (LocalStack, ElasticMQ, fauxqs: "http://127.0.0.1:4566"); it must be an
// absolute http or https URL, else the error wraps sqsloop.ErrInvalidArgument
// and names the field. Empty means the regional AWS endpoint. The endpoint is
// set on the SQS client's options (BaseEndpoint) rather than through a custom
// HTTP client, which LoadDefaultConfig refuses alongside AWS_CA_BUNDLE.
//
// A region is required (AWS_REGION, the shared config file, or
// config.WithRegion): without one NewClient returns an error wrapping
// sqsloop.ErrInvalidArgument that names it. Errors from loading the
// configuration are returned wrapped. NewClient logs nothing, so never logs
// credentials. It is safe for concurrent use, and so is the client it returns.
func NewClient(ctx context.Context, endpoint string, optFns ...func(*config.LoadOptions) error) (*sqs.Client, error) {
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("sqsmailbox: endpoint %q: want an absolute http or https URL: %w", endpoint, sqsloop.ErrInvalidArgument)
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, optFns...)
	if err != nil {
		return nil, fmt.Errorf("sqsmailbox: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("sqsmailbox: region: none configured (set AWS_REGION or pass config.WithRegion): %w", sqsloop.ErrInvalidArgument)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}
