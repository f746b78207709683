package sqslambda

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/visibility"
)

func TestValidateNamesEveryBadField(t *testing.T) {
	err := Config{
		Concurrency:    MaxConcurrency + 1,
		DeadlineMargin: -time.Second,
		Middleware:     []sqsloop.Middleware{nil},
		Visibility:     visibility.Config{Interval: -time.Second},
	}.Validate()
	if !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("err %v, want ErrInvalidArgument", err)
	}
	for _, field := range []string{"Concurrency", "DeadlineMargin", "Middleware[0]", "Visibility.Interval"} {
		if !strings.Contains(err.Error(), field+":") {
			t.Errorf("%v: does not name %s", err, field)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
	if _, err := New(nil, Config{}); !errors.Is(err, sqsloop.ErrInvalidArgument) || !strings.Contains(err.Error(), "handler") {
		t.Errorf("New(nil): %v", err)
	}
}

func TestQueueURL(t *testing.T) {
	for arn, want := range map[string]string{
		"arn:aws:sqs:us-east-2:123456789012:jobs":            "https://sqs.us-east-2.amazonaws.com/123456789012/jobs",
		"arn:aws:sqs:eu-west-1:123456789012:orders.fifo":     "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
		"arn:aws-cn:sqs:cn-north-1:123456789012:jobs":        "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs",
		"arn:aws-us-gov:sqs:us-gov-west-1:123456789012:jobs": "https://sqs.us-gov-west-1.amazonaws.com/123456789012/jobs",
	} {
		if got, err := QueueURL(arn); err != nil || got != want {
			t.Errorf("QueueURL(%q) = %q, %v; want %q", arn, got, err, want)
		}
	}
	for _, arn := range []string{"", "arn:aws:sns:us-east-2:123456789012:topic", "arn:aws:sqs:us-east-2:123456789012", "arn:aws-xx:sqs:r:1:q", "arn:aws:sqs::123456789012:jobs"} {
		if _, err := QueueURL(arn); !errors.Is(err, sqsloop.ErrInvalidArgument) {
			t.Errorf("QueueURL(%q): %v, want ErrInvalidArgument", arn, err)
		}
	}
}
