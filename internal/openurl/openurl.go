// Package openurl reads the URLs the mailbox and store openers get
// (sqsloop.OpenMailbox, jobstate.Open): their parameters, each taken once
// and any other refused by name, and the file a sqlite: URL names. Written
// once for every opener, so that they agree.
package openurl

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// Query is the parameters of one URL, for one opener. Not safe for
// concurrent use.
type Query struct {
	u     *url.URL
	v     url.Values
	taken []string
	errs  []string
}

// Parse returns u's parameters.
func Parse(u *url.URL) *Query {
	return &Query{u: u, v: u.Query()}
}

// String takes the parameter name: its value, "" when absent.
func (q *Query) String(name string) string {
	q.taken = append(q.taken, name)
	return q.v.Get(name)
}

// Duration takes the parameter name, a Go duration ("30s"); 0 when absent.
func (q *Query) Duration(name string) time.Duration {
	s := q.String(name)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		q.errs = append(q.errs, fmt.Sprintf("%s=%s: want a duration such as 30s", name, s))
	}
	return d
}

// Int takes the parameter name, a whole number; 0 when absent.
func (q *Query) Int(name string) int {
	s := q.String(name)
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		q.errs = append(q.errs, fmt.Sprintf("%s=%s: want a whole number", name, s))
	}
	return n
}

// Err returns the error of the values taken that did not parse, and of the
// parameters not taken (not known to the opener), naming each, the URL
// (without its password) and the parameters the opener knows, wrapping
// sqsloop.ErrInvalidArgument; nil when there is none.
func (q *Query) Err(opener string) error {
	errs := q.errs
	for name := range q.v {
		if !slices.Contains(q.taken, name) {
			errs = append(errs, fmt.Sprintf("unknown parameter %q", name))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(errs)
	known := "none"
	if len(q.taken) > 0 {
		known = strings.Join(q.taken, ", ")
	}
	return fmt.Errorf("%s: %s: %s (parameters: %s): %w", opener, q.u.Redacted(), strings.Join(errs, "; "), known, sqsloop.ErrInvalidArgument)
}

// Without returns u without the parameters taken: what is left for a
// driver that reads its own (pgx's DSN).
func (q *Query) Without() *url.URL {
	v := q.u.Query()
	for _, name := range q.taken {
		v.Del(name)
	}
	out := *q.u
	out.RawQuery = v.Encode()
	return &out
}

// SQLitePath returns the file a sqlite: URL names: sqlite:jobs.db (a
// path relative to the working directory), sqlite:/var/lib/jobs.db or
// sqlite:///var/lib/jobs.db (absolute; sqlite://localhost/var/lib/jobs.db
// too). Its error names the URL and the forms, wrapping
// sqsloop.ErrInvalidArgument.
func SQLitePath(u *url.URL) (string, error) {
	var path string
	switch {
	case u.Opaque != "":
		p, err := url.PathUnescape(u.Opaque)
		if err != nil {
			return "", fmt.Errorf("%s: %v: %w", u.Redacted(), err, sqsloop.ErrInvalidArgument)
		}
		path = p
	case u.Host == "" || u.Host == "localhost":
		path = u.Path
	}
	if path == "" {
		return "", fmt.Errorf("%s: want sqlite:RELATIVE/PATH or sqlite:///ABSOLUTE/PATH (a file; sqlite://NAME would name a host): %w",
			u.Redacted(), sqsloop.ErrInvalidArgument)
	}
	return path, nil
}
