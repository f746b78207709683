package lifecycle

import (
	"fmt"
	"os"
	"syscall"
)

// Install starts handling the configured signals (SIGTERM and SIGINT by
// default) with [os/signal.Notify] and starts the one goroutine that watches
// them; Stop ends it. The first signal begins shutdown, exactly like
// Trigger. Any later signal calls the Exit function at once with the
// signal's exit code (130 for SIGINT, 143 for SIGTERM): the user asked twice.
// Signals are counted, not shutdowns: a signal arriving after a Trigger (for
// example the SIGTERM of a rolling deploy while a failed loop is draining)
// is a first signal and does not exit.
//
// A second Install returns [ErrAlreadyInstalled] and changes nothing;
// Install after Stop returns [ErrCoordinatorStopped].
func (c *ShutdownCoordinator) Install() error {
	c.init()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.stopped:
		return ErrCoordinatorStopped
	case c.installed:
		return ErrAlreadyInstalled
	}
	c.installed = true
	c.notify(c.sigCh, c.cfg.Signals...)
	c.wg.Go(c.watch)
	return nil
}

// watch is the signal goroutine. It owns nothing it closes: it reads sigCh
// until Stop closes quit.
func (c *ShutdownCoordinator) watch() {
	seen := 0
	for {
		select {
		case <-c.quit:
			return
		case sig := <-c.sigCh:
			seen++
			if seen == 1 {
				c.trigger(fmt.Errorf("%w: received signal %v", ErrShutdown, sig))
				continue
			}
			c.cfg.Exit(exitCode(sig))
		}
	}
}

// exitCode is the conventional status of a process killed by sig: 128 plus
// the signal number (SIGINT 2 → 130, SIGTERM 15 → 143), or 1 for a signal
// that has no number.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok && s > 0 {
		return 128 + int(s)
	}
	return 1
}
