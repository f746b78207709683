package sqsloop_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestQueueSpecValidate(t *testing.T) {
	long := strings.Repeat("a", 81)
	for _, tc := range []struct {
		name string
		spec sqsloop.QueueSpec
		want []string // substrings of the error; none: valid
	}{
		{"zero name", sqsloop.QueueSpec{}, []string{"QueueSpec.Name: must be 1 to 80 characters, got 0"}},
		{"defaults", sqsloop.QueueSpec{Name: "orders"}, nil},
		{"everything at its limit", sqsloop.QueueSpec{Name: strings.Repeat("a", 80), VisibilityTimeout: 12 * time.Hour,
			Delay: 15 * time.Minute, RetentionPeriod: 14 * 24 * time.Hour, MaxMessageSize: 1 << 20}, nil},
		{"fifo", sqsloop.QueueSpec{Name: "orders.fifo", FIFO: true, ContentBasedDeduplication: true, MaxReceiveCount: 5}, nil},
		{"fifo without suffix", sqsloop.QueueSpec{Name: "orders", FIFO: true}, []string{`QueueSpec.Name: must end in ".fifo" on a FIFO queue, got "orders"`}},
		{"standard with suffix", sqsloop.QueueSpec{Name: "orders.fifo"}, []string{`must not end in ".fifo" on a standard queue`}},
		{"bad character", sqsloop.QueueSpec{Name: "or ders"}, []string{`QueueSpec.Name: must hold only letters, digits, '-' and '_', got ' ' in "or ders"`}},
		{"too long", sqsloop.QueueSpec{Name: long}, []string{"must be 1 to 80 characters, got 81"}},
		{"dlq name too long", sqsloop.QueueSpec{Name: strings.Repeat("a", 78), MaxReceiveCount: 3},
			[]string{"QueueSpec.DeadLetterQueueName(): must be 1 to 80 characters, got 82"}},
		{"dedup on standard", sqsloop.QueueSpec{Name: "q", ContentBasedDeduplication: true}, []string{"QueueSpec.ContentBasedDeduplication"}},
		{"ranges", sqsloop.QueueSpec{Name: "q", VisibilityTimeout: -time.Second, Delay: 16 * time.Minute,
			RetentionPeriod: 59 * time.Second, MaxMessageSize: 1023, MaxReceiveCount: 1001}, []string{
			"QueueSpec.VisibilityTimeout: must be between 0 and 12h",
			"QueueSpec.Delay: must be between 0 and 15m (SQS DelaySeconds 0–900), got 16m0s",
			"QueueSpec.RetentionPeriod: must be 0 (4 days) or between 1m and 336h",
			"QueueSpec.MaxMessageSize: must be 0 (1 MiB) or between 1024 and 1048576 bytes",
			"QueueSpec.MaxReceiveCount: must be 0 (no dead-letter queue) or between 1 and 1000",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, sqsloop.ErrInvalidArgument) {
				t.Fatalf("Validate() = %v, want an error wrapping ErrInvalidArgument", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q\nwant it to contain %q", err, w)
				}
			}
			if got := len(strings.Split(err.Error(), "\n")); got != len(tc.want) {
				t.Errorf("Validate() reported %d problems, want %d: %v", got, len(tc.want), err)
			}
		})
	}
}

func TestQueueSpecDeadLetter(t *testing.T) {
	for _, tc := range []struct {
		spec sqsloop.QueueSpec
		want string
	}{
		{sqsloop.QueueSpec{Name: "orders"}, "orders-dlq"},
		{sqsloop.QueueSpec{Name: "orders.fifo", FIFO: true}, "orders-dlq.fifo"},
	} {
		if got := tc.spec.DeadLetterQueueName(); got != tc.want {
			t.Errorf("%q.DeadLetterQueueName() = %q, want %q", tc.spec.Name, got, tc.want)
		}
	}
	s := sqsloop.QueueSpec{Name: "jobs.fifo", FIFO: true, ContentBasedDeduplication: true, VisibilityTimeout: time.Minute,
		Delay: time.Second, MaxMessageSize: 2048, MaxReceiveCount: 4}
	want := sqsloop.QueueSpec{Name: "jobs-dlq.fifo", FIFO: true, ContentBasedDeduplication: true,
		RetentionPeriod: sqsloop.MaxRetentionPeriod, MaxMessageSize: 2048}
	if got := s.DeadLetterSpec(); got != want {
		t.Errorf("DeadLetterSpec() = %+v, want %+v", got, want)
	}
}

func TestQueueSpecWithDefaults(t *testing.T) {
	got := sqsloop.QueueSpec{Name: "q", Delay: 1500 * time.Millisecond}.WithDefaults()
	want := sqsloop.QueueSpec{Name: "q", VisibilityTimeout: 30 * time.Second, Delay: 2 * time.Second,
		RetentionPeriod: 4 * 24 * time.Hour, MaxMessageSize: 1 << 20}
	if got != want {
		t.Errorf("WithDefaults() = %+v, want %+v", got, want)
	}
	if again := got.WithDefaults(); again != got {
		t.Errorf("WithDefaults is not idempotent: %+v then %+v", got, again)
	}
}

func TestQueueSpecMatch(t *testing.T) {
	spec := sqsloop.QueueSpec{Name: "jobs", VisibilityTimeout: 2 * time.Second, MaxReceiveCount: 3}
	same := sqsloop.QueueAttributes{VisibilityTimeout: 2 * time.Second, RetentionPeriod: 4 * 24 * time.Hour,
		MaxMessageSize: 1 << 20, MaxReceiveCount: 3, DeadLetterQueue: "arn:aws:sqs:us-east-1:000000000000:jobs-dlq",
		ApproximateMessages: 7}
	if err := spec.Match(same); err != nil {
		t.Errorf("Match(an ARN of jobs-dlq, counts ignored) = %v, want nil", err)
	}
	same.DeadLetterQueue = "jobs-dlq"
	if err := spec.Match(same); err != nil {
		t.Errorf("Match(by name) = %v, want nil", err)
	}
	same.RetentionPeriod, same.MaxMessageSize = 0, 0
	if err := spec.Match(same); err == nil || !strings.Contains(err.Error(), "RetentionPeriod is 0s") || !strings.Contains(err.Error(), "MaxMessageSize is 0") {
		t.Errorf("Match(retention and size not reported) = %v, want both named", err)
	}
	other := sqsloop.QueueAttributes{VisibilityTimeout: 30 * time.Second, RetentionPeriod: time.Hour, MaxReceiveCount: 5,
		DeadLetterQueue: "arn:aws:sqs:us-east-1:000000000000:other-dlq"}
	err := spec.Match(other)
	if !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("Match(other) = %v, want ErrInvalidArgument", err)
	}
	for _, w := range []string{`"jobs" exists with other attributes`, "VisibilityTimeout is 30s, the spec asks for 2s",
		"RetentionPeriod is 1h0m0s, the spec asks for 96h0m0s", "MaxReceiveCount is 5, the spec asks for 3",
		`DeadLetterQueue is "arn:aws:sqs:us-east-1:000000000000:other-dlq", the spec asks for "jobs-dlq"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Match(other) = %q\nwant it to contain %q", err, w)
		}
	}
}

func TestOutgoingMessageSize(t *testing.T) {
	m := sqsloop.OutgoingMessage{Body: "12345", MessageAttributes: map[string]sqsloop.MessageAttribute{
		"ab": {DataType: "String", StringValue: "xyz"}, "c": {DataType: "Binary", BinaryValue: []byte{1, 2}},
	}}
	if got, want := m.Size(), 5+(2+6+3)+(1+6+2); got != want {
		t.Errorf("Size() = %d, want %d", got, want)
	}
}
