package wire_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

// fakeSQS answers every AWS JSON protocol request with an empty success,
// except that it fails the first failFirst[action] requests of an action
// with a 500 (which the SDK retries). It counts what it received, by
// X-Amz-Target, independently of package wire.
type fakeSQS struct {
	mu        sync.Mutex
	got       wire.Counts
	failFirst map[string]int
}

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	target := r.Header.Get("X-Amz-Target")
	action := target[len("AmazonSQS."):]
	f.mu.Lock()
	f.got[action]++
	fail := f.failFirst[action] > 0
	if fail {
		f.failFirst[action]--
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if fail {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"__type":"InternalError","message":"injected"}`)
		return
	}
	_, _ = io.WriteString(w, `{}`)
}

func (f *fakeSQS) counts() wire.Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got.Sub(nil)
}

func newClient(t *testing.T, endpoint string, m *wire.Meter) *sqs.Client {
	t.Helper()
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:  awshttp.NewBuildableClient(),
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	}, m.Instrument())
}

func startFake(t *testing.T, failFirst map[string]int) (*fakeSQS, string) {
	t.Helper()
	f := &fakeSQS{got: wire.Counts{}, failFirst: failFirst}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// TestCountsAKnownSequence makes a known sequence of calls, two of which the
// server fails once (so the SDK retries them), and checks that the wire
// count, the SDK attempt count and the server's own count agree exactly, and
// that the call count leaves out the retries.
func TestCountsAKnownSequence(t *testing.T) {
	fake, url := startFake(t, map[string]int{wire.DeleteMessage: 1, wire.ChangeMessageVisibilityBatch: 1})
	var m wire.Meter
	c := newClient(t, url, &m)
	ctx := context.Background()
	q := aws.String(url + "/000000000000/q")
	h := aws.String("handle")
	calls := []struct {
		n  int
		do func() error
	}{
		{3, func() error {
			_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 10})
			return err
		}},
		{2, func() error {
			_, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: h})
			return err
		}},
		{1, func() error {
			_, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q, Entries: []types.DeleteMessageBatchRequestEntry{{Id: aws.String("0"), ReceiptHandle: h}}})
			return err
		}},
		{4, func() error {
			_, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: q, ReceiptHandle: h, VisibilityTimeout: 5})
			return err
		}},
		{1, func() error {
			_, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: q, Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("0"), ReceiptHandle: h}}})
			return err
		}},
	}
	for _, call := range calls {
		for range call.n {
			if err := call.do(); err != nil {
				t.Fatal(err)
			}
		}
	}

	wantCalls := wire.Counts{wire.ReceiveMessage: 3, wire.DeleteMessage: 2, wire.DeleteMessageBatch: 1,
		wire.ChangeMessageVisibility: 4, wire.ChangeMessageVisibilityBatch: 1}
	wantAttempts := wire.Counts{wire.ReceiveMessage: 3, wire.DeleteMessage: 3, wire.DeleteMessageBatch: 1,
		wire.ChangeMessageVisibility: 4, wire.ChangeMessageVisibilityBatch: 2}
	s := m.Snapshot()
	for name, got := range map[string]wire.Counts{"server": fake.counts(), "wire": s.Wire, "attempts": s.Attempts} {
		if !got.Equal(wantAttempts) {
			t.Errorf("%s counted %v, want %v", name, got, wantAttempts)
		}
	}
	if !s.Calls.Equal(wantCalls) {
		t.Errorf("calls = %v, want %v", s.Calls, wantCalls)
	}
	if err := s.Check(); err != nil {
		t.Error(err)
	}
	if got := s.Retries(); got != 2 {
		t.Errorf("Retries() = %d, want 2", got)
	}
}

// TestCountsConcurrentCalls checks the counters stay exact when many
// goroutines share one client (run it with -race).
func TestCountsConcurrentCalls(t *testing.T) {
	fake, url := startFake(t, nil)
	var m wire.Meter
	c := newClient(t, url, &m)
	q := aws.String(url + "/000000000000/q")
	const goroutines, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for range goroutines {
		wg.Go(func() {
			for range each {
				if _, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: q}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := wire.Counts{wire.ReceiveMessage: goroutines * each}
	s := m.Snapshot()
	if !s.Wire.Equal(want) || !s.Attempts.Equal(want) || !s.Calls.Equal(want) || !fake.counts().Equal(want) {
		t.Errorf("wire %v, attempts %v, calls %v, server %v; want %v each", s.Wire, s.Attempts, s.Calls, fake.counts(), want)
	}
}

// TestCheckSpotsDisagreement makes sure Check is not vacuous.
func TestCheckSpotsDisagreement(t *testing.T) {
	s := wire.Snapshot{Wire: wire.Counts{wire.ReceiveMessage: 2}, Attempts: wire.Counts{wire.ReceiveMessage: 1}}
	if s.Check() == nil {
		t.Fatal("Check() = nil for 2 wire requests against 1 attempt")
	}
}

func TestAction(t *testing.T) {
	for in, want := range map[string]string{
		"AmazonSQS.ReceiveMessage": "ReceiveMessage",
		"":                         wire.NoTarget,
		"Bare":                     "Bare",
	} {
		if got := wire.Action(in); got != want {
			t.Errorf("Action(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCountsSub(t *testing.T) {
	a := wire.Counts{"A": 5, "B": 1}
	b := wire.Counts{"A": 2, "B": 1, "C": 1}
	got := a.Sub(b)
	want := wire.Counts{"A": 3, "C": -1}
	if !got.Equal(want) || fmt.Sprint(got.Actions()) != "[A C]" {
		t.Errorf("Sub = %v (actions %v), want %v", got, got.Actions(), want)
	}
}
