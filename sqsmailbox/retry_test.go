package sqsmailbox

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// A ReceiveMessage call's retries wait at most 1 s apart, whatever the
// client's retryer would wait (the default: up to 20 s); its other choices
// stand. Other calls keep the client's retryer as it is.
func TestReceiveRetriesWaitAtMostASecond(t *testing.T) {
	o := sqs.Options{Retryer: retry.NewStandard()}
	for _, fn := range receiveOptions {
		fn(&o)
	}
	refused := errors.New("dial tcp: connection refused")
	longest := time.Duration(0)
	for attempt := 1; attempt <= 6; attempt++ {
		for range 20 {
			d, err := o.Retryer.RetryDelay(attempt, refused)
			if err != nil {
				t.Fatal(err)
			}
			longest = max(longest, d)
		}
	}
	if longest > time.Second {
		t.Errorf("a receive's retry waits up to %v, want ≤ 1s", longest)
	}
	if o.Retryer.MaxAttempts() != retry.DefaultMaxAttempts {
		t.Errorf("MaxAttempts %d, want the client's %d", o.Retryer.MaxAttempts(), retry.DefaultMaxAttempts)
	}
	plain := sqs.Options{Retryer: retry.NewStandard()}
	for _, fn := range callOptions {
		fn(&plain)
	}
	uncapped := time.Duration(0)
	for range 20 {
		d, _ := plain.Retryer.RetryDelay(6, refused)
		uncapped = max(uncapped, d)
	}
	if uncapped <= time.Second {
		t.Errorf("other calls' retries wait up to %v: the cap reached them", uncapped)
	}
	var none sqs.Options
	capReceiveRetries(&none) // no retryer: nothing to cap, no panic
	if none.Retryer != nil {
		t.Errorf("a retryer was made up: %T", none.Retryer)
	}
}
