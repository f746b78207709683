package console

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/internal/harness/sqlharness"
	"github.com/sqsloop/sqsloop/sqlmailbox"
	"github.com/sqsloop/sqsloop/sqlmailbox/postgres"
	"github.com/sqsloop/sqsloop/sqlmailbox/sqlite"
)

// serve answers one GET of path from c as a browser on loopback would,
// failing b unless it is 200.
func serve(b *testing.B, c *Console, path string) string {
	r := httptest.NewRequest("GET", path, nil)
	r.RemoteAddr = "127.0.0.1:1"
	w := httptest.NewRecorder()
	c.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
	}
	return w.Body.String()
}

// The queue list of 1,000 SQS queues (ListQueues, then GetQueueAttributes
// of each, 32 at once), rendered by a console that has read nothing yet:
// what an operator waits for when the console starts (issue: under 2 s).
// On the server SQS_ENDPOINT names; the queues are made once, before the
// timer starts.
func BenchmarkSQSQueueList1000(b *testing.B) {
	client := sqsClient(b)
	ctx := context.Background()
	prefix := fmt.Sprintf("bench-list-%d-", time.Now().UnixNano()%1e9)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range 1000 {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("%s%04d", prefix, i))})
			if err != nil {
				b.Error(err)
				return
			}
			b.Cleanup(func() { _, _ = client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) })
		})
	}
	wg.Wait()
	quiet := slog.New(slog.DiscardHandler)
	for b.Loop() {
		c, err := NewSQS(client, prefix, Options{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		page := serve(b, c, "/")
		if n := strings.Count(page, `<tr class="queue"`); n != 1000 {
			b.Fatalf("the list shows %d queues, want 1000", n)
		}
		c.Close()
	}
}

// A dead-letter queue of 100,000 database messages: its first page (the
// queue's page with 50 messages) and the count of an attribute filter's
// matches, each a request to the console as the browser makes it (issue:
// under 200 ms and under 2 s). The messages are sent once, before the
// timers start; a third of them have tier=gold.
func BenchmarkDatabaseDLQ100k(b *testing.B) {
	const n = 100_000
	for _, db := range []string{"sqlite", "postgres"} {
		b.Run(db, func(b *testing.B) {
			ctx := context.Background()
			var st *sqlmailbox.Store
			var err error
			if db == "sqlite" {
				st, err = sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
			} else {
				st, err = postgres.Open(ctx, sqlharness.FreshDatabase(b), postgres.Options{})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			mb, err := st.CreateQueue(ctx, sqsloop.QueueSpec{Name: "jobs", MaxReceiveCount: 3})
			if err != nil {
				b.Fatal(err)
			}
			defer mb.Close()
			dlq, err := mb.OpenDeadLetterQueue(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer dlq.Close()
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Go(func() {
					for i := w * n / 8; i < (w+1)*n/8; i += sqsloop.MaxBatchSize {
						var batch []sqsloop.OutgoingMessage
						for k := i; k < min(i+sqsloop.MaxBatchSize, (w+1)*n/8); k++ {
							tier := "silver"
							if k%3 == 0 {
								tier = "gold"
							}
							batch = append(batch, sqsloop.OutgoingMessage{Body: fmt.Sprintf(`{"n":%d,"tier":%q,"note":"a message as a failing job left it"}`, k, tier),
								MessageAttributes: map[string]sqsloop.MessageAttribute{"tier": {DataType: "String", StringValue: tier}}})
						}
						if _, err := dlq.Send(ctx, batch); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			c, err := NewDatabase(st, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			serve(b, c, "/") // the queue list, read once
			b.Run("first-page", func(b *testing.B) {
				for b.Loop() {
					if page := serve(b, c, "/queue?name=jobs-dlq"); strings.Count(page, `<tr class="message"`) != pageSize {
						b.Fatalf("the first page shows %d messages, want %d", strings.Count(page, `<tr class="message"`), pageSize)
					}
				}
			})
			b.Run("first-page-filtered", func(b *testing.B) {
				for b.Loop() {
					serve(b, c, "/queue?name=jobs-dlq&attr=tier%3Dgold")
				}
			})
			b.Run("count-attribute", func(b *testing.B) {
				for b.Loop() {
					if body := serve(b, c, "/queue/count?name=jobs-dlq&attr=tier%3Dgold"); !strings.Contains(body, fmt.Sprintf(`"n":%d,`, (n+2)/3)) {
						b.Fatalf("count: %s", body)
					}
				}
			})
			b.Run("count-json-path", func(b *testing.B) {
				for b.Loop() {
					if body := serve(b, c, "/queue/count?name=jobs-dlq&path=tier%3Dgold"); !strings.Contains(body, fmt.Sprintf(`"n":%d,`, (n+2)/3)) {
						b.Fatalf("count: %s", body)
					}
				}
			})
		})
	}
}
