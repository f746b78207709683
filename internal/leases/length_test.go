package leases

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

// What a handler's context says of its lease (sqsloop.Lease, through
// Current) is what the lease's extensions ask for: the Manager's choice,
// then the handler's own; a Current that holds nothing says 0.
func TestCurrentSaysTheLeasesExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := running(t, &recorder{}, adaptive(t, nil))
		l := m.Hold(message("own", 30*time.Second), nil, nil)
		var cur Current
		ctx := sqsloop.NewLeaseContext(context.Background(), &cur)
		if got := sqsloop.LeaseFromContext(ctx).Extension(); got != 0 {
			t.Errorf("Extension of an empty Current = %v, want 0", got)
		}
		cur.Set(l)
		if got := sqsloop.LeaseFromContext(ctx).Extension(); got != 33*time.Second {
			t.Errorf("Extension at a cold start = %v, want the floor, the visibility timeout + Interval/2 (33s)", got)
		}
		if err := sqsloop.SetExtension(ctx, 5*time.Minute); err != nil {
			t.Fatal(err)
		}
		if got := l.Extension(); got != 5*time.Minute {
			t.Errorf("Extension after SetExtension(5m) = %v, want 5m0s", got)
		}
		l.GiveBack()
	})
}
