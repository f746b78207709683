package lifecycle

import (
	"context"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// interruptLoop is a drain loop that records its Interrupt calls; it takes
// take to answer one, or ignores its context altogether with stubborn.
type interruptLoop struct {
	*drainLoop
	take     time.Duration
	stubborn bool

	mu       sync.Mutex
	calls    int
	deadline time.Duration // of the context of the first call, from the call
}

func (l *interruptLoop) Interrupt(ctx context.Context) {
	l.mu.Lock()
	l.calls++
	if dl, ok := ctx.Deadline(); ok && l.calls == 1 {
		l.deadline = time.Until(dl)
	}
	l.mu.Unlock()
	if l.stubborn {
		time.Sleep(time.Hour)
		return
	}
	select {
	case <-time.After(l.take):
	case <-ctx.Done():
	}
}

// The second signal gives every Interrupter its call, with a context that
// ends after InterruptTimeout, and exits when they return; one that takes
// longer, or ignores its context, delays the exit by InterruptTimeout and
// no more. A third signal exits without another call.
func TestSecondSignalInterruptsThenExits(t *testing.T) {
	for _, tt := range []struct {
		name     string
		loop     *interruptLoop
		wantExit time.Duration
	}{
		{"quick", &interruptLoop{take: 200 * time.Millisecond}, 200 * time.Millisecond},
		{"slow", &interruptLoop{take: time.Minute}, InterruptTimeout},
		{"stubborn", &interruptLoop{stubborn: true}, InterruptTimeout},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.loop.drainLoop = newDrainLoop(time.Hour)
				g, f := newGroup(t, map[string]Runnable{"consumer": tt.loop})
				res := runAsync(context.Background(), g)
				synctest.Wait()
				f.send(t, syscall.SIGTERM)
				synctest.Wait()
				began := time.Now()
				f.send(t, syscall.SIGINT)
				for len(f.exitCodes()) == 0 {
					time.Sleep(time.Millisecond)
				}
				if took := time.Since(began); took > tt.wantExit+time.Millisecond || took < tt.wantExit-time.Millisecond {
					t.Errorf("exited %v after the second signal, want %v", took, tt.wantExit)
				}
				f.send(t, syscall.SIGTERM)
				synctest.Wait()
				tt.loop.mu.Lock()
				calls, deadline := tt.loop.calls, tt.loop.deadline
				tt.loop.mu.Unlock()
				if calls != 1 || deadline != InterruptTimeout {
					t.Errorf("Interrupt called %d times with a %v deadline, want once with %v", calls, deadline, InterruptTimeout)
				}
				if got := f.exitCodes(); !slices.Equal(got, []int{130, 143}) {
					t.Errorf("exit codes %v, want [130 143]", got)
				}
				<-res // the drain's hour passes (and the stubborn call returns)
			})
		})
	}
}
