package sqsmailbox

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// sourcedProvider reports where its credentials came from, as the SDK's own
// providers do for the User-Agent header.
type sourcedProvider struct{ failingProvider }

func (sourcedProvider) ProviderSources() []aws.CredentialSource {
	return []aws.CredentialSource{aws.CredentialSourceEnvVars}
}

func TestTagCredentials(t *testing.T) {
	var anon sqs.Options
	tagCredentials(&anon)
	if anon.Credentials != nil {
		t.Errorf("an anonymous client got a provider: %T", anon.Credentials)
	}

	o := sqs.Options{Credentials: sourcedProvider{}}
	tagCredentials(&o)
	wrapped := o.Credentials
	tagCredentials(&o)
	if o.Credentials != wrapped {
		t.Error("tagCredentials wrapped a provider twice")
	}
	_, err := o.Credentials.Retrieve(t.Context())
	var ce *credentialsError
	if !errors.As(err, &ce) || !errors.Is(err, errNoCredentials) || err.Error() != errNoCredentials.Error() {
		t.Errorf("Retrieve = %v, want the provider's error, marked, its text unchanged", err)
	}
	if !aws.IsCredentialsProvider(o.Credentials, sourcedProvider{}) || aws.IsCredentialsProvider(o.Credentials, aws.AnonymousCredentials{}) {
		t.Error("aws.IsCredentialsProvider does not see through the wrapper")
	}
	src, ok := o.Credentials.(aws.CredentialProviderSource)
	if !ok || len(src.ProviderSources()) != 1 || src.ProviderSources()[0] != aws.CredentialSourceEnvVars {
		t.Error("the wrapper hides the provider's sources")
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := o.Credentials.Retrieve(ctx); errors.As(err, &ce) {
		t.Errorf("Retrieve with a done ctx = %v, want it unmarked", err)
	}
}
