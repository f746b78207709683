package sqlmailbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// stuckRegistry is a driver whose receiver registration hangs in the
// database until released (or its context ends); the calls it answers
// answer at once, each failing with its context's error once that ended.
// The methods the test does not reach are the nil driver.Driver's: they
// panic.
type stuckRegistry struct {
	driver.Driver
	entered chan struct{} // closed when RegisterReceiver is called
	release chan struct{} // closing it lets RegisterReceiver return
}

func (d *stuckRegistry) Dialect() string                                 { return "stuck" }
func (d *stuckRegistry) SchemaVersion(context.Context) (int, int, error) { return 1, 1, nil }
func (d *stuckRegistry) DefaultPollInterval() time.Duration              { return time.Second }
func (d *stuckRegistry) Close() error                                    { return nil }
func (d *stuckRegistry) RemoveReceiver(context.Context, string) error    { return nil }

func (d *stuckRegistry) RegisterReceiver(ctx context.Context, _ driver.ReceiverRow) error {
	close(d.entered)
	select {
	case <-d.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *stuckRegistry) Receive(ctx context.Context, _ *driver.QueueRecord, _ driver.ReceiveArgs) (driver.ReceiveResult, error) {
	return driver.ReceiveResult{}, ctx.Err()
}

func (d *stuckRegistry) ChangeVisibility(ctx context.Context, _ *driver.QueueRecord, _ time.Time, changes []driver.Change) ([]driver.ChangeOutcome, bool, error) {
	return make([]driver.ChangeOutcome, len(changes)), false, ctx.Err()
}

// A receiver registration stuck in a slow database does not hold up the
// Mailbox's other calls: while a Receive's first registration hangs, a
// ChangeVisibility (the lease owner's extension, with a 1 s budget)
// returns at once, done, instead of waiting for the registration and
// failing with its context's error when the registration lets go, 2 s
// later.
func TestStuckReceiverRegistrationHoldsUpNoCall(t *testing.T) {
	ctx := t.Context()
	d := &stuckRegistry{entered: make(chan struct{}), release: make(chan struct{})}
	st, err := open(ctx, d, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mb := st.mailbox(driver.QueueRecord{ID: 1, Spec: sqsloop.QueueSpec{Name: "q"}.WithDefaults(), Key: []byte(strings.Repeat("k", 32))})
	defer mb.Close()

	received := make(chan error, 1)
	go func() {
		_, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 1})
		received <- err
	}()
	<-d.entered
	unstick := time.AfterFunc(2*time.Second, func() { close(d.release) })
	cctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	handle := mb.handles.encode(driver.Ref{ID: 1, ReceiveCount: 1})
	errs, err := mb.ChangeVisibility(cctx, []sqsloop.VisibilityChange{{ReceiptHandle: handle, Timeout: time.Minute}})
	if err != nil || errs[0] != nil {
		t.Errorf("ChangeVisibility while the receiver registration hangs = %v, %v; want it done at once", errs, err)
	}
	if unstick.Stop() {
		close(d.release)
	}
	if err := <-received; err != nil {
		t.Errorf("Receive: %v", err)
	}
}
