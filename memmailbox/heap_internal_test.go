package memmailbox

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestTimeHeapKeepsOrderUnderRemoveAndFix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Unix(0, 0)
	var h timeHeap
	live := map[*record]bool{}
	for range 5000 {
		switch op := rng.IntN(4); {
		case op <= 1 || len(h) == 0:
			r := &record{due: base.Add(time.Duration(rng.IntN(1000)))}
			h.push(r)
			live[r] = true
		case op == 2:
			r := h[rng.IntN(len(h))]
			h.remove(r)
			delete(live, r)
		default:
			r := h[rng.IntN(len(h))]
			r.due = base.Add(time.Duration(rng.IntN(1000)))
			h.fix(r.hidx)
		}
		for i, r := range h {
			if r.hidx != i {
				t.Fatalf("record at %d has index %d", i, r.hidx)
			}
			if i > 0 && h[(i-1)/2].due.After(r.due) {
				t.Fatalf("heap order broken at %d", i)
			}
		}
	}
	if len(h) != len(live) {
		t.Fatalf("heap has %d records, want %d", len(h), len(live))
	}
	var last time.Time
	for len(h) > 0 {
		r := h.pop()
		if r.due.Before(last) {
			t.Fatal("pop out of order")
		}
		last = r.due
	}
}

func TestDedupWindowForgetsInOrderAndCompacts(t *testing.T) {
	var w dedupWindow
	t0 := time.Unix(0, 0)
	for i := range 100 {
		w.add(string(rune('a'+i%26))+string(rune('0'+i/26)), "id", "seq", t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(deduplicationInterval + 59*time.Second) // entries 0..59 expired
	if _, ok := w.lookup("a0", now); ok {
		t.Error("entry 0 still remembered after the interval")
	}
	if e, ok := w.lookup("i2", now); !ok || e.messageID != "id" || e.seq != "seq" { // entry 60
		t.Error("entry 60 forgotten too early")
	}
	if len(w.queue) != 40 || w.head != 0 {
		t.Errorf("queue len %d head %d, want compacted to 40", len(w.queue), w.head)
	}
	w.add("new", "id2", "seq2", now)
	if e, ok := w.lookup("new", now); !ok || e.messageID != "id2" {
		t.Error("entry added after compaction not found")
	}
}
