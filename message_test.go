package sqsloop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
)

// recorder is a Mailbox that records the single-entry calls Message makes.
type recorder struct {
	sqsloop.Mailbox
	deleted []string
	changed []sqsloop.VisibilityChange
	entry   error
}

func (r *recorder) Delete(_ context.Context, handles []string) ([]error, error) {
	r.deleted = append(r.deleted, handles...)
	return []error{r.entry}, nil
}

func (r *recorder) ChangeVisibility(_ context.Context, ch []sqsloop.VisibilityChange) ([]error, error) {
	r.changed = append(r.changed, ch...)
	return []error{r.entry}, nil
}

func TestMessageCallsItsMailbox(t *testing.T) {
	r := &recorder{}
	m := &sqsloop.Message{ID: "m1", ReceiptHandle: "rh1"}
	m.Bind(r)
	ctx := context.Background()
	if err := m.Ack(ctx); err != nil || len(r.deleted) != 1 || r.deleted[0] != "rh1" {
		t.Fatalf("Ack: %v, deleted %v", err, r.deleted)
	}
	if err := m.Nack(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.ExtendVisibility(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	want := []sqsloop.VisibilityChange{{ReceiptHandle: "rh1", Timeout: 0}, {ReceiptHandle: "rh1", Timeout: time.Minute}}
	if len(r.changed) != 2 || r.changed[0] != want[0] || r.changed[1] != want[1] {
		t.Fatalf("changes %v, want %v", r.changed, want)
	}
}

func TestMessageReturnsTheEntryError(t *testing.T) {
	r := &recorder{entry: sqsloop.ErrReceiptHandleExpired}
	m := &sqsloop.Message{ReceiptHandle: "stale"}
	m.Bind(r)
	if err := m.Ack(context.Background()); !errors.Is(err, sqsloop.ErrReceiptHandleExpired) {
		t.Fatalf("Ack = %v, want ErrReceiptHandleExpired", err)
	}
}

func TestUnboundMessageIsAnInvalidArgument(t *testing.T) {
	m := &sqsloop.Message{ID: "loose"}
	if err := m.Ack(context.Background()); !errors.Is(err, sqsloop.ErrInvalidArgument) {
		t.Fatalf("Ack = %v, want ErrInvalidArgument", err)
	}
}
