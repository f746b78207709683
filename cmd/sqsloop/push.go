package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
)

// The headers `sqsloop http` sends with each message: those of Elastic
// Beanstalk's worker daemon, sqsd (the worker environments' page of the
// Elastic Beanstalk Developer Guide lists them), and two of its own.
const (
	headerMsgID           = "X-Aws-Sqsd-Msgid"             // the message ID
	headerQueue           = "X-Aws-Sqsd-Queue"             // the queue's name
	headerFirstReceivedAt = "X-Aws-Sqsd-First-Received-At" // UTC, ISO 8601 (RFC 3339, to the second)
	headerReceiveCount    = "X-Aws-Sqsd-Receive-Count"     // the approximate receive count
	headerAttrPrefix      = "X-Aws-Sqsd-Attr-"             // + the attribute's name: String and Number attributes (sqsd drops Binary ones)
	headerTraceID         = "X-Amzn-Trace-Id"              // the message's AWSTraceHeader, when it has one
	headerGroupID         = "X-Sqsloop-Message-Group-Id"   // the message group, when it has one (FIFO queues)
	headerBeatURL         = "X-Sqsloop-Beat-Url"           // POST to it to beat this message's heartbeat

	// userAgent says sqsd, which applications may check, and who.
	userAgent = "aws-sqsd/1.1 (sqsloop)"
)

// maxErrorBody is how much of a failed response's body the error keeps.
const maxErrorBody = 512

// pusher POSTs messages to the application (a sqsloop.Handler), as sqsd
// does, with heartbeats: the response's bytes, as they stream in, and the
// application's calls of its beat URL. Safe for concurrent use.
type pusher struct {
	to           string
	contentType  string
	queue        string
	poisonStatus int
	client       *http.Client
	beats        *beatRegistry
	log          *slog.Logger
}

// statusError is an answer other than 200 OK.
type statusError struct {
	status string // "503 Service Unavailable"
	body   string // the start of the response's body
}

func (e *statusError) Error() string {
	s := "application answered " + e.status
	if b := strings.TrimSpace(e.body); b != "" {
		s += ": " + b
	}
	return s
}

// handle POSTs m to the application. It returns nil for 200 OK with the
// whole response read; sqsloop.Permanent of a *statusError for the poison
// status; a *statusError for any other status (wrapped with
// sqsloop.NackAfter when the answer has a Retry-After); an error for a
// request that failed or a response cut short; and, when ctx ended first
// (the lease lost, the drain's budget spent: the request is cancelled, its
// connection closed), an error wrapping its cause.
func (p *pusher) handle(ctx context.Context, m *sqsloop.Message) error {
	hb := heartbeat.FromContext(ctx)
	if hb == nil {
		hb = heartbeat.New()
	}
	defer p.beats.add(m.ID, hb)()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.to, strings.NewReader(m.Body))
	if err != nil {
		return err
	}
	p.header(req.Header, m)
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("request stopped: %w", context.Cause(ctx))
		}
		return err
	}
	defer resp.Body.Close()
	hb.Beat() // the answer has begun
	var head prefixWriter
	if _, err := io.Copy(&head, heartbeat.NewReader(resp.Body, hb)); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("request stopped: %w", context.Cause(ctx))
		}
		return fmt.Errorf("application answered %s, then the response was cut short: %w", resp.Status, err)
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	e := &statusError{status: resp.Status, body: string(head.b)}
	if p.poisonStatus != 0 && resp.StatusCode == p.poisonStatus {
		return sqsloop.Permanent(e)
	}
	if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		return sqsloop.NackAfter(e, d)
	}
	return e
}

// header sets the request's headers for m. Attribute headers keep the
// attribute's name as it is (not canonicalized); a value that a header
// cannot carry (a control character) is left out, with a WARN.
func (p *pusher) header(h http.Header, m *sqsloop.Message) {
	h.Set("User-Agent", userAgent)
	h.Set("Content-Type", p.contentType)
	h.Set(headerMsgID, m.ID)
	h.Set(headerQueue, p.queue)
	h.Set(headerReceiveCount, strconv.Itoa(m.ReceiveCount))
	if !m.FirstReceivedAt.IsZero() {
		h.Set(headerFirstReceivedAt, utc(m.FirstReceivedAt))
	}
	if t := m.Attributes[sqsloop.AttrAWSTraceHeader]; t != "" {
		h.Set(headerTraceID, t)
	}
	if m.MessageGroupID != "" {
		h.Set(headerGroupID, m.MessageGroupID)
	}
	h.Set(headerBeatURL, p.beats.url(m.ID))
	for name, a := range m.MessageAttributes {
		if strings.HasPrefix(a.DataType, "Binary") {
			continue
		}
		if !validHeaderValue(a.StringValue) {
			p.log.Warn("sqsloop http: message attribute left out: its value holds a control character, which a header cannot carry",
				"message_id", m.ID, "attribute", name)
			continue
		}
		h[headerAttrPrefix+name] = []string{a.StringValue}
	}
}

// validHeaderValue reports whether an HTTP/1.1 header can carry v: no
// control characters but the tab (RFC 9110, field-value).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date (RFC
// 9110); ok is false when there is none or it does not parse.
func retryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// prefixWriter keeps the first maxErrorBody bytes written to it and
// discards the rest.
type prefixWriter struct{ b []byte }

func (w *prefixWriter) Write(p []byte) (int, error) {
	if room := maxErrorBody - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// newPushClient returns the HTTP client of the pusher: no proxy (the
// application is local), connections kept for concurrency requests at once,
// a connect timeout, no redirects followed (a 3xx nacks), and no timeout on
// the request itself: a request lasts while the lease does.
func newPushClient(concurrency int, connectTimeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = concurrency
	tr.DisableCompression = true
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// waitForApp returns once the application at target accepts a TCP
// connection, so that messages received before it is up do not fail (each
// failure counts a receive towards the dead-letter queue); it logs while
// it waits, and returns ctx's error if ctx ends first.
func waitForApp(ctx context.Context, target *url.URL, connectTimeout time.Duration, log *slog.Logger) error {
	addr := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(target.Hostname(), port)
	}
	d := net.Dialer{Timeout: connectTimeout}
	began := time.Now()
	var logged time.Time
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Since(logged) >= 10*time.Second {
			log.Info("sqsloop http: waiting for the application to accept connections before receiving", "addr", addr, "waited", time.Since(began).Round(time.Second), "error", err)
			logged = time.Now()
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// checkTarget parses --to: an absolute http or https URL.
func checkTarget(to string) (*url.URL, error) {
	u, err := url.Parse(to)
	if err != nil {
		return nil, fmt.Errorf("--to: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("--to: want an absolute http:// or https:// URL, as in http://127.0.0.1:8080/work, got " + to)
	}
	return u, nil
}
