package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop/benchmarks/wire"
)

// tableRows returns the rows of the markdown table written by write,
// failing the test unless it has a header, a rule and n rows.
func tableRows(t *testing.T, write func(io.Writer), n int) []string {
	t.Helper()
	var sb strings.Builder
	write(&sb)
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 2+n {
		t.Fatalf("got %d lines, want header, rule and %d rows:\n%s", len(lines), n, sb.String())
	}
	return lines[2:]
}

func TestWriteTableMediansPerGroup(t *testing.T) {
	mk := func(impl string, wall time.Duration, recv int64, dup int64, left int) result {
		return result{scenario: "fast", impl: impl, messages: 100, wall: wall, allHandled: wall / 2, cpu: 10 * time.Millisecond,
			requests: wire.Counts{wire.ReceiveMessage: recv, wire.DeleteMessageBatch: 10, "GetQueueAttributes": 1}, duplicates: dup,
			left: depth{visible: left, inFlight: left}}
	}
	rs := []result{
		mk("a", 1*time.Second, 10, 0, 0), mk("b", 4*time.Second, 30, 0, 0),
		mk("a", 3*time.Second, 12, 2, 1), mk("b", 4*time.Second, 30, 0, 0),
		mk("a", 2*time.Second, 11, 0, 0), mk("b", 4*time.Second, 30, 0, 0),
	}
	rows := tableRows(t, func(w io.Writer) { writeTable(w, rs) }, 2)
	// a: wall median 2 s → 50 msgs/s, all handled at 1 s; receives median
	// 11; 11+10+1 = 22 requests for 100 messages; CPU 100 µs/msg;
	// duplicates 0 (max 2); undeleted 0 (max 2: 1 visible, 1 in flight).
	wantA := "| fast | a | 3 | 2.00 | 1.00 | 50 | 11 | 0 | 10 | 0 | 0 | 1 | 0.220 | 100 | n/a | 0 (max 2) | 0 (max 2) |"
	if rows[0] != wantA {
		t.Errorf("row a:\n got %s\nwant %s", rows[0], wantA)
	}
	if !strings.HasPrefix(rows[1], "| fast | b | 3 | 4.00 | 2.00 | 25 | 30 |") {
		t.Errorf("row b: %s", rows[1])
	}
}

func TestPick(t *testing.T) {
	all := scenarios(time.Second, 16, 16)
	scenarioName := func(s scenario) string { return s.name }
	got, err := pick("scenarios", all, scenarioName, "slow, fast")
	if err != nil || len(got) != 2 || got[0].name != "slow" || got[1].name != "fast" {
		t.Fatalf("pick(slow, fast) = %v, %v", got, err)
	}
	if _, err := pick("scenarios", all, scenarioName, "fast,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pick(nope) error = %v, want one naming the scenario", err)
	}
	if _, err := pick("impls", impls(), func(im impl) string { return im.name }, "sqsloop,nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("pick(impls: nope) error = %v, want one naming the implementation", err)
	}
	if got, err := pick("scenarios", all, scenarioName, " , "); err == nil {
		t.Errorf("pick of no name = %v, want an error (the warm-up runs the first scenario)", got)
	}
}

// TestRotate checks the run order of the implementations: each
// repetition starts one further along, so none always runs first or
// always after the same other.
func TestRotate(t *testing.T) {
	xs := []string{"a", "b", "c", "d"}
	for k, want := range []string{"abcd", "bcda", "cdab", "dabc", "abcd"} {
		if got := strings.Join(rotate(xs, k), ""); got != want {
			t.Errorf("rotate(abcd, %d) = %s, want %s", k, got, want)
		}
	}
	if strings.Join(xs, "") != "abcd" {
		t.Errorf("rotate changed its argument: %v", xs)
	}
	if got := rotate([]string(nil), 3); len(got) != 0 {
		t.Errorf("rotate(nil, 3) = %v", got)
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
	rows := tableRows(t, func(w io.Writer) {
		writeWorkersTable(w, []result{one,
			mk(10*time.Second, 0, 20, 20, 0, 0, 1),
			mk(15*time.Second, 5*time.Second, 30, 14, 4, 4, 3),
			mk(11*time.Second, time.Second, 24, 16, 1, 0, 1),
		})
	}, 1)
	want := "| two-workers | a | 3 | 11.00 | 20/20, 30/14, 24/16 | 0 (max 4) | 1 (max 3) | 1.00, 5.00 | 2.00 | 1 (max 4) |"
	if rows[0] != want {
		t.Errorf("row:\n got %s\nwant %s", rows[0], want)
	}
}
