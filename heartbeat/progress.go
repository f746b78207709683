package heartbeat

import (
	"errors"
	"io"
)

// NewReader returns an io.Reader that reads from r and beats h whenever a
// Read returns data (n > 0), so a handler streaming a large body proves its
// progress without beating by hand. Data, counts and errors (io.EOF
// included) pass through unchanged.
//
// A nil h returns r itself. A nil r returns a Reader whose every Read fails
// with an error saying r is nil (it never panics). The returned Reader is as safe
// for concurrent use as r is.
func NewReader(r io.Reader, h *Heartbeat) io.Reader {
	if r == nil {
		return errReader{errors.New("heartbeat.NewReader: r: want an io.Reader, got nil")}
	}
	if h == nil {
		return r
	}
	return &reader{r: r, h: h}
}

// NewWriter returns an io.Writer that writes to w and beats h whenever a
// Write accepts data (n > 0). Counts and errors pass through unchanged.
//
// A nil h returns w itself. A nil w returns a Writer whose every Write fails
// with an error saying w is nil (it never panics). The returned Writer is as safe
// for concurrent use as w is.
func NewWriter(w io.Writer, h *Heartbeat) io.Writer {
	if w == nil {
		return errWriter{errors.New("heartbeat.NewWriter: w: want an io.Writer, got nil")}
	}
	if h == nil {
		return w
	}
	return &writer{w: w, h: h}
}

type reader struct {
	r io.Reader
	h *Heartbeat
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.h.Beat()
	}
	return n, err
}

type writer struct {
	w io.Writer
	h *Heartbeat
}

func (w *writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if n > 0 {
		w.h.Beat()
	}
	return n, err
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }
