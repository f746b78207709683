package send

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/benchmarks/wire"
	"github.com/sqsloop/sqsloop/integration"
	"github.com/sqsloop/sqsloop/producer"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// rtt is the round trip every request of a measured client is held to: a
// client in the same region as its queue, as the comparative benchmark's
// latency scenario has it.
const rtt = 10 * time.Millisecond

var server struct {
	once sync.Once
	srv  *integration.SQSServer
	err  error
}

// env returns the shared server, started at first use; the process's end
// stops it (an emulator's stdin closes).
func env(b *testing.B) *integration.SQSServer {
	b.Helper()
	server.once.Do(func() {
		dir, err := filepath.Abs("../../integration")
		if err != nil {
			server.err = err
			return
		}
		server.srv, server.err = integration.StartSQSServer(context.Background(), integration.ServerOptions{Dir: dir, Logf: b.Logf})
	})
	if server.err != nil {
		b.Skipf("no SQS-compatible server: %v", server.err)
	}
	return server.srv
}

// client returns a client of srv whose requests take rtt and are counted
// by m.
func client(b *testing.B, srv *integration.SQSServer, m *wire.Meter) *sqs.Client {
	b.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), srv.ConfigOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(srv.Endpoint) },
		wire.WithLatency(rtt, nil), m.Instrument())
}

// newQueue sets up a fresh queue for one run, with an uncounted client,
// deleted at the end of the benchmark.
func newQueue(b *testing.B, srv *integration.SQSServer, fifo bool) string {
	b.Helper()
	var r [4]byte
	_, _ = rand.Read(r[:])
	spec := sqsloop.QueueSpec{Name: "sqsloop-send-" + hex.EncodeToString(r[:])}
	if fifo {
		spec.Name += sqsloop.FIFOSuffix
		spec.FIFO, spec.ContentBasedDeduplication = true, true
	}
	admin, err := srv.NewClient(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	mb, err := sqsmailbox.CreateQueue(context.Background(), admin, spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = admin.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(mb.QueueURL())})
	})
	return mb.QueueURL()
}

// way is one way of sending n messages (bodies from body, FIFO messages in
// group group when not empty) to the queue at url through client.
type way struct {
	name string
	send func(ctx context.Context, client *sqs.Client, url string, n int, group string) error
}

// work runs f for i in 0..n-1 on g goroutines, each taking the next i,
// and returns the first error.
func work(n, g int, f func(i int) error) error {
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range g {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return *p
	}
	return nil
}

func body(i int) string { return fmt.Sprintf("message %06d", i) }

func groupID(group string) *string {
	if group == "" {
		return nil
	}
	return aws.String(group)
}

// plain sends one SendMessage per message, from g goroutines.
func plain(g int) way {
	return way{fmt.Sprintf("SendMessage/goroutines=%d", g), func(ctx context.Context, c *sqs.Client, url string, n int, group string) error {
		return work(n, g, func(i int) error {
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body(i)), MessageGroupId: groupID(group)})
			return err
		})
	}}
}

// chunked sends SendMessageBatch calls of 10 from g goroutines, each
// sending a failed entry again in its next call (the loop people write).
func chunked(g int) way {
	return way{fmt.Sprintf("SendMessageBatch-by-hand/goroutines=%d", g), func(ctx context.Context, c *sqs.Client, url string, n int, group string) error {
		chunks := (n + 9) / 10
		return work(chunks, g, func(k int) error {
			var entries []types.SendMessageBatchRequestEntry
			for i := k * 10; i < min(n, k*10+10); i++ {
				entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(body(i)), MessageGroupId: groupID(group)})
			}
			for len(entries) > 0 {
				out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
				if err != nil {
					return err
				}
				failed := map[string]bool{}
				for _, f := range out.Failed {
					failed[aws.ToString(f.Id)] = true
				}
				var again []types.SendMessageBatchRequestEntry
				for _, e := range entries {
					if failed[aws.ToString(e.Id)] {
						again = append(again, e)
					}
				}
				entries = again
			}
			return nil
		})
	}}
}

// viaProducer sends through package producer (its defaults) from g
// goroutines calling Send, or, with g == 0, from one goroutine calling
// Enqueue for every message and then waiting for them all.
func viaProducer(g int) way {
	name := fmt.Sprintf("producer/Send-goroutines=%d", g)
	if g == 0 {
		name = "producer/Enqueue-goroutines=1"
	}
	return way{name, func(ctx context.Context, c *sqs.Client, url string, n int, group string) error {
		mb, err := sqsmailbox.New(c, url)
		if err != nil {
			return err
		}
		defer mb.Close()
		p, err := producer.New(mb, producer.Config{})
		if err != nil {
			return err
		}
		defer p.Close(ctx)
		msg := func(i int) sqsloop.OutgoingMessage {
			return sqsloop.OutgoingMessage{Body: body(i), MessageGroupID: group}
		}
		if g > 0 {
			return work(n, g, func(i int) error {
				_, err := p.Send(ctx, msg(i))
				return err
			})
		}
		pds := make([]*producer.Pending, n)
		for i := range n {
			if pds[i], err = p.Enqueue(ctx, msg(i)); err != nil {
				return err
			}
		}
		for _, pd := range pds {
			if _, err := pd.Wait(ctx); err != nil {
				return err
			}
		}
		return p.Close(ctx)
	}}
}

// run measures w sending b.N messages to a fresh queue: msgs/s and
// requests per message on the wire (the producer's one GetQueueAttributes
// for a message group included).
func run(b *testing.B, w way, fifo bool) {
	srv := env(b)
	url := newQueue(b, srv, fifo)
	var m wire.Meter
	c := client(b, srv, &m)
	group := ""
	if fifo {
		group = "one-group"
	}
	b.ResetTimer()
	start := time.Now()
	if err := w.send(context.Background(), c, url, b.N, group); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	b.StopTimer()
	snap := m.Snapshot()
	if err := snap.Check(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "msgs/s")
	b.ReportMetric(float64(snap.Wire.Total())/float64(b.N), "req/msg")
	b.Logf("%s: %d messages in %v; requests %v", w.name, b.N, took.Round(time.Millisecond), snap.Wire)
}

// BenchmarkSend: a standard queue, the three ways, at one goroutine and at
// the concurrency users give them.
func BenchmarkSend(b *testing.B) {
	for _, w := range []way{viaProducer(0), viaProducer(32), plain(1), plain(32), chunked(1), chunked(8)} {
		b.Run(w.name, func(b *testing.B) { run(b, w, false) })
	}
}

// BenchmarkSendFIFOOneGroup: one FIFO message group, in order. The
// producer keeps a group to one message per round trip (order across
// retries); a plain loop from one goroutine does the same; the batch loop
// by hand sends 10 per call, in order only while no entry fails alone.
func BenchmarkSendFIFOOneGroup(b *testing.B) {
	for _, w := range []way{viaProducer(0), plain(1), chunked(1)} {
		b.Run(w.name, func(b *testing.B) { run(b, w, true) })
	}
}
