package sqlmailbox

import "testing"

// signaled reports which of ws have a wake-up waiting, in order.
func signaled(ws []*waiter) []bool {
	out := make([]bool, len(ws))
	for i, w := range ws {
		select {
		case <-w.ch:
			out[i] = true
		default:
		}
	}
	return out
}

func same(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A wake-up of n messages wakes the long polls whose receives take n
// together, waiting ones first, the oldest first, not every one of the
// queue (a thundering herd); "all" wakes every one; another queue's long
// polls sleep on.
func TestHubWakesAsManyAsTheMessagesNeed(t *testing.T) {
	var h hub
	var ws []*waiter
	for _, want := range []int{1, 1, 10, 1} {
		w := h.join(1, want)
		h.look(w)
		ws = append(ws, w)
	}
	h.wait(ws[1])
	h.wait(ws[2])
	other := h.join(2, 10)
	h.wait(other)

	h.wake(1, 1)
	if got, want := signaled(ws), []bool{false, true, false, false}; !same(got, want) {
		t.Fatalf("one message woke %v, want %v (the oldest waiting)", got, want)
	}
	h.look(ws[1])
	h.wait(ws[1])
	h.wake(1, 3) // the waiting ones first: 1 (takes 1) and 2 (takes 10)
	if got, want := signaled(ws), []bool{false, true, true, false}; !same(got, want) {
		t.Fatalf("three messages woke %v, want %v", got, want)
	}
	// Woken and not looked since, they are passed over; none waiting is
	// left: the looking ones, oldest first.
	h.wake(1, 2)
	if got, want := signaled(ws), []bool{true, false, false, true}; !same(got, want) {
		t.Fatalf("two more woke %v, want %v", got, want)
	}
	if got := signaled([]*waiter{other}); got[0] {
		t.Fatal("a wake-up of queue 1 woke a long poll of queue 2")
	}
	h.wake(2, all)
	if got := signaled([]*waiter{other}); !got[0] {
		t.Fatal("a wake-up of every long poll of queue 2 missed one")
	}
}

// A long poll that was woken and leaves without looking again (its receive
// returned, its context ended) passes the wake-up on to the next one.
func TestHubPassesAWakeUpOn(t *testing.T) {
	var h hub
	a, b := h.join(1, 10), h.join(1, 10)
	h.wait(a)
	h.wait(b)
	h.wake(1, 1)
	if got, want := signaled([]*waiter{a, b}), []bool{true, false}; !same(got, want) {
		t.Fatalf("one message woke %v, want %v", got, want)
	}
	h.leave(a)
	if got := signaled([]*waiter{b}); !got[0] {
		t.Fatal("the wake-up a long poll left with was not passed on")
	}
	h.look(b)
	h.leave(b) // looked since: nothing to pass on
	if len(h.queues) != 0 {
		t.Fatalf("queues left after every long poll left: %v", h.queues)
	}
}
