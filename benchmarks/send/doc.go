// Package send holds the producer's benchmark (no library code): Go
// benchmarks that send the same messages to the same SQS-compatible server,
// with every request held to a 10 ms round trip (wire.WithLatency), three
// ways side by side — package producer, a plain SendMessage loop, and a
// SendMessageBatch loop chunked by hand (10 per call, failed entries sent
// again) — and report messages per second and requests per message,
// counted on the wire (wire.Meter). Run it with
//
//	cd benchmarks && go test -run - -bench . -benchtime 2000x ./send
//
// It starts the server as the integration tests do (SQS_ENDPOINT, else
// LocalStack, else fauxqs from ../integration).
package send
