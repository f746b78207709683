package heartbeat_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/sqsloop/sqsloop/heartbeat"
)

// hashFile is a handler's work: it streams a file through SHA-256. Wrapping
// the file with NewReader beats the handler's Heartbeat on every read, so
// the lease owner keeps the message hidden for as long as bytes flow,
// however big the file, and lets the lease lapse if the read hangs.
func hashFile(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, heartbeat.NewReader(f, heartbeat.FromContext(ctx))); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sum.Sum(nil)), nil
}

func ExampleNewReader() {
	dir, err := os.MkdirTemp("", "heartbeat-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "body.txt")
	if err := os.WriteFile(path, []byte("hello, sqsloop\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	// The consumer does this for every message it hands to a handler.
	h := heartbeat.New()
	ctx := heartbeat.NewContext(context.Background(), h)

	sum, err := hashFile(ctx, path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("sha256:", sum)
	fmt.Println("handler beat:", !h.LastBeat().IsZero())
	// Output:
	// sha256: 6a5bc29c0e410ba8fc122d926f4ff77fdf7ffb00f7beeced9ff639792d3dc84d
	// handler beat: true
}

func ExampleBeat() {
	h := heartbeat.New()
	ctx := heartbeat.NewContext(context.Background(), h)

	for range 3 {
		// ... a unit of work ...
		heartbeat.Beat(ctx) // cheap: no clock read, no allocation
	}
	heartbeat.Beat(context.Background()) // no Heartbeat in ctx: a no-op

	fmt.Println("beat observed:", !h.LastBeat().IsZero())
	// Output:
	// beat observed: true
}
