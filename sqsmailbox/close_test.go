package sqsmailbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/sqsloop/sqsloop"
)

func TestNewValidation(t *testing.T) {
	cases := []struct {
		name   string
		client API
		url    string
		fields []string
	}{
		{"nil client", nil, testQueueURL, []string{"client"}},
		{"empty URL", &fakeAPI{}, "", []string{"queueURL"}},
		{"both", nil, "", []string{"client", "queueURL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(c.client, c.url)
			if m != nil || !errors.Is(err, sqsloop.ErrInvalidArgument) {
				t.Fatalf("New = %v, %v; want nil, ErrInvalidArgument", m, err)
			}
			for _, f := range c.fields {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("err = %q, want it to name %s", err, f)
				}
			}
		})
	}
}

func TestCloseEndsWaitingReceive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered := make(chan struct{})
		f := &fakeAPI{onReceive: blockingReceive(entered)}
		m := newTestMailbox(t, f)
		errc := make(chan error, 1)
		go func() {
			_, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 10, WaitTime: 20 * time.Second})
			errc <- err
		}()
		<-entered
		start := time.Now()
		if err := m.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		err := <-errc
		if !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Fatalf("Receive after Close = %v, want ErrMailboxClosed", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("Receive went on for %v of virtual time after Close, want 0", waited)
		}
	})
}

func TestEveryCallAfterCloseFails(t *testing.T) {
	f := &fakeAPI{}
	m := newTestMailbox(t, f)
	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v, want nil (idempotent)", err)
	}
	for name, err := range everyCall(t.Context(), m) {
		if !errors.Is(err, sqsloop.ErrMailboxClosed) {
			t.Errorf("%s after Close = %v, want ErrMailboxClosed", name, err)
		}
	}
	if f.calls() != 0 {
		t.Errorf("SQS calls after Close = %d, want 0", f.calls())
	}
}

// A Receive that ended before Close is unregistered: Close has nothing left
// to cancel, and concurrent receives each get their own registration.
func TestReceiveUnregistersWhenDone(t *testing.T) {
	m := newTestMailbox(t, &fakeAPI{})
	for range 3 {
		if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1}); err != nil {
			t.Fatalf("Receive: %v", err)
		}
	}
	m.mu.Lock()
	n := len(m.receives)
	m.mu.Unlock()
	if n != 0 {
		t.Errorf("%d receives still registered after they returned, want 0", n)
	}
}

// An answer that SQS sent before Close or a cancelled ctx took effect is
// returned, not dropped: its messages are already in flight, and dropping
// them would hide them for their whole visibility timeout.
func TestReceiveKeepsAnswerThatBeatCloseAndCancel(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			f := &fakeAPI{}
			m := newTestMailbox(t, f)
			f.onReceive = func(context.Context, *sqs.ReceiveMessageInput) (*sqs.ReceiveMessageOutput, error) {
				if how == "close" {
					_ = m.Close()
				} else {
					cancel()
				}
				return &sqs.ReceiveMessageOutput{Messages: []types.Message{{MessageId: aws.String("m"), ReceiptHandle: aws.String("rh")}}}, nil
			}
			msgs, err := m.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1, WaitTime: 20 * time.Second})
			if err != nil || len(msgs) != 1 || msgs[0].ID != "m" {
				t.Fatalf("Receive = %d messages, %v; want the message SQS answered with", len(msgs), err)
			}
		})
	}
}
