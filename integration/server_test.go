package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// env returns a Getenv that knows only vars.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestStartSQSServerWithNothingToStart: with no SQS_ENDPOINT, no Docker and
// no fauxqs installed, StartSQSServer reports ErrNoServer with each reason.
func TestStartSQSServerWithNothingToStart(t *testing.T) {
	if dockerAnswers(t.Context()) == nil {
		t.Skip("a Docker engine answers here, so StartSQSServer would start LocalStack")
	}
	s, err := StartSQSServer(t.Context(), ServerOptions{Dir: t.TempDir(), Getenv: env(nil)})
	if err == nil {
		s.Close()
		t.Fatalf("StartSQSServer found a %s server in an empty directory", s.Kind)
	}
	if !errors.Is(err, ErrNoServer) {
		t.Fatalf("StartSQSServer: %v, want ErrNoServer", err)
	}
	for _, want := range []string{"LocalStack", "fauxqs", "npm ci --prefix integration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestStartSQSServerUsesSQSEndpoint: SQS_ENDPOINT wins over everything else,
// and Close leaves a server it did not start running.
func TestStartSQSServerUsesSQSEndpoint(t *testing.T) {
	running := sqsServer(t)
	s, err := StartSQSServer(t.Context(), ServerOptions{Dir: t.TempDir(), Getenv: env(map[string]string{"SQS_ENDPOINT": running.Endpoint})})
	if err != nil {
		t.Fatalf("StartSQSServer with SQS_ENDPOINT=%s: %v", running.Endpoint, err)
	}
	if s.Kind != KindEndpoint || s.Endpoint != running.Endpoint || s.Region != "us-east-1" {
		t.Errorf("server = kind %q endpoint %q region %q, want %q %q us-east-1", s.Kind, s.Endpoint, s.Region, KindEndpoint, running.Endpoint)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.waitReady(t.Context()); err != nil {
		t.Fatalf("the server at SQS_ENDPOINT stopped answering after Close: %v", err)
	}
}

// TestSQSServerNamesTheServerAtSQSEndpoint: SQS_SERVER says which server
// SQS_ENDPOINT is, so the conformance suite declares that server's
// differences (fauxqs enforces no 12-hour ceiling); a value it does not know
// is an error naming the variable and the allowed values.
func TestSQSServerNamesTheServerAtSQSEndpoint(t *testing.T) {
	running := sqsServer(t)
	s, err := StartSQSServer(t.Context(), ServerOptions{Getenv: env(map[string]string{"SQS_ENDPOINT": running.Endpoint, "SQS_SERVER": "fauxqs"})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := newSQSHarness(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindFauxqs || h.Features().LeaseCeiling || h.Name() != "sqsmailbox/fauxqs" {
		t.Errorf("SQS_SERVER=fauxqs: kind %q, features %+v", s.Kind, h.Features())
	}
	_, err = StartSQSServer(t.Context(), ServerOptions{Getenv: env(map[string]string{"SQS_ENDPOINT": running.Endpoint, "SQS_SERVER": "rabbit"})})
	if err == nil || !strings.Contains(err.Error(), "SQS_SERVER") || !strings.Contains(err.Error(), "elasticmq") {
		t.Fatalf("SQS_SERVER=rabbit: %v; want an error naming SQS_SERVER and the allowed values", err)
	}
}

// TestStartSQSServerDeadSQSEndpoint: an SQS_ENDPOINT that does not answer is
// an error, not a reason to fall back to another server, and not ErrNoServer
// (the caller asked for that server).
func TestStartSQSServerDeadSQSEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := StartSQSServer(ctx, ServerOptions{Getenv: env(map[string]string{"SQS_ENDPOINT": dead}), StartTimeout: time.Second})
	if err == nil {
		s.Close()
		t.Fatalf("StartSQSServer with a dead SQS_ENDPOINT returned a %s server", s.Kind)
	}
	if errors.Is(err, ErrNoServer) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("StartSQSServer: %v; want an error naming %s, not ErrNoServer", err, dead)
	}
}

// TestPackageJSONPinsFauxqs: integration/package.json pins the fauxqs the
// code expects, and a Node.js 22 to run it, exactly (no ranges).
func TestPackageJSONPinsFauxqs(t *testing.T) {
	raw, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	if got := pkg.Dependencies["fauxqs"]; got != FauxqsVersion {
		t.Errorf("package.json pins fauxqs %q, want exactly %q (FauxqsVersion)", got, FauxqsVersion)
	}
	if got := pkg.Dependencies["node"]; !strings.HasPrefix(got, "22.") || strings.ContainsAny(got, "^~<>=*x ") {
		t.Errorf("package.json pins node %q, want an exact 22.x version (fauxqs needs Node.js >= 22.5)", got)
	}
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatalf("package-lock.json must be committed beside package.json: %v", err)
	}
	if !strings.Contains(string(lock), `"node_modules/fauxqs": {`+"\n"+`      "version": "`+FauxqsVersion+`"`) {
		t.Errorf("package-lock.json does not lock fauxqs at %s", FauxqsVersion)
	}
}

// fauxqs starts from a directory given relative to the working directory,
// not only from ".".
func TestFauxqsStartsFromARelativeDir(t *testing.T) {
	if _, err := os.Stat("node_modules/fauxqs"); err != nil {
		t.Skip("fauxqs not installed (npm ci --prefix integration)")
	}
	ctx, cancel := context.WithTimeout(t.Context(), DefaultStartTimeout)
	defer cancel()
	s, err := startFauxqs(ctx, "../integration")
	if err != nil {
		t.Fatalf("startFauxqs(../integration): %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
