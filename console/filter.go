package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop/sqlmailbox"
)

// filter selects messages: every field set must match, and the zero
// filter matches every message. It is what the message pages' form sets
// and what an action acts on ("all matching").
type filter struct {
	// Body matches a body holding it (case-sensitive).
	Body string
	// Path is a JSON path into the body ("$.customer.tier",
	// "items[0].sku", or "customer.tier"): a body that is JSON and has a
	// value there matches; with PathValue set, only one whose value there
	// is PathValue (a string's text, a number, true, false or null as JSON
	// writes them).
	Path, PathValue string
	// Attribute matches a message that has the message attribute of that
	// name; with AttributeValue set, one whose String or Number value is
	// AttributeValue exactly.
	Attribute, AttributeValue string
	// MinReceives and MaxReceives bound the approximate receive count,
	// inclusive; 0 is no bound.
	MinReceives, MaxReceives int
	// SentAfter and SentBefore bound when the message was sent
	// (exclusive); zero is no bound. The form sets them from ages
	// ("older than 10m").
	SentAfter, SentBefore time.Time
	// Group matches the messages of that message group.
	Group string
}

// isZero reports a filter that matches every message.
func (f filter) isZero() bool { return f == filter{} }

// parseFilter reads a filter from a form or query: body, path ("a.b" or
// "a.b=value"), attr ("name" or "name=value"), rcmin, rcmax, older and
// newer (ages: "10m", "2h", at now), sent_after and sent_before (RFC 3339,
// as an action's form carries them), group. It names the field of a bad
// value.
func parseFilter(v url.Values, now time.Time) (filter, error) {
	var f filter
	var errs []error
	f.Body = v.Get("body")
	f.Path, f.PathValue, _ = strings.Cut(strings.TrimSpace(v.Get("path")), "=")
	if f.Path != "" {
		if _, err := parsePath(f.Path); err != nil {
			errs = append(errs, fmt.Errorf("path: %w", err))
		}
	}
	f.Attribute, f.AttributeValue, _ = strings.Cut(strings.TrimSpace(v.Get("attr")), "=")
	if f.Attribute != "" && !validAttributeName(f.Attribute) {
		errs = append(errs, fmt.Errorf("attr: %q is not a message attribute name (letters, digits, '_', '-' and '.')", f.Attribute))
	}
	if f.AttributeValue != "" && f.Attribute == "" {
		errs = append(errs, errors.New("attr: a value needs a name: name=value"))
	}
	count := func(name string) int {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s: want a receive count, 0 or more, got %q", name, s))
		}
		return n
	}
	f.MinReceives, f.MaxReceives = count("rcmin"), count("rcmax")
	age := func(name string) time.Duration {
		s := strings.TrimSpace(v.Get(name))
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: want an age such as 90s, 10m or 2h, got %q", name, s))
		}
		return d
	}
	if d := age("older"); d > 0 {
		f.SentBefore = now.Add(-d)
	}
	if d := age("newer"); d > 0 {
		f.SentAfter = now.Add(-d)
	}
	instant := func(name string, into *time.Time) {
		s := v.Get(name)
		if s == "" {
			return
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: want an RFC 3339 time, got %q", name, s))
		}
		*into = t
	}
	instant("sent_after", &f.SentAfter)
	instant("sent_before", &f.SentBefore)
	f.Group = v.Get("group")
	return f, errors.Join(errs...)
}

// values returns f as an action's form carries it: the ages as the
// instants they were resolved to, so that the action selects what the
// dry run counted.
func (f filter) values() url.Values {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("body", f.Body)
	set("path", joinEq(f.Path, f.PathValue))
	set("attr", joinEq(f.Attribute, f.AttributeValue))
	if f.MinReceives > 0 {
		v.Set("rcmin", strconv.Itoa(f.MinReceives))
	}
	if f.MaxReceives > 0 {
		v.Set("rcmax", strconv.Itoa(f.MaxReceives))
	}
	if !f.SentAfter.IsZero() {
		v.Set("sent_after", f.SentAfter.UTC().Format(time.RFC3339Nano))
	}
	if !f.SentBefore.IsZero() {
		v.Set("sent_before", f.SentBefore.UTC().Format(time.RFC3339Nano))
	}
	set("group", f.Group)
	return v
}

func joinEq(k, v string) string {
	if v == "" {
		return k
	}
	return k + "=" + v
}

// String describes f in words, for the pages and the action log.
func (f filter) String() string {
	var parts []string
	if f.Body != "" {
		parts = append(parts, fmt.Sprintf("body contains %q", f.Body))
	}
	if f.Path != "" {
		if f.PathValue != "" {
			parts = append(parts, fmt.Sprintf("JSON %s = %q", f.Path, f.PathValue))
		} else {
			parts = append(parts, fmt.Sprintf("JSON has %s", f.Path))
		}
	}
	if f.Attribute != "" {
		if f.AttributeValue != "" {
			parts = append(parts, fmt.Sprintf("attribute %s = %q", f.Attribute, f.AttributeValue))
		} else {
			parts = append(parts, fmt.Sprintf("has attribute %s", f.Attribute))
		}
	}
	if f.MinReceives > 0 {
		parts = append(parts, fmt.Sprintf("received ≥ %d times", f.MinReceives))
	}
	if f.MaxReceives > 0 {
		parts = append(parts, fmt.Sprintf("received ≤ %d times", f.MaxReceives))
	}
	if !f.SentAfter.IsZero() {
		parts = append(parts, "sent after "+f.SentAfter.UTC().Format(time.DateTime)+" UTC")
	}
	if !f.SentBefore.IsZero() {
		parts = append(parts, "sent before "+f.SentBefore.UTC().Format(time.DateTime)+" UTC")
	}
	if f.Group != "" {
		parts = append(parts, fmt.Sprintf("message group %q", f.Group))
	}
	if len(parts) == 0 {
		return "every message"
	}
	return strings.Join(parts, ", ")
}

// match reports whether the record matches f.
func (f filter) match(r *record) bool {
	switch {
	case f.Body != "" && !strings.Contains(r.Body, f.Body),
		f.Group != "" && r.GroupID != f.Group,
		f.MinReceives > 0 && r.ReceiveCount < f.MinReceives,
		f.MaxReceives > 0 && r.ReceiveCount > f.MaxReceives,
		!f.SentAfter.IsZero() && !r.SentAt.After(f.SentAfter),
		!f.SentBefore.IsZero() && !r.SentAt.Before(f.SentBefore):
		return false
	}
	if f.Attribute != "" {
		a, ok := r.Attributes[f.Attribute]
		if !ok || (f.AttributeValue != "" && (strings.HasPrefix(a.DataType, "Binary") || a.StringValue != f.AttributeValue)) {
			return false
		}
	}
	return f.matchPath(r.Body)
}

// database returns the part of f a database mailbox applies itself (all
// but the JSON path), and whether a JSON path is left for matchPath. A
// JSON path's value that JSON writes as it is (pathNeedle) is also asked of
// the database as a substring of the body, when the filter asks none:
// bodies without it cannot match, and the database leaves them out.
func (f filter) database() (sqlmailbox.MessageFilter, bool) {
	mf := sqlmailbox.MessageFilter{BodyContains: f.Body, Attribute: f.Attribute, AttributeValue: f.AttributeValue,
		MinReceiveCount: f.MinReceives, MaxReceiveCount: f.MaxReceives, SentAfter: f.SentAfter, SentBefore: f.SentBefore,
		MessageGroupID: f.Group}
	if mf.BodyContains == "" && f.pathNeedle() {
		mf.BodyContains = f.PathValue
	}
	return mf, f.Path != ""
}

// pathNeedle reports whether a body whose JSON path has f.PathValue holds
// f.PathValue as it is: a scalar (a string's text, a number, true, false,
// null) of printable ASCII that no JSON writer escapes (no quote,
// backslash, or the <, > and & an HTML-safe writer escapes).
func (f filter) pathNeedle() bool {
	v := f.PathValue
	if v == "" || v[0] == '{' || v[0] == '[' {
		return false
	}
	for i := range len(v) {
		if c := v[i]; c < ' ' || c > '~' || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// matchPath reports whether body matches f's JSON path (true without
// one).
func (f filter) matchPath(body string) bool {
	if f.Path == "" {
		return true
	}
	if f.pathNeedle() && !strings.Contains(body, f.PathValue) {
		return false // cannot hold it: no need to decode
	}
	steps, err := parsePath(f.Path)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	for _, s := range steps {
		switch node := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = node[s.key]; !ok || s.key == "" {
				return false
			}
		case []any:
			if s.index < 0 || s.index >= len(node) {
				return false
			}
			v = node[s.index]
		default:
			return false
		}
	}
	if f.PathValue == "" {
		return true
	}
	switch x := v.(type) {
	case string:
		return x == f.PathValue
	case json.Number:
		return x.String() == f.PathValue
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x) // decoded JSON: cannot fail
		return strings.TrimSuffix(b.String(), "\n") == f.PathValue
	}
}

// step is one step of a JSON path: an object's key, or an array's index
// (key "", index ≥ 0).
type step struct {
	key   string
	index int
}

// parsePath parses "$.a.b[2].c", "a.b.2.c" or ".a": keys between dots,
// indexes in brackets (or as a digits-only key on an array: "a.0" reads
// index 0 of an array, key "0" of an object).
func parsePath(p string) ([]step, error) {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	if p == "" {
		return nil, errors.New("empty JSON path")
	}
	var steps []step
	for _, part := range strings.Split(p, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" && rest == "" {
			return nil, fmt.Errorf("%q: an empty key", p)
		}
		if key != "" {
			s := step{key: key, index: -1}
			if n, err := strconv.Atoi(key); err == nil && n >= 0 {
				s.index = n // an array's index, or an object's key
			}
			steps = append(steps, s)
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(num)
			if !ok || err != nil || n < 0 {
				return nil, fmt.Errorf("%q: want [N] with N an index", p)
			}
			steps = append(steps, step{index: n})
			rest = strings.TrimPrefix(after, "[")
			if after != "" && !strings.HasPrefix(after, "[") {
				return nil, fmt.Errorf("%q: want [N] at the end of a key", p)
			}
		}
	}
	return steps, nil
}

// validAttributeName reports a name SQS allows for a message attribute:
// letters, digits, '_', '-' and '.', 1–256 of them.
func validAttributeName(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
