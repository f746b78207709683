package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/mailboxtest"
	"github.com/sqsloop/sqsloop/sqsmailbox"
)

// The SQS event and the partial batch response as they travel between
// Lambda and a function, written here from the Lambda developer guide's
// examples rather than taken from aws-lambda-go, so that the wire shape is
// tested too.
type (
	sqsEvent struct {
		Records []sqsRecord `json:"Records"`
	}
	sqsRecord struct {
		MessageID         string                  `json:"messageId"`
		ReceiptHandle     string                  `json:"receiptHandle"`
		Body              string                  `json:"body"`
		Attributes        map[string]string       `json:"attributes"`
		MessageAttributes map[string]sqsAttribute `json:"messageAttributes"`
		MD5OfBody         string                  `json:"md5OfBody"`
		EventSource       string                  `json:"eventSource"`
		EventSourceARN    string                  `json:"eventSourceARN"`
		AWSRegion         string                  `json:"awsRegion"`
	}
	sqsAttribute struct {
		StringValue      *string  `json:"stringValue,omitempty"`
		BinaryValue      []byte   `json:"binaryValue,omitempty"`
		StringListValues []string `json:"stringListValues"`
		BinaryListValues [][]byte `json:"binaryListValues"`
		DataType         string   `json:"dataType"`
	}
)

// lambdaRecord is m, received from the queue arn names, as a record of
// the event Lambda hands the function.
func lambdaRecord(m *sqsloop.Message, arn, region string) sqsRecord {
	r := sqsRecord{
		MessageID: m.ID, ReceiptHandle: m.ReceiptHandle, Body: m.Body, Attributes: map[string]string{},
		MessageAttributes: map[string]sqsAttribute{}, EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: region,
	}
	for k, v := range m.Attributes {
		r.Attributes[k] = v
	}
	r.Attributes["SenderId"] = "AIDAIENQZJOLO23YVJ4VO"
	for name, a := range m.MessageAttributes {
		sa := sqsAttribute{DataType: a.DataType, BinaryValue: a.BinaryValue, StringListValues: []string{}, BinaryListValues: [][]byte{}}
		if a.BinaryValue == nil {
			v := a.StringValue
			sa.StringValue = &v
		}
		r.MessageAttributes[name] = sa
	}
	return r
}

// failures parses a partial batch response and returns its item
// identifiers; it fails t on any other shape.
func failures(t *testing.T, body []byte) []string {
	t.Helper()
	var resp map[string][]map[string]string
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil || len(resp) != 1 || resp["batchItemFailures"] == nil && !bytes.Contains(body, []byte(`"batchItemFailures":null`)) {
		t.Fatalf("response %s: want {\"batchItemFailures\": [...]} (%v)", body, err)
	}
	var ids []string
	for _, f := range resp["batchItemFailures"] {
		if len(f) != 1 || f["itemIdentifier"] == "" {
			t.Fatalf("response %s: an entry other than {\"itemIdentifier\": ID}", body)
		}
		ids = append(ids, f["itemIdentifier"])
	}
	return ids
}

// writeFiles writes n files of size bytes into a temporary directory and
// returns their paths.
func writeFiles(t *testing.T, n, size int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := range n {
		p := filepath.Join(dir, fmt.Sprint("file-", i))
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte('a' + i)}, size), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// The acceptance of issue 13: examples/lambda, built and run as Lambda
// runs a custom runtime against the Runtime API, answers a batch of 4
// records (2 good, 1 failing, 1 panicking) with exactly the failing and
// the panicking message IDs; its process lives on to take the next event;
// and an event it cannot answer record by record (a record without a
// messageId) goes to the error endpoint. No SQS server is needed: without
// LEASES the function makes no call.
func TestLambdaExampleAsACustomRuntime(t *testing.T) {
	t.Parallel()
	files := writeFiles(t, 2, 4096)
	api := newRuntimeAPI(t)
	log := startRuntime(t, buildLambdaExample(t), api, "AWS_REGION=us-east-1")
	arn := "arn:aws:sqs:us-east-1:123456789012:jobs"
	rec := func(id, body string) sqsRecord {
		return sqsRecord{MessageID: id, ReceiptHandle: "AQEB" + id, Body: body, EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: "us-east-1",
			Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1767225600000"}}
	}
	event := sqsEvent{Records: []sqsRecord{
		rec("0f3a6c2e-0001", files[0]), rec("0f3a6c2e-0002", "fail: always"),
		rec("0f3a6c2e-0003", "panic: always"), rec("0f3a6c2e-0004", files[1]),
	}}
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		a, err := api.invoke(t.Context(), payload, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if a.kind != "response" {
			t.Fatalf("invocation %d: %s %s, want a response", i, a.kind, a.body)
		}
		if got, want := failures(t, a.body), []string{"0f3a6c2e-0002", "0f3a6c2e-0003"}; !slices.Equal(got, want) {
			t.Errorf("invocation %d: batchItemFailures %v, want %v (response %s)", i, got, want, a.body)
		}
		t.Logf("invocation %d answered: %s", i, a.body)
	}
	event.Records[1].MessageID = ""
	payload, _ = json.Marshal(event)
	a, err := api.invoke(t.Context(), payload, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a.kind != "error" || !bytes.Contains(a.body, []byte("no messageId")) {
		t.Errorf("a record without messageId: %s %s, want an error naming it", a.kind, a.body)
	}
	// The function's log reaches log through a pipe and a goroutine of
	// os/exec, maybe after the answer: wait for the lines (bounded).
	hashed := func() int { return strings.Count(log.String(), "msg=hashed") }
	for deadline := time.Now().Add(10 * time.Second); hashed() < 4 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := hashed(); n != 4 {
		t.Errorf("%d files hashed, want 4 (2 per good invocation)", n)
	}
}

// The same function on the SQS-compatible server, with LEASES=on, on
// receipt handles from real receives of a queue with a 2 s visibility
// timeout: the two good records hash for about 5 s while beating, and no
// other receiver gets them meanwhile (the lease owner extends them past
// the visibility timeout); the failing and the panicking record are nacked
// with the 4 s back-off (BACKOFF), so another receiver gets them about 4 s
// after the invocation started: not at once, and not when the 2 s
// visibility timeout ends.
func TestLambdaExampleOnSQS(t *testing.T) {
	t.Parallel()
	h := sqsServerHarness(t)
	srv := sqsServer(t)
	ctx := t.Context()
	q, cleanup := h.NewQueue(ctx, t, mailboxtest.QueueOptions{VisibilityTimeout: shortLease, MaxReceiveCount: 5})
	defer cleanup()
	mb := q.Mailbox.(*sqsmailbox.Mailbox)

	// The function is up before the receive: a record's lease runs from
	// the receive, as it does behind an event source mapping.
	api := newRuntimeAPI(t)
	log := startRuntime(t, buildLambdaExample(t), api, leasesEnv(srv, "BACKOFF=4s", "SLOW=500ms", "CHUNKS=10")...)

	files := writeFiles(t, 2, 64*1024)
	bodies := []string{files[0], "fail: always", "panic: always", files[1]}
	outgoing := make([]sqsloop.OutgoingMessage, len(bodies))
	for i, b := range bodies {
		outgoing[i] = sqsloop.OutgoingMessage{Body: b, MessageAttributes: map[string]sqsloop.MessageAttribute{"kind": {DataType: "String", StringValue: "hash"}}}
	}
	if res, err := mb.Send(ctx, outgoing); err != nil || slices.ContainsFunc(res, func(r sqsloop.SendResult) bool { return r.Err != nil }) {
		t.Fatalf("send: %v %v", res, err)
	}
	payload, records := mappingReceive(t, srv, mb, len(bodies), shortLease)

	// Another receiver polls the queue while the function runs.
	type sighting struct {
		body  string
		after time.Duration
	}
	var (
		mu   sync.Mutex
		seen []sighting
	)
	probeCtx, stopProbe := context.WithCancel(ctx)
	probeDone := make(chan struct{})
	begin := time.Now()
	go func() {
		defer close(probeDone)
		for probeCtx.Err() == nil {
			msgs, err := mb.Receive(probeCtx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: longLease, WaitTime: time.Second})
			if err != nil {
				continue
			}
			mu.Lock()
			for _, m := range msgs {
				seen = append(seen, sighting{m.Body, time.Since(begin)})
			}
			mu.Unlock()
		}
	}()
	a, err := api.invoke(ctx, payload, time.Minute)
	took := time.Since(begin)
	// Past the back-off, so that the failed records had their chance.
	if wait := 4*time.Second + 2*time.Second - took; wait > 0 {
		time.Sleep(wait)
	}
	stopProbe()
	<-probeDone
	if err != nil {
		t.Fatal(err)
	}
	if a.kind != "response" {
		t.Fatalf("%s %s, want a response", a.kind, a.body)
	}
	if got, want := failures(t, a.body), []string{records["fail: always"].MessageID, records["panic: always"].MessageID}; !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("batchItemFailures %v, want the failing and the panicking record %v", got, want)
	}

	firstSeen := map[string]time.Duration{}
	for _, s := range seen {
		if _, ok := firstSeen[s.body]; !ok {
			firstSeen[s.body] = s.after
		}
	}
	t.Logf("invocation took %v on a %v visibility timeout; another receiver first got: %v", took.Round(time.Millisecond), shortLease, firstSeen)
	if took < 2*shortLease {
		t.Errorf("the invocation took %v: too short to show a lease kept past the %v visibility timeout", took, shortLease)
	}
	for _, f := range files {
		if at, ok := firstSeen[f]; ok {
			t.Errorf("a beating record (%s) was received by another receiver %v after the start, within its invocation of %v", f, at, took)
		}
	}
	for _, b := range []string{"fail: always", "panic: always"} {
		at, ok := firstSeen[b]
		switch {
		case !ok:
			t.Errorf("%q never came back within %v", b, 4*time.Second+2*time.Second)
		case at < 3500*time.Millisecond:
			t.Errorf("%q came back %v after the start: before its 4 s back-off (the visibility timeout is %v)", b, at, shortLease)
		}
	}
	m := regexp.MustCompile(`msg=invocation .*extensions=(\d+) extension_calls=(\d+) nacked=(\d+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no invocation line in the function's log:\n%s", log.String())
	}
	ext, _ := strconv.Atoi(m[1])
	calls, _ := strconv.Atoi(m[2])
	nacked, _ := strconv.Atoi(m[3])
	t.Logf("the function's counters: %d extensions in %d ChangeMessageVisibilityBatch calls, %d nacked", ext, calls, nacked)
	if ext < 4 || nacked != 2 {
		t.Errorf("%d extensions, %d nacked: want the two beating records extended (≥ 2 each) and the two failures nacked", ext, nacked)
	}
}

// leasesEnv is the environment of examples/lambda with LEASES=on against
// srv, with env added.
func leasesEnv(srv *SQSServer, env ...string) []string {
	out := []string{"LEASES=on", "SQS_ENDPOINT=" + srv.Endpoint, "AWS_REGION=" + srv.Region}
	if srv.staticCreds {
		out = append(out, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=")
	}
	return append(out, env...)
}

// mappingReceive receives n messages of mb, a queue of srv, with the
// visibility timeout vt, as the event source mapping does (the records'
// receipt handles are real), and returns them as the event's payload, and
// each body's record.
func mappingReceive(t *testing.T, srv *SQSServer, mb *sqsmailbox.Mailbox, n int, vt time.Duration) ([]byte, map[string]sqsRecord) {
	t.Helper()
	ctx := t.Context()
	client, err := srv.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(mb.QueueURL()), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		t.Fatal(err)
	}
	arn := out.Attributes[string(types.QueueAttributeNameQueueArn)]
	var event sqsEvent
	records := map[string]sqsRecord{}
	for len(event.Records) < n {
		msgs, err := mb.Receive(ctx, sqsloop.ReceiveRequest{MaxMessages: 10, VisibilityTimeout: vt, WaitTime: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			r := lambdaRecord(m, arn, srv.Region)
			event.Records = append(event.Records, r)
			records[m.Body] = r
		}
		if len(msgs) == 0 {
			t.Fatalf("received %d of %d messages", len(event.Records), n)
		}
	}
	payload, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	return payload, records
}
