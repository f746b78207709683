package heartbeat_test

import (
	"slices"
	"testing"

	"github.com/sqsloop/sqsloop/heartbeat"
)

func TestCallbacks(t *testing.T) {
	h := heartbeat.New()
	var got []string
	a := h.AddCallback(func() { got = append(got, "a") })
	b := h.AddCallback(func() { got = append(got, "b") })
	if a == 0 || b == 0 || a == b {
		t.Fatalf("AddCallback IDs = %d, %d; want distinct and non-zero", a, b)
	}

	h.Beat()
	if want := []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after one beat, calls = %v, want %v", got, want)
	}
	h.Beat() // every beat calls, even while a beat is pending
	if want := []string{"a", "b", "a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after two beats, calls = %v, want %v", got, want)
	}

	if !h.RemoveCallback(a) {
		t.Fatal("RemoveCallback(a) = false, want true")
	}
	if h.RemoveCallback(a) {
		t.Fatal("second RemoveCallback(a) = true, want false")
	}
	got = nil
	h.Beat()
	if want := []string{"b"}; !slices.Equal(got, want) {
		t.Fatalf("after removing a, calls = %v, want %v", got, want)
	}

	if !h.RemoveCallback(b) {
		t.Fatal("RemoveCallback(b) = false, want true")
	}
	got = nil
	h.Beat()
	if len(got) != 0 {
		t.Fatalf("after removing all, calls = %v, want none", got)
	}

	c := h.AddCallback(func() { got = append(got, "c") })
	if c == a || c == b {
		t.Fatalf("ID %d reused; want a fresh ID", c)
	}
	h.Beat()
	if want := []string{"c"}; !slices.Equal(got, want) {
		t.Fatalf("after adding c, calls = %v, want %v", got, want)
	}
}

func TestAddNilCallback(t *testing.T) {
	h := heartbeat.New()
	if id := h.AddCallback(nil); id != 0 {
		t.Fatalf("AddCallback(nil) = %d, want 0", id)
	}
	h.Beat() // must not call a nil func
	if h.RemoveCallback(0) {
		t.Fatal("RemoveCallback(0) = true, want false")
	}
	if h.RemoveCallback(42) {
		t.Fatal("RemoveCallback(unknown) = true, want false")
	}
}

// A callback's typical job: a non-blocking send that never stalls Beat.
func TestCallbackNonBlockingSignal(t *testing.T) {
	h := heartbeat.New()
	ch := make(chan struct{}, 1)
	h.AddCallback(func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	for range 10 {
		h.Beat() // would deadlock here if the send blocked
	}
	if len(ch) != 1 {
		t.Fatalf("signal channel holds %d, want 1", len(ch))
	}
}
