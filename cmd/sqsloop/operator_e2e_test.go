package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// send, stats, peek, redrive and purge do what they say, one after the
// other on one queue: send from arguments, standard input and a file; stats
// counts them; peek prints them and deletes none; exec with a poison exit
// status moves them to the dead-letter queue; redrive moves them back
// (without the poison attributes); purge asks, then deletes them.
func TestOperatorCommands(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b *backend) {
		queue, dlq := b.create(t, 10)
		with := func(args ...string) []string { return append(args, queue...) }

		file := filepath.Join(t.TempDir(), "body")
		if err := os.WriteFile(file, []byte("e"), 0o600); err != nil {
			t.Fatal(err)
		}
		var ids []string
		ids = append(ids, lines(t, writeTemp(t, b.run(t, "", with("send", "a", "b", "--attr", "color=blue")...)))...)
		ids = append(ids, lines(t, writeTemp(t, b.run(t, "c\n\nd\n", with("send")...)))...)
		ids = append(ids, lines(t, writeTemp(t, b.run(t, "", with("send", "--file", file)...)))...)
		if len(ids) != 5 {
			t.Fatalf("send printed %d message IDs, want 5 (a, b, c, d, e; the empty line skipped): %q", len(ids), ids)
		}
		if got, want := b.counts(t, queue), (counts{Visible: 5}); got != want {
			t.Fatalf("stats after send: %+v, want %+v", got, want)
		}

		bodies := func(out string) []string {
			l := strings.Fields(out)
			slices.Sort(l)
			return l
		}
		want := []string{"a", "b", "c", "d", "e"}
		if got := bodies(b.run(t, "", with("peek")...)); !slices.Equal(got, want) {
			t.Errorf("peek = %q, want %q", got, want)
		}
		if got := bodies(b.run(t, "", with("peek")...)); !slices.Equal(got, want) {
			t.Errorf("peek again = %q, want %q (peek deletes nothing, hides nothing)", got, want)
		}
		if got, want := b.countsAfterPeek(t, queue), (counts{Visible: 5}); got != want {
			t.Errorf("stats after peek: %+v, want %+v (peek deletes nothing, hides nothing)", got, want)
		}
		peeked := peekJSON(t, b.run(t, "", with("peek", "--json")...))
		if len(peeked) != 5 {
			t.Fatalf("peek --json printed %d messages, want 5", len(peeked))
		}
		for _, m := range peeked {
			if !slices.Contains(ids, m.ID) {
				t.Errorf("peek --json: message %q is none of those send printed %q", m.ID, ids)
			}
			if got := m.MessageAttributes["color"].StringValue; (m.Body == "a" || m.Body == "b") != (got == "blue") {
				t.Errorf("peek --json: message %q has color %q; want blue on a and b only", m.Body, got)
			}
		}

		poison := append([]string{"exec", "--wait-time", "1s", "--exit-when-idle", "3s", "--poison-exit-code", "3"}, queue...)
		pp := b.start(t, "", append(poison, "--", "sh", "-c", "exit 3")...)
		if err := pp.wait(t); err != nil {
			t.Fatalf("the poison run: %v; stderr:\n%s", err, pp.stderr.String())
		}
		// The stop line counts what sits in the dead-letter queue (a main
		// said dead_lettered=0 of messages the redrive policy moved).
		if stop := pp.stderr.String(); !strings.Contains(stop, "poisoned=5") || !strings.Contains(stop, "dead_letter_queue=5") {
			t.Errorf("the poison run's log lacks poisoned=5 and dead_letter_queue=5 in its stop line:\n%s", stop)
		}
		if got, want := b.counts(t, queue), (counts{DeadLettered: 5}); got != want {
			t.Fatalf("stats after the poison run: %+v, want %+v", got, want)
		}
		if got := bodies(b.run(t, "", append([]string{"peek"}, dlq...)...)); !slices.Equal(got, want) {
			t.Errorf("peek of the dead-letter queue = %q, want %q", got, want)
		}

		if out := b.run(t, "", append(with("redrive"), b.redrive...)...); !strings.Contains(out, "moved 5 messages") {
			t.Errorf("redrive printed %q, want it to say it moved 5 messages", out)
		}
		if got, want := b.counts(t, queue), (counts{Visible: 5}); got != want {
			t.Errorf("stats after redrive: %+v, want %+v", got, want)
		}
		for _, m := range peekJSON(t, b.run(t, "", with("peek", "--json")...)) {
			for name := range m.MessageAttributes {
				if strings.HasPrefix(name, "sqsloop.poison") {
					t.Errorf("redriven message %q keeps the poison attribute %s", m.Body, name)
				}
			}
		}

		p := b.start(t, "n\n", with("purge")...)
		if err := p.wait(t); exitCode(err) != 1 || !strings.Contains(p.stderr.String(), "not confirmed") {
			t.Errorf("purge answered n: exit status %d, stderr %q; want 1 and \"not confirmed\"", exitCode(err), p.stderr.String())
		}
		if got, want := b.countsAfterPeek(t, queue), (counts{Visible: 5}); got != want {
			t.Errorf("stats after a purge not confirmed: %+v, want %+v", got, want)
		}
		b.run(t, "", with("purge", "--yes")...)
		if got := b.counts(t, queue); got != (counts{}) {
			t.Errorf("stats after purge --yes: %+v, want every count 0", got)
		}
	})
}

// countsAfterPeek is counts after a peek (a receive with visibility
// timeout 0): on a server that countsExpiredAsInFlight, the messages peek
// showed count as visible, as SQS counts them.
func (b *backend) countsAfterPeek(t *testing.T, queue []string) counts {
	t.Helper()
	c := b.counts(t, queue)
	if b.countsExpiredAsInFlight {
		c.Visible, c.InFlight = c.Visible+c.InFlight, 0
	}
	return c
}

// writeTemp writes s to a file of t's and returns its path.
func writeTemp(t *testing.T, s string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// peekJSON parses peek --json's lines.
func peekJSON(t *testing.T, out string) []messageJSON {
	t.Helper()
	var msgs []messageJSON
	for l := range strings.Lines(out) {
		var m messageJSON
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("peek --json: %v in %q", err, l)
		}
		msgs = append(msgs, m)
	}
	return msgs
}
