package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// stop stops every loop in toStop concurrently under one deadline of
// timeout, then waits for the loops (loops) and for its own goroutines.
func stop(base context.Context, toStop []*loop, timeout time.Duration, loops *sync.WaitGroup) {
	sctx, cancel := context.WithTimeout(base, timeout)
	defer cancel()
	var stoppers sync.WaitGroup
	for _, l := range toStop {
		sd, ok := l.r.(Shutdowner)
		if !ok {
			l.cancel()
			continue
		}
		stoppers.Go(func() { l.shutdownErr = sd.Shutdown(sctx) })
		stoppers.Go(func() {
			select {
			case <-l.done:
			case <-sctx.Done():
			}
			select {
			case <-l.done:
			default:
				l.timedOut = true
			}
			l.cancel()
		})
	}
	loops.Wait()
	stoppers.Wait()
}

// collect builds Run's result from the loops' recorded outcomes.
func collect(loops []*loop, timeout time.Duration) error {
	var errs []error
	for _, l := range loops {
		var why []error
		if l.runErr != nil && !(l.asked && errors.Is(l.runErr, context.Canceled)) {
			why = append(why, l.runErr)
		}
		timedOut := l.timedOut
		switch {
		case l.shutdownErr == nil:
		case errors.Is(l.shutdownErr, context.DeadlineExceeded):
			timedOut = true // Shutdown gave up at the group's deadline
		default:
			why = append(why, fmt.Errorf("shutdown: %w", l.shutdownErr))
		}
		if timedOut {
			why = append(why, fmt.Errorf("%w (%v)", ErrShutdownTimeout, timeout))
		}
		switch len(why) {
		case 0:
		case 1:
			errs = append(errs, &LoopError{Name: l.name, Err: why[0]})
		default:
			errs = append(errs, &LoopError{Name: l.name, Err: errors.Join(why...)})
		}
	}
	return errors.Join(errs...)
}
