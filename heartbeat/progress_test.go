package heartbeat_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// beaten reports whether h beat since the last call: inside a synctest
// bubble, a second passes, and a beat pending then is stamped now.
func beaten(h *heartbeat.Heartbeat) bool {
	time.Sleep(time.Second)
	return h.LastBeat().Equal(time.Now())
}

func TestReaderBeatsOnData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		const body = "hello"
		r := heartbeat.NewReader(iotest.OneByteReader(strings.NewReader(body)), h)
		var got []byte
		for {
			p := make([]byte, 8)
			n, err := r.Read(p)
			got = append(got, p[:n]...)
			if b := beaten(h); b != (n > 0) {
				t.Fatalf("Read of %d bytes: beaten = %v, want a beat exactly when data came", n, b)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != body {
			t.Fatalf("read %q, want %q", got, body)
		}
		if err := iotest.TestReader(heartbeat.NewReader(strings.NewReader(body), h), []byte(body)); err != nil {
			t.Fatalf("iotest.TestReader: %v", err)
		}
	})
}

func TestReaderPassesErrorsThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		h := heartbeat.New()
		n, err := heartbeat.NewReader(iotest.ErrReader(boom), h).Read(make([]byte, 8))
		if n != 0 || err != boom {
			t.Fatalf("Read = %d, %v; want 0, the same error value %v", n, err, boom)
		}
		if beaten(h) {
			t.Fatal("a Read with no data beat")
		}
		// Data and an error in the same Read: the data still counts as progress.
		n, err = heartbeat.NewReader(iotest.DataErrReader(strings.NewReader("x")), h).Read(make([]byte, 8))
		if n != 1 || err != io.EOF {
			t.Fatalf("Read = %d, %v; want 1, io.EOF", n, err)
		}
		if !beaten(h) {
			t.Fatal("a Read with data and an error did not beat")
		}
	})
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
	synctest.Test(t, func(t *testing.T) {
		h := heartbeat.New()
		var buf bytes.Buffer
		w := heartbeat.NewWriter(&buf, h)
		if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
			t.Fatalf("Write = %d, %v; want 3, nil", n, err)
		}
		if !beaten(h) {
			t.Fatal("a Write of 3 bytes did not beat")
		}
		if n, err := w.Write(nil); n != 0 || err != nil {
			t.Fatalf("Write(nil) = %d, %v; want 0, nil", n, err)
		}
		if beaten(h) {
			t.Fatal("an empty Write beat")
		}
		if buf.String() != "abc" {
			t.Fatalf("wrote %q, want %q", buf.String(), "abc")
		}
	})
}

func TestWriterPassesErrorsThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		full := errors.New("disk full")
		h := heartbeat.New()
		n, err := heartbeat.NewWriter(&shortWriter{max: 2, err: full}, h).Write([]byte("abcd"))
		if n != 2 || err != full {
			t.Fatalf("Write = %d, %v; want 2, the same error value %v", n, err, full)
		}
		if !beaten(h) {
			t.Fatal("a short Write of 2 bytes did not beat")
		}
		if _, err := heartbeat.NewWriter(&shortWriter{max: 0, err: full}, h).Write([]byte("abcd")); err != full {
			t.Fatalf("Write err = %v, want %v", err, full)
		}
		if beaten(h) {
			t.Fatal("a Write of 0 bytes beat")
		}
	})
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
	if _, err := heartbeat.NewReader(nil, h).Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "r: want an io.Reader, got nil") {
		t.Fatalf("Read on NewReader(nil, h): err = %v, want one naming r", err)
	}
	if _, err := heartbeat.NewWriter(nil, h).Write([]byte("x")); err == nil || !strings.Contains(err.Error(), "w: want an io.Writer, got nil") {
		t.Fatalf("Write on NewWriter(nil, h): err = %v, want one naming w", err)
	}
}
