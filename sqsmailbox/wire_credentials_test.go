package sqsmailbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/sqsloop/sqsloop"
)

// errNoCredentials is what failingProvider fails with.
var errNoCredentials = errors.New("test: no credentials anywhere")

// failingProvider is a credentials provider that never finds any.
type failingProvider struct{}

func (failingProvider) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errNoCredentials
}

// rawClient is a real *sqs.Client built without config.LoadDefaultConfig,
// pointed at ws, signing with creds (nil: anonymous).
func rawClient(t *testing.T, ws *wireServer, creds aws.CredentialsProvider) *Mailbox {
	t.Helper()
	return ws.mailbox(t, sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(ws.URL), Credentials: creds, RetryMaxAttempts: 1}))
}

// When the credentials provider fails, the SDK fails the call before sending
// it (its GetIdentity step). Every call's error matches ErrAccessDenied, and
// the provider's own error is still reachable; nothing reached the server.
func TestWireCredentialsFailure(t *testing.T) {
	for name, provider := range map[string]aws.CredentialsProvider{
		"provider":         failingProvider{},
		"CredentialsCache": aws.NewCredentialsCache(failingProvider{}),
	} {
		t.Run(name, func(t *testing.T) {
			ws := newWireServer(t)
			m := rawClient(t, ws, provider)
			for call, err := range everyCall(t.Context(), m) {
				if !errors.Is(err, sqsloop.ErrAccessDenied) || !errors.Is(err, errNoCredentials) {
					t.Errorf("%s = %v, want ErrAccessDenied wrapping the provider's error", call, err)
				}
				var opErr *smithy.OperationError
				if !errors.As(err, &opErr) {
					t.Errorf("%s: errors.As cannot reach the SDK's OperationError: %v", call, err)
				}
			}
			if got := ws.requests(); len(got) != 0 {
				t.Errorf("the server got %d requests, want none", len(got))
			}
		})
	}
}

// The usual setup with no credentials anywhere: NewClient's default chain
// ends in the EC2 instance role provider, which fails (IMDS disabled here).
func TestWireNoCredentialsInDefaultChain(t *testing.T) {
	ws := newWireServer(t)
	hermeticAWS(t)
	client, err := NewClient(t.Context(), ws.URL, config.WithRegion("us-east-1"), config.WithRetryMaxAttempts(1))
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	m := ws.mailbox(t, client)
	if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, sqsloop.ErrAccessDenied) {
		t.Fatalf("Receive = %v, want ErrAccessDenied", err)
	}
	if got := ws.requests(); len(got) != 0 {
		t.Errorf("the server got %d requests, want none", len(got))
	}
}

// blockingProvider waits until the call's ctx is done (or release is
// closed: aws.CredentialsCache hides the caller's cancellation from it).
type blockingProvider struct {
	entered chan<- struct{}
	release <-chan struct{}
}

func (p blockingProvider) Retrieve(ctx context.Context) (aws.Credentials, error) {
	p.entered <- struct{}{}
	select {
	case <-ctx.Done():
		return aws.Credentials{}, ctx.Err()
	case <-p.release:
		return aws.Credentials{}, errNoCredentials
	}
}

// A call cancelled while the provider is fetching credentials fails with
// ctx's error, not ErrAccessDenied: the caller gave up, nothing was refused.
func TestWireCredentialsCancelledIsNotAccessDenied(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			entered, release := make(chan struct{}, 1), make(chan struct{})
			defer close(release)
			var provider aws.CredentialsProvider = blockingProvider{entered: entered, release: release}
			if cached {
				provider = aws.NewCredentialsCache(provider)
			}
			ws := newWireServer(t)
			m := rawClient(t, ws, provider)
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := m.Delete(ctx, []string{"rh"})
				errc <- err
			}()
			<-entered
			cancel()
			err := <-errc
			if !errors.Is(err, context.Canceled) || errors.Is(err, sqsloop.ErrAccessDenied) {
				t.Fatalf("Delete = %v, want context.Canceled and not ErrAccessDenied", err)
			}
		})
	}
}

// No credentials to retrieve is a different case: aws.AnonymousCredentials
// makes the client send unsigned requests, and a provider that returns empty
// keys without an error makes it sign with an empty access key. The SDK
// sends both; SQS refuses them, and its answer maps by code. (The codes this
// server answers with stand in for SQS's; any code of the access table
// maps the same way.)
func TestWireAnonymousAndEmptyCredentials(t *testing.T) {
	cases := []struct {
		name     string
		provider aws.CredentialsProvider
		sent     func(auth string) bool
	}{
		{"AnonymousCredentials", aws.AnonymousCredentials{}, func(auth string) bool { return auth == "" }},
		{"empty keys", aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return aws.Credentials{}, nil }),
			func(auth string) bool { return strings.Contains(auth, "Credential=/") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t)
			ws.handle = func(w http.ResponseWriter, r *http.Request, op string) {
				switch auth := r.Header.Get("Authorization"); {
				case auth == "":
					answerError(http.StatusForbidden, "MissingAuthenticationToken;Sender", "com.amazon.coral.service#MissingAuthenticationTokenException", "Missing Authentication Token")(w, r, op)
				case strings.Contains(auth, "Credential=/"):
					answerError(http.StatusForbidden, "InvalidClientTokenId;Sender", "com.amazon.coral.service#UnrecognizedClientException", "The security token included in the request is invalid.")(w, r, op)
				default:
					w.Header().Set("Content-Type", "application/x-amz-json-1.0")
					_, _ = io.WriteString(w, "{}")
				}
			}
			m := rawClient(t, ws, c.provider)
			if _, err := m.Receive(t.Context(), sqsloop.ReceiveRequest{MaxMessages: 1}); !errors.Is(err, sqsloop.ErrAccessDenied) {
				t.Fatalf("Receive = %v, want ErrAccessDenied", err)
			}
			if got := ws.requests(); len(got) != 1 || !c.sent(got[0]) {
				t.Errorf("Authorization headers sent = %q, want one request as described", got)
			}
		})
	}
}
