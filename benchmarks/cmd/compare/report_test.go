package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestWriteTableMediansPerGroup(t *testing.T) {
	mk := func(impl string, wall time.Duration, recv int64, dup int64) result {
		return result{scenario: "fast", impl: impl, messages: 100, wall: wall, cpu: 10 * time.Millisecond,
			requests: wire.Counts{wire.ReceiveMessage: recv, wire.DeleteMessageBatch: 10, "GetQueueAttributes": 1}, duplicates: dup}
	}
	rs := []result{
		mk("a", 1*time.Second, 10, 0), mk("b", 4*time.Second, 30, 0),
		mk("a", 3*time.Second, 12, 2), mk("b", 4*time.Second, 30, 0),
		mk("a", 2*time.Second, 11, 0), mk("b", 4*time.Second, 30, 0),
	}
	var sb strings.Builder
	writeTable(&sb, rs)
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d lines, want header, rule and 2 rows:\n%s", len(lines), sb.String())
	}
	// a: wall median 2 s → 50 msgs/s; receives median 11; 11+10+1 = 22
	// requests for 100 messages; CPU 100 µs/msg; duplicates 0 (max 2).
	wantA := "| fast | a | 3 | 2.00 | 0.00 | 50 | 11 | 0 | 10 | 0 | 0 | 1 | 0.220 | 100 | n/a | 0 (max 2) | 0 |"
	if lines[2] != wantA {
		t.Errorf("row a:\n got %s\nwant %s", lines[2], wantA)
	}
	if !strings.HasPrefix(lines[3], "| fast | b | 3 | 4.00 | 0.00 | 25 | 30 |") {
		t.Errorf("row b: %s", lines[3])
	}
}

func TestPick(t *testing.T) {
	all := scenarios(time.Second, 16, 16)
	got, err := pick(all, "slow, fast")
	if err != nil || len(got) != 2 || got[0].name != "slow" || got[1].name != "fast" {
		t.Fatalf("pick(slow, fast) = %v, %v", got, err)
	}
	if _, err := pick(all, "fast,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pick(nope) error = %v, want one naming the scenario", err)
	}
	if _, err := pickImpls("sqsloop,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pickImpls(nope) error = %v, want one naming the implementation", err)
	}
}

func TestWriteWorkersTable(t *testing.T) {
	one := result{scenario: "slow", impl: "a", messages: 40, wall: time.Second}
	mk := func(wall, largest time.Duration, a, b, long int, dup, rc int64) result {
		return result{scenario: "two-workers", impl: "a", messages: 40, wall: wall, duplicates: dup, maxReceiveCount: rc,
			workers: &workerStats{handled: []int{a, b}, largestWait: largest, totalWait: 2 * largest, waitedLong: long}}
	}
	var sb strings.Builder
	writeWorkersTable(&sb, []result{one})
	if sb.Len() != 0 {
		t.Errorf("a table for results of one worker:\n%s", sb.String())
	}
	writeWorkersTable(&sb, []result{one,
		mk(10*time.Second, 0, 20, 20, 0, 0, 1),
		mk(15*time.Second, 5*time.Second, 30, 14, 4, 4, 3),
		mk(11*time.Second, time.Second, 24, 16, 1, 0, 1),
	})
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want header, rule and 1 row:\n%s", len(lines), sb.String())
	}
	want := "| two-workers | a | 3 | 11.00 | 20/20, 30/14, 24/16 | 0 (max 4) | 1 (max 3) | 1.00, 5.00 | 2.00 | 1 (max 4) |"
	if lines[2] != want {
		t.Errorf("row:\n got %s\nwant %s", lines[2], want)
	}
}
