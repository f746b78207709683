package wire

import (
	"net/http"
	"strings"
)

// TargetHeader is the header in which the AWS JSON protocol names the
// action of a request: "AmazonSQS.ReceiveMessage".
const TargetHeader = "X-Amz-Target"

// NoTarget is the name under which HTTPClient counts a request that carries
// no X-Amz-Target header (an SQS query-protocol request, or not SQS at all).
const NoTarget = "(no X-Amz-Target)"

// Doer is the HTTP client interface of the SDK's service clients
// (sqs.HTTPClient): *http.Client and awshttp.BuildableClient implement it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// HTTPClient is a Doer that counts every request it passes to Next by
// action, read from the X-Amz-Target header with its service prefix
// ("AmazonSQS.") removed. It counts before sending, so a request that fails
// on the network counts too. Safe for concurrent use when Next is.
type HTTPClient struct {
	// Next sends the requests; it must not be nil.
	Next Doer
	// Requests receives one count per request.
	Requests *Counter
}

// Do counts req and sends it with Next, returning Next's answer and error
// unchanged.
func (c *HTTPClient) Do(req *http.Request) (*http.Response, error) {
	c.Requests.Add(Action(req.Header.Get(TargetHeader)))
	return c.Next.Do(req)
}

// Action returns the action named by an X-Amz-Target value: the part after
// the last dot ("AmazonSQS.ReceiveMessage" → "ReceiveMessage"), or NoTarget
// for an empty value.
func Action(target string) string {
	if target == "" {
		return NoTarget
	}
	if i := strings.LastIndexByte(target, '.'); i >= 0 {
		return target[i+1:]
	}
	return target
}
