package heartbeat_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// countBeats returns a Heartbeat and a pointer to the number of beats it got.
func countBeats() (*heartbeat.Heartbeat, *int) {
	h := heartbeat.New()
	n := new(int)
	h.AddCallback(func() { *n++ })
	return h, n
}

func TestReaderBeatsOnData(t *testing.T) {
	h, beats := countBeats()
	const body = "hello, heartbeat"
	r := heartbeat.NewReader(iotest.OneByteReader(strings.NewReader(body)), h)
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	if string(got) != body {
		t.Fatalf("read %q, want %q", got, body)
	}
	if *beats != len(body) {
		t.Fatalf("beats = %d, want %d (one per Read with n > 0, none at EOF)", *beats, len(body))
	}
	if err := iotest.TestReader(heartbeat.NewReader(strings.NewReader(body), h), []byte(body)); err != nil {
		t.Fatalf("iotest.TestReader: %v", err)
	}
}

func TestReaderPassesErrorsThrough(t *testing.T) {
	boom := errors.New("boom")
	h, beats := countBeats()
	r := heartbeat.NewReader(iotest.ErrReader(boom), h)
	n, err := r.Read(make([]byte, 8))
	if n != 0 || err != boom {
		t.Fatalf("Read = %d, %v; want 0, the same error value %v", n, err, boom)
	}
	if *beats != 0 {
		t.Fatalf("beats = %d after a Read with no data, want 0", *beats)
	}

	// Data and an error in the same Read: the data still counts as progress.
	r = heartbeat.NewReader(iotest.DataErrReader(strings.NewReader("x")), h)
	n, err = r.Read(make([]byte, 8))
	if n != 1 || err != io.EOF {
		t.Fatalf("Read = %d, %v; want 1, io.EOF", n, err)
	}
	if *beats != 1 {
		t.Fatalf("beats = %d, want 1", *beats)
	}
}

type shortWriter struct {
	max int
	err error
	buf bytes.Buffer
}

func (w *shortWriter) Write(p []byte) (int, error) {
	n := min(len(p), w.max)
	w.buf.Write(p[:n])
	return n, w.err
}

func TestWriterBeatsOnData(t *testing.T) {
	h, beats := countBeats()
	var buf bytes.Buffer
	w := heartbeat.NewWriter(&buf, h)
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v; want 3, nil", n, err)
	}
	if n, err := w.Write(nil); n != 0 || err != nil {
		t.Fatalf("Write(nil) = %d, %v; want 0, nil", n, err)
	}
	if buf.String() != "abc" {
		t.Fatalf("wrote %q, want %q", buf.String(), "abc")
	}
	if *beats != 1 {
		t.Fatalf("beats = %d, want 1 (empty writes are not progress)", *beats)
	}
}

func TestWriterPassesErrorsThrough(t *testing.T) {
	full := errors.New("disk full")
	h, beats := countBeats()
	sw := &shortWriter{max: 2, err: full}
	n, err := heartbeat.NewWriter(sw, h).Write([]byte("abcd"))
	if n != 2 || err != full {
		t.Fatalf("Write = %d, %v; want 2, the same error value %v", n, err, full)
	}
	if *beats != 1 {
		t.Fatalf("beats = %d, want 1 (2 bytes were written)", *beats)
	}
	sw = &shortWriter{max: 0, err: full}
	if _, err := heartbeat.NewWriter(sw, h).Write([]byte("abcd")); err != full {
		t.Fatalf("Write err = %v, want %v", err, full)
	}
	if *beats != 1 {
		t.Fatalf("beats = %d, want still 1 after a write of 0 bytes", *beats)
	}
}

func TestNilHeartbeatIsPassThrough(t *testing.T) {
	r := strings.NewReader("x")
	if got := heartbeat.NewReader(r, nil); got != io.Reader(r) {
		t.Fatalf("NewReader(r, nil) = %T, want r itself", got)
	}
	var buf bytes.Buffer
	if got := heartbeat.NewWriter(&buf, nil); got != io.Writer(&buf) {
		t.Fatalf("NewWriter(w, nil) = %T, want w itself", got)
	}
}

func TestNilReaderWriter(t *testing.T) {
	h := heartbeat.New()
	if _, err := heartbeat.NewReader(nil, h).Read(make([]byte, 1)); !errors.Is(err, heartbeat.ErrInvalidArgument) {
		t.Fatalf("Read on NewReader(nil, h): err = %v, want ErrInvalidArgument", err)
	}
	if _, err := heartbeat.NewWriter(nil, h).Write([]byte("x")); !errors.Is(err, heartbeat.ErrInvalidArgument) {
		t.Fatalf("Write on NewWriter(nil, h): err = %v, want ErrInvalidArgument", err)
	}
}
