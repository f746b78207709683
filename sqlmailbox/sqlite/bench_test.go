package sqlite_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// BenchmarkReceive measures one Receive of 10 messages from a queue of
// 1,000 (each op then deletes them and sends 10 more, off the clock), and
// one Receive that finds nothing (WaitTime 0: one look at the file), on a
// file with the default synchronous=FULL.
func BenchmarkReceive(b *testing.B) {
	ctx := b.Context()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer mb.Close()
	batch := make([]string, 10)
	for i := range batch {
		batch[i] = fmt.Sprint("job-", i)
	}
	for range 100 {
		mailboxtest.SendBodies(ctx, b, mb, batch...)
	}
	req := sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: time.Minute}
	b.Run("10 of 1000", func(b *testing.B) {
		for b.Loop() {
			msgs, err := mb.Receive(ctx, req)
			if err != nil || len(msgs) != 10 {
				b.Fatalf("Receive: %d messages, %v", len(msgs), err)
			}
			b.StopTimer()
			mailboxtest.AckAll(ctx, b, mb, msgs...)
			mailboxtest.SendBodies(ctx, b, mb, batch...)
			b.StartTimer()
		}
	})
	empty, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "empty"})
	if err != nil {
		b.Fatal(err)
	}
	defer empty.Close()
	b.Run("empty", func(b *testing.B) {
		for b.Loop() {
			if msgs, err := empty.Receive(ctx, req); err != nil || len(msgs) != 0 {
				b.Fatalf("Receive: %d messages, %v", len(msgs), err)
			}
		}
	})
}
