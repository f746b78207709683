package sqsmailbox

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
)

// A queue URL opens the queue with a client in the URL's region (on AWS)
// or on the URL's server (an emulator); sqs://NAME looks the queue up by
// name on the endpoint given; no other parameter is taken.
func TestOpenMailboxSQS(t *testing.T) {
	ws := newWireServer(t)
	hermeticAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	ws.handle = func(w http.ResponseWriter, _ *http.Request, op string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if op == "GetQueueUrl" {
			_, _ = io.WriteString(w, `{"QueueUrl":"`+ws.URL+`/000000000000/jobs"}`)
			return
		}
		_, _ = io.WriteString(w, `{"Attributes":{"VisibilityTimeout":"30"}}`)
	}
	for _, tc := range []struct{ url, queueURL, region, endpoint string }{
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/jobs", "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs", "eu-west-1", ""},
		{ws.URL + "/000000000000/jobs", ws.URL + "/000000000000/jobs", "us-east-1", ws.URL},
		{ws.URL + "/000000000000/jobs?region=eu-north-1", ws.URL + "/000000000000/jobs", "eu-north-1", ws.URL},
		{"sqs://jobs?region=ap-south-1&endpoint=" + ws.URL, ws.URL + "/000000000000/jobs", "ap-south-1", ws.URL},
		// fauxqs's queue URLs: a host under .localhost is the loopback.
		{strings.Replace(ws.URL, "127.0.0.1", "sqs.us-east-1.localhost", 1) + "/000000000000/jobs",
			strings.Replace(ws.URL, "127.0.0.1", "sqs.us-east-1.localhost", 1) + "/000000000000/jobs", "us-east-1", ws.URL},
	} {
		mb, err := sqsloop.OpenMailbox(t.Context(), tc.url)
		if err != nil {
			t.Errorf("OpenMailbox(%q): %v", tc.url, err)
			continue
		}
		m := mb.(*Mailbox)
		opts := m.Client().(*sqs.Client).Options()
		endpoint := ""
		if opts.BaseEndpoint != nil {
			endpoint = *opts.BaseEndpoint
		}
		if m.QueueURL() != tc.queueURL || opts.Region != tc.region || endpoint != tc.endpoint {
			t.Errorf("OpenMailbox(%q): queue %s, region %s, endpoint %q; want %s, %s, %q", tc.url, m.QueueURL(), opts.Region, endpoint, tc.queueURL, tc.region, tc.endpoint)
		}
		if tc.endpoint != "" {
			if _, err := m.QueueAttributes(t.Context()); err != nil {
				t.Errorf("OpenMailbox(%q): QueueAttributes: %v", tc.url, err)
			}
		}
		_ = mb.Close()
	}
	for _, tc := range []struct{ url, want string }{
		{"sqs://jobs?queue=jobs", `unknown parameter "queue"`},
		{"sqs:///jobs", "want sqs://NAME"},
		{"https://sqs.eu-west-1.amazonaws.com/", "want a queue URL"},
	} {
		if _, err := sqsloop.OpenMailbox(t.Context(), tc.url); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenMailbox(%q) = %v; want ErrInvalidArgument saying %s", tc.url, err, tc.want)
		}
	}
}
