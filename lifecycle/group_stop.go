package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// stop stops every loop in toStop: a Shutdowner gets Shutdown(base), a
// context without deadline, and keeps its Run context until its Run has
// returned; any other loop has its Run context cancelled at once. It then
// waits for every loop (loops) and every Shutdown call, however long they
// take: the loop owns its drain budget.
func stop(base context.Context, toStop []*loop, loops *sync.WaitGroup) {
	var stoppers sync.WaitGroup
	for _, l := range toStop {
		sd, ok := l.r.(Shutdowner)
		if !ok {
			l.cancel()
			continue
		}
		stoppers.Go(func() { l.shutdownErr = sd.Shutdown(base) })
	}
	loops.Wait()
	stoppers.Wait()
}

// collect builds Run's result from the loops' recorded outcomes.
func collect(loops []*loop) error {
	var errs []error
	for _, l := range loops {
		var why []error
		if l.runErr != nil && !(l.asked && errors.Is(l.runErr, context.Canceled)) {
			why = append(why, l.runErr)
		}
		if l.shutdownErr != nil {
			why = append(why, fmt.Errorf("shutdown: %w", l.shutdownErr))
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
