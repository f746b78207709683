package sqsmailbox

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/openurl"
)

func init() {
	for _, scheme := range []string{"sqs", "https", "http"} {
		sqsloop.RegisterMailbox(scheme, openURL)
	}
}

// defaultEmulatorRegion is the region of a client for a queue URL that is
// not AWS's (an SQS-compatible server) when none is configured: emulators
// take any.
const defaultEmulatorRegion = "us-east-1"

// openURL opens the SQS queue u names (sqsloop.OpenMailbox), with a client
// from NewClient (the standard AWS chain):
//
//   - a queue URL on AWS, https://sqs.REGION.amazonaws.com/ACCOUNT/NAME:
//     in the URL's region;
//   - a queue URL on an SQS-compatible server, http://HOST:PORT/ACCOUNT/NAME:
//     with the server (scheme, host and port; a host under .localhost is
//     127.0.0.1) as the endpoint, in the configured region or us-east-1;
//   - sqs://NAME: the queue NAME, looked up with GetQueueUrl (one call), on
//     AWS or on the server of the endpoint parameter.
//
// Parameters: region (the client's region, over the URL's and the
// chain's), endpoint (an SQS-compatible server's base URL; for a queue URL,
// over its own host). It returns NewClient's errors, GetQueueUrl's
// (sqsloop.ErrQueueNotFound for sqs://NAME that does not exist), and one
// wrapping sqsloop.ErrInvalidArgument naming what in the URL is wrong.
func openURL(ctx context.Context, u *url.URL) (sqsloop.Mailbox, error) {
	q := openurl.Parse(u)
	region, endpoint := q.String("region"), q.String("endpoint")
	if err := q.Err("sqsmailbox"); err != nil {
		return nil, err
	}
	name := strings.Trim(u.Path, "/")
	if u.Scheme == "sqs" {
		if u.Host == "" || name != "" {
			return nil, fmt.Errorf("sqsmailbox: %s: want sqs://NAME, the queue's name as the host: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
		}
		name = u.Host
	} else if u.Host == "" || name == "" {
		return nil, fmt.Errorf("sqsmailbox: %s: want a queue URL, https://sqs.REGION.amazonaws.com/ACCOUNT/NAME: %w", u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	var opts []func(*config.LoadOptions) error
	switch awsRegion := urlRegion(u); {
	case region != "":
		opts = append(opts, config.WithRegion(region))
	case awsRegion != "":
		opts = append(opts, config.WithRegion(awsRegion))
	case u.Scheme != "sqs" || endpoint != "":
		opts = append(opts, config.WithDefaultRegion(defaultEmulatorRegion))
	}
	if endpoint == "" && u.Scheme != "sqs" && urlRegion(u) == "" {
		endpoint = serverOf(u)
	}
	client, err := NewClient(ctx, endpoint, opts...)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "sqs" {
		queueURL := *u
		queueURL.RawQuery = ""
		return New(client, queueURL.String())
	}
	out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}, callOptions...)
	if err != nil {
		return nil, wrapCall("look up the queue of "+u.Redacted(), err)
	}
	return New(client, aws.ToString(out.QueueUrl))
}

// serverOf is the base URL of the server of a queue URL that is not AWS's:
// its scheme, host and port, a host under .localhost being the loopback
// (RFC 6761; fauxqs names its queues http://sqs.REGION.localhost:PORT/…,
// which Go's resolver does not resolve).
func serverOf(u *url.URL) string {
	host := u.Host
	if h := u.Hostname(); h == "localhost" || strings.HasSuffix(h, ".localhost") {
		host = "127.0.0.1"
		if port := u.Port(); port != "" {
			host += ":" + port
		}
	}
	return u.Scheme + "://" + host
}

// urlRegion returns the region of an SQS queue URL on AWS
// (sqs.REGION.amazonaws.com, also .amazonaws.com.cn), or "".
func urlRegion(u *url.URL) string {
	parts := strings.Split(u.Hostname(), ".")
	if len(parts) >= 4 && parts[0] == "sqs" && parts[2] == "amazonaws" {
		return parts[1]
	}
	return ""
}

// Client returns the client the Mailbox calls SQS through: for the calls
// the Mailbox contract lacks (PurgeQueue, StartMessageMoveTask) on a
// queue opened from a URL (sqsloop.OpenMailbox), whose *sqs.Client it is.
// Safe for concurrent use.
func (m *Mailbox) Client() API { return m.client }
