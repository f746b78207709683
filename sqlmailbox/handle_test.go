package sqlmailbox

import (
	"strings"
	"testing"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
)

// A receipt handle round-trips to its ref under its queue's key, and only
// there: another key, a changed character, or a string of another length
// is not a handle the queue issued.
func TestReceiptHandles(t *testing.T) {
	key, other := newSigner([]byte(strings.Repeat("k", 32))), newSigner([]byte(strings.Repeat("o", 32)))
	ref := driver.Ref{ID: 1<<40 + 7, ReceiveCount: 3}
	h := key.encode(ref)
	if len(h) != handleLen {
		t.Fatalf("handle %q has %d characters, want %d", h, len(h), handleLen)
	}
	if got, ok := key.decode(h); !ok || got != ref {
		t.Fatalf("decodeHandle = %+v, %v; want %+v", got, ok, ref)
	}
	if h2 := key.encode(driver.Ref{ID: ref.ID, ReceiveCount: 4}); h2 == h {
		t.Errorf("the next receive of the row got the same handle")
	}
	if _, ok := other.decode(h); ok {
		t.Errorf("another queue's key accepted the handle")
	}
	for i := range h {
		c := byte('A')
		if h[i] == 'A' {
			c = 'B'
		}
		if _, ok := key.decode(h[:i] + string(c) + h[i+1:]); ok {
			t.Errorf("the handle with character %d changed was accepted", i)
		}
	}
	for _, bad := range []string{"", h[1:], h + "A", strings.Repeat("!", handleLen)} {
		if _, ok := key.decode(bad); ok {
			t.Errorf("decodeHandle(%q) accepted it", bad)
		}
	}
}
