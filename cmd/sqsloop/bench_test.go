package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop/internal/harness"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// BenchmarkThroughput measures messages a second through sqsloop exec
// (running `true` for each: the cost of a process start), through sqsloop
// http (POSTing to a no-op handler), and through the plain loop people
// write with the SDK (receive up to 10, run or POST each, delete each), at
// concurrency 1 and 16, on the SQS server SQS_ENDPOINT names. Each
// iteration is one message: b.N messages are sent first, and the time is
// from sqsloop's start until the queue is empty (its start-up included).
// Run it with a fixed count, e.g.
//
//	go test -run '^$' -bench Throughput -benchtime 2000x
func BenchmarkThroughput(b *testing.B) {
	for _, conc := range []int{1, 16} {
		for _, kind := range []string{"exec", "http"} {
			b.Run(fmt.Sprintf("sqsloop-%s/concurrency-%d", kind, conc), func(b *testing.B) { benchSqsloop(b, kind, conc) })
			b.Run(fmt.Sprintf("sdk-loop-%s/concurrency-%d", kind, conc), func(b *testing.B) { benchSDKLoop(b, kind, conc) })
		}
	}
}

// benchQueue is a queue of b's own on the SQS server with b.N messages.
type benchQueue struct {
	be     *backend
	flags  []string
	url    string
	client *sqs.Client
}

func newBenchQueue(b *testing.B) *benchQueue {
	be := newBackend(b, "sqs")
	queue, _ := be.create(b, 10)
	q := &benchQueue{be: be, flags: queue, url: queue[len(queue)-1]}
	env, err := harness.ReadEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	q.client, err = sqsmailbox.NewClient(context.Background(), env.Endpoint, harness.ConfigOptions(env.Region, env.DummyCredentials)...)
	if err != nil {
		b.Fatal(err)
	}
	var bodies strings.Builder
	for i := range b.N {
		fmt.Fprintf(&bodies, `{"n": %d}`+"\n", i)
	}
	be.run(b, bodies.String(), append([]string{"send"}, queue...)...)
	return q
}

// waitEmpty returns once the queue holds no message, visible or in flight.
func (q *benchQueue) waitEmpty(b *testing.B) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Minute)
	for range tick.C {
		out, err := q.client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(q.url),
			AttributeNames: []types.QueueAttributeName{
				types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		v, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
		nv, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
		if v+nv == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d messages left after 10 minutes", v+nv)
		}
	}
}

// noopApp is an HTTP application that reads the request and answers 200.
func noopApp(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchSqsloop(b *testing.B, kind string, conc int) {
	q := newBenchQueue(b)
	args := []string{kind, "--concurrency", strconv.Itoa(conc)}
	args = append(args, q.flags...)
	if kind == "exec" {
		args = append(args, "--", "true")
	} else {
		args = append(args, "--to", noopApp(b).URL)
	}
	b.ResetTimer()
	start := time.Now()
	p := q.be.start(b, "", args...)
	q.waitEmpty(b)
	took := time.Since(start)
	b.StopTimer()
	p.signal(b, syscall.SIGTERM)
	if err := p.wait(b); err != nil {
		b.Fatalf("sqsloop %s: %v; stderr:\n%s", kind, err, p.stderr.String())
	}
	b.ReportMetric(float64(b.N)/took.Seconds(), "msgs/s")
}

func benchSDKLoop(b *testing.B, kind string, conc int) {
	q := newBenchQueue(b)
	var handle func(body string) error
	if kind == "exec" {
		handle = func(body string) error {
			cmd := exec.Command("true")
			cmd.Stdin = strings.NewReader(body)
			return cmd.Run()
		}
	} else {
		url := noopApp(b).URL
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
		handle = func(body string) error {
			resp, err := client.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s", resp.Status)
			}
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
					QueueUrl: aws.String(q.url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 300,
				})
				if err != nil {
					continue // ctx ended, or a hiccup: receive again
				}
				for _, m := range out.Messages {
					if handle(aws.ToString(m.Body)) != nil {
						continue // nacked by its visibility timeout
					}
					_, _ = q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.url), ReceiptHandle: m.ReceiptHandle})
				}
			}
		})
	}
	q.waitEmpty(b)
	took := time.Since(start)
	b.StopTimer()
	cancel()
	wg.Wait()
	b.ReportMetric(float64(b.N)/took.Seconds(), "msgs/s")
}
