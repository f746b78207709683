package sqslambda

import (
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// A failed record leaves a WARN line with its message ID, receive count and
// error (the panicking one has its own ERROR line), as under a consumer:
// the same rate-limited log (internal/failurelog).
func TestHandlerFailureIsLoggedAtWarn(t *testing.T) {
	ev := fixture(t, "standard.json")
	log, l := newLogger()
	h := mustNew(t, byBody(nil), Config{Logger: log})
	if _, err := h.Handle(invocation(t, time.Minute), ev); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids, errs []string
	for _, r := range l.recs {
		if r.Level != slog.LevelWarn || !strings.HasPrefix(r.Message, "sqslambda: handler failed") {
			continue
		}
		if !strings.Contains(r.Message, "when the queue's visibility timeout ends") {
			t.Errorf("without a client: %q, want it to say the record comes back when the visibility timeout ends", r.Message)
		}
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "message_id":
				ids = append(ids, a.Value.String())
			case "error":
				errs = append(errs, a.Value.String())
			case "receive_count":
			default:
				t.Errorf("attribute %s=%v, want message_id, receive_count and error only", a.Key, a.Value)
			}
			return true
		})
	}
	slices.Sort(ids)
	if want := idsOf(ev, 2, 6); !slices.Equal(ids, want) || len(errs) != 2 || !strings.HasPrefix(errs[0], "fail") {
		t.Errorf("WARN lines for %v with errors %v, want one for each failing record %v", ids, errs, want)
	}
}
