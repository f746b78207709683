package memmailbox_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop"
)

func TestQueueDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs", Delay: 5 * time.Second})
		send(t, q, bodies("a")...)
		if got := receive(t, q, 1, time.Minute); len(got) != 0 {
			t.Fatalf("received %q during the delay", bodiesOf(got))
		}
		wantStats(t, q, 0, 0, 1)
		time.Sleep(5 * time.Second)
		if got := receive(t, q, 1, time.Minute); len(got) != 1 {
			t.Fatalf("received %d after the delay, want 1", len(got))
		}
	})
}

func TestMessageDelayOverridesQueueDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs", Delay: 10 * time.Second})
		send(t, q,
			sqsloop.OutgoingMessage{Body: "short", Delay: 2 * time.Second},
			sqsloop.OutgoingMessage{Body: "queue default"},
			sqsloop.OutgoingMessage{Body: "long", Delay: 15 * time.Minute},
		)
		time.Sleep(2 * time.Second)
		if got := bodiesOf(receive(t, q, 10, time.Hour)); len(got) != 1 || got[0] != "short" {
			t.Fatalf("after 2s received %q, want [short]", got)
		}
		time.Sleep(8 * time.Second)
		if got := bodiesOf(receive(t, q, 10, time.Hour)); len(got) != 1 || got[0] != "queue default" {
			t.Fatalf("after 10s received %q, want [queue default]", got)
		}
		wantStats(t, q, 0, 2, 1)
		time.Sleep(15*time.Minute - 10*time.Second)
		if got := bodiesOf(receive(t, q, 10, time.Hour)); len(got) != 1 || got[0] != "long" {
			t.Fatalf("after 15m received %q, want [long]", got)
		}
	})
}

func TestDelayedMessagesTurnVisibleInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, q := newQueue(t, sqsloop.QueueSpec{Name: "jobs"})
		for _, d := range []int{5, 1, 4, 2, 3} {
			send(t, q, sqsloop.OutgoingMessage{Body: string(rune('0' + d)), Delay: time.Duration(d) * time.Second})
		}
		time.Sleep(5 * time.Second)
		got := bodiesOf(receive(t, q, 10, time.Hour))
		if want := []string{"1", "2", "3", "4", "5"}; len(got) != 5 || got[0] != want[0] || got[4] != want[4] {
			t.Fatalf("received %q, want %q (in the order their delays ended)", got, want)
		}
	})
}
