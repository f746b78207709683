package sqsmailbox

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// credentialsError marks the failure of the client's credentials provider:
// the SDK found no credentials to sign the request with, or could not
// refresh them, so it failed the operation before sending anything. It maps
// to sqsloop.ErrAccessDenied. Its text is the provider's; the provider's
// error stays reachable with errors.Is and errors.As.
//
// The SDK has no typed error for this case: its GetIdentity middleware wraps
// the provider's error with fmt.Errorf ("get identity: get credentials: …",
// after aws.CredentialsCache's "failed to refresh cached credentials, …"),
// text that is no contract. Hence the mark, put on by tagCredentials.
type credentialsError struct{ err error }

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// tagCredentials is a per-call option that wraps the client's credentials
// provider (sqs.Options.Credentials, which the SDK's SigV4 identity resolver
// calls for every request) so that its failure carries credentialsError. The
// provider itself, aws.CredentialsCache included, is still the one called,
// so caching and refreshing are unchanged. A nil provider (anonymous
// requests, e.g. aws.AnonymousCredentials, which sqs.New turns into nil) is
// left alone: there is nothing to retrieve, and the server's answer to an
// unsigned request is mapped by its code. Clients other than *sqs.Client
// ignore the option.
func tagCredentials(o *sqs.Options) {
	if o.Credentials == nil {
		return
	}
	if _, ok := o.Credentials.(*taggedCredentials); ok {
		return
	}
	o.Credentials = &taggedCredentials{provider: o.Credentials}
}

// taggedCredentials is the provider that tagCredentials puts in place.
type taggedCredentials struct {
	provider aws.CredentialsProvider
}

var (
	_ aws.CredentialsProvider      = (*taggedCredentials)(nil)
	_ aws.CredentialProviderSource = (*taggedCredentials)(nil)
)

// Retrieve calls the wrapped provider. Its error is marked with
// credentialsError unless ctx is done: a call cancelled while the provider
// waited (aws.CredentialsCache then returns *aws.RequestCanceledError) is
// the caller's doing, not a credentials failure.
func (p *taggedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := p.provider.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		return creds, &credentialsError{err: err}
	}
	return creds, err
}

// ProviderSources reports the wrapped provider's sources, which the SDK puts
// in its User-Agent header.
func (p *taggedCredentials) ProviderSources() []aws.CredentialSource {
	if s, ok := p.provider.(aws.CredentialProviderSource); ok {
		return s.ProviderSources()
	}
	return nil
}

// IsCredentialsProvider reports whether the wrapped provider is of target's
// type (aws.IsCredentialsProvider), so that the SDK's checks see through the
// wrapper.
func (p *taggedCredentials) IsCredentialsProvider(target aws.CredentialsProvider) bool {
	return aws.IsCredentialsProvider(p.provider, target)
}
