package main

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/consumer"
)

// The command gets the message's variables, and none of sqsloop's own
// settings (SQSLOOP_QUEUE_URL and the like, which name the flags).
func TestMessageEnv(t *testing.T) {
	r := newRunner([]string{"true"}, []string{"PATH=/bin", "SQSLOOP_QUEUE_URL=http://x/q", "SQSLOOP_CONCURRENCY=4", "HOME=/h"})
	m := &sqsloop.Message{
		ID: "m-1", ReceiveCount: 3, MessageGroupID: "g",
		SentAt: time.Date(2026, 1, 2, 15, 4, 5, 0, time.FixedZone("x", 3600)),
		MessageAttributes: map[string]sqsloop.MessageAttribute{
			"order.id": {DataType: "String", StringValue: "42"},
			"order-id": {DataType: "String", StringValue: "43"},
			"blob":     {DataType: "Binary", BinaryValue: []byte{0xff, 0x00}},
			"n":        {DataType: "Number.int", StringValue: "7"},
		},
	}
	got := messageEnv(r.environ, "jobs", m)
	want := []string{
		"PATH=/bin", "HOME=/h",
		"SQSLOOP_MESSAGE_ID=m-1", "SQSLOOP_RECEIVE_COUNT=3", "SQSLOOP_QUEUE=jobs",
		"SQSLOOP_MESSAGE_GROUP_ID=g", "SQSLOOP_SENT_AT=2026-01-02T14:04:05Z",
		"SQSLOOP_ATTR_BLOB=/wA=", "SQSLOOP_ATTR_N=7",
		"SQSLOOP_ATTR_ORDER_ID=43", // "order-id" < "order.id" in byte order: it sets the variable
	}
	if !slices.Equal(got, want) {
		t.Errorf("messageEnv =\n%q\nwant\n%q", got, want)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"120", 2 * time.Minute, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"Fri, 02 Jan 2026 15:04:35 GMT", 30 * time.Second, true},
		{"Fri, 02 Jan 2026 15:00:00 GMT", 0, true}, // in the past: at once
	} {
		d, ok := retryAfter(c.in, now)
		if d != c.want || ok != c.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", c.in, d, ok, c.want, c.ok)
		}
	}
}

func TestQueueName(t *testing.T) {
	for _, c := range []struct{ url, name string }{
		{"https://sqs.eu-west-1.amazonaws.com/123456789012/jobs", "jobs"},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo", "orders.fifo"},
		{"http://127.0.0.1:4566/000000000000/jobs/", "jobs"},
	} {
		if got := queueName(c.url); got != c.name {
			t.Errorf("queueName(%q) = %q, want %q", c.url, got, c.name)
		}
	}
}

// The flags make the URL sqsloop.OpenMailbox opens: the library's openers
// do the rest.
func TestMailboxFlagsURL(t *testing.T) {
	for _, c := range []struct {
		f    mailboxFlags
		want string
	}{
		{mailboxFlags{QueueURL: "https://sqs.eu-west-1.amazonaws.com/1/q"}, "https://sqs.eu-west-1.amazonaws.com/1/q"},
		{mailboxFlags{QueueURL: "http://127.0.0.1:4566/1/q", Endpoint: "http://127.0.0.1:4566"}, "http://127.0.0.1:4566/1/q?endpoint=http%3A%2F%2F127.0.0.1%3A4566"},
		{mailboxFlags{Queue: "q", Endpoint: "http://x:1"}, "sqs://q?endpoint=http%3A%2F%2Fx%3A1"},
		{mailboxFlags{Mailbox: "sqlite:x.db", Queue: "q"}, "sqlite:x.db?queue=q"},
		{mailboxFlags{Mailbox: "postgres://u:p@db/app?sslmode=disable", Queue: "q"}, "postgres://u:p@db/app?queue=q&sslmode=disable"},
		{mailboxFlags{QueueURL: "sqlite:x.db?queue=q"}, "sqlite:x.db?queue=q"},
	} {
		if got, err := c.f.url(); err != nil || got != c.want {
			t.Errorf("%+v: url() = %q, %v; want %q", c.f, got, err, c.want)
		}
	}
}

// The mailbox flags' conflicts and omissions are errors naming the flags.
func TestMailboxFlagsCheck(t *testing.T) {
	for _, c := range []struct {
		f    mailboxFlags
		fail bool
	}{
		{mailboxFlags{QueueURL: "https://sqs.eu-west-1.amazonaws.com/1/q"}, false},
		{mailboxFlags{Queue: "q"}, false},
		{mailboxFlags{Mailbox: "sqlite:x.db", Queue: "q"}, false},
		{mailboxFlags{}, true},
		{mailboxFlags{Mailbox: "sqlite:x.db"}, true},
		{mailboxFlags{Mailbox: "sqlite:x.db", Queue: "q", QueueURL: "http://x/q"}, true},
		{mailboxFlags{Mailbox: "sqlite:x.db", Queue: "q", Endpoint: "http://x"}, true},
	} {
		if err := c.f.check(); (err != nil) != c.fail {
			t.Errorf("%+v: check() = %v, want an error: %v", c.f, err, c.fail)
		}
	}
	if got := redact("postgres://u:secret@db/x"); got != "postgres://u:xxxxx@db/x" {
		t.Errorf("redact = %q, want the password hidden", got)
	}
}

// The worker commands refuse a --concurrency or --shutdown-timeout the
// consumer would read as its default (0: 10 handlers, 25 s), and one out
// of the consumer's range, naming the flag and the range; nothing runs.
func TestWorkerFlagsRanges(t *testing.T) {
	db := "sqlite:" + t.TempDir() + "/x.db"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--mailbox", db, "--queue", "q", "--concurrency", "0", "--", "true"}, "--concurrency: want 1-100000, got 0"},
		{[]string{"exec", "--mailbox", db, "--queue", "q", "--concurrency", "100001", "--", "true"}, "--concurrency: want 1-100000, got 100001"},
		{[]string{"http", "--mailbox", db, "--queue", "q", "--to", "http://127.0.0.1:1/", "--concurrency", "0"}, "--concurrency: want 1-100000, got 0"},
		{[]string{"exec", "--mailbox", db, "--queue", "q", "--shutdown-timeout", "0s", "--", "true"}, "--shutdown-timeout: want more than 0, got 0s"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr, func(int) {})
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("sqsloop %s: exit status %d, stderr %q; want 2 and %q", strings.Join(tc.args, " "), code, stderr.String(), tc.want)
		}
	}
}

// The worker commands' drain budget is the consumer's default, written
// once (consumer.DefaultShutdownTimeout), as its help says.
func TestShutdownTimeoutIsTheConsumersDefault(t *testing.T) {
	var c cli
	p, err := newParser(&c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]string{"exec", "--queue", "q", "--", "true"}); err != nil {
		t.Fatal(err)
	}
	if c.Exec.ShutdownTimeout != consumer.DefaultShutdownTimeout {
		t.Errorf("exec's --shutdown-timeout defaults to %v, want the consumer's %v", c.Exec.ShutdownTimeout, consumer.DefaultShutdownTimeout)
	}
}

// stats writes durations as people read them: 4d, not 345600s beside 30s.
func TestSeconds(t *testing.T) {
	for n, want := range map[int64]string{0: "0s", 30: "30s", 90: "1m30s", 900: "15m", 3600: "1h", 5400: "1h30m", 3661: "1h1m1s", 345600: "4d", 1209600: "14d", 90000: "25h"} {
		if got := seconds(n); got != want {
			t.Errorf("seconds(%d) = %q, want %q", n, got, want)
		}
	}
}
