package heartbeat

import "slices"

// CallbackID identifies a callback registered with [Heartbeat.AddCallback].
// IDs start at 1 and are unique within one Heartbeat; 0 is never a valid ID.
type CallbackID uint64

type callback struct {
	id CallbackID
	f  func()
}

// AddCallback registers f to be called on every [Heartbeat.Beat] and returns
// an ID for [Heartbeat.RemoveCallback]. A nil f is ignored and 0 is returned.
//
// Callbacks run synchronously inside Beat, on the beating goroutine, one
// after the other in registration order, possibly from many goroutines at
// once. They must therefore be quick and safe for concurrent use, and must
// never block, do network I/O or call Beat on the same Heartbeat. To hand
// work elsewhere, do a non-blocking send on a buffered channel:
//
//	select {
//	case ch <- struct{}{}:
//	default: // already signalled
//	}
//
// A panic in a callback propagates out of Beat into the handler.
//
// AddCallback is safe for concurrent use with Beat and with itself; a Beat
// running concurrently may or may not see the new callback.
func (h *Heartbeat) AddCallback(f func()) CallbackID {
	if h == nil || f == nil {
		return 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	id := h.nextID
	var next []callback
	if cur := h.callbacks.Load(); cur != nil {
		next = slices.Clone(*cur)
	}
	next = append(next, callback{id: id, f: f})
	h.callbacks.Store(&next)
	return id
}

// RemoveCallback unregisters the callback with the given ID and reports
// whether it was registered. Safe for concurrent use; a Beat already running
// may still call the removed callback once.
func (h *Heartbeat) RemoveCallback(id CallbackID) bool {
	if h == nil || id == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	cur := h.callbacks.Load()
	if cur == nil {
		return false
	}
	i := slices.IndexFunc(*cur, func(c callback) bool { return c.id == id })
	if i < 0 {
		return false
	}
	if len(*cur) == 1 {
		h.callbacks.Store(nil)
		return true
	}
	next := slices.Delete(slices.Clone(*cur), i, i+1)
	h.callbacks.Store(&next)
	return true
}
