package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestNackAfterOverridesTheBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newQueue(t, sqsloop.QueueSpec{})
		send(t, q, "later")
		var mu sync.Mutex
		var attempts []time.Time
		c := mustNew(t, q, func(ctx context.Context, m *sqsloop.Message) error {
			mu.Lock()
			defer mu.Unlock()
			attempts = append(attempts, time.Now())
			if len(attempts) == 1 {
				return sqsloop.NackAfter(errors.New("not yet"), 10*time.Second)
			}
			return nil
		}, fast())
		stop := start(t, c)
		time.Sleep(20 * time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(attempts) != 2 || attempts[1].Sub(attempts[0]) < 10*time.Second {
			t.Fatalf("attempts %v, want a retry 10 s later", attempts)
		}
	})
}
