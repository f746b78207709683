package wire

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// delayDoer emulates the network round trip to a remote SQS endpoint on a
// local server: it holds every request half the round trip before sending
// it, and its answer the other half before handing it back. A request whose
// context ends meanwhile fails with the context's error, as it would on the
// wire — after the server has acted on it, if the answer was on its way.
type delayDoer struct {
	next Doer
	rtt  time.Duration
	// sent, if set, is called with the X-Amz-Target action of each request
	// as it goes to the server.
	sent func(action string)
}

func (d delayDoer) Do(req *http.Request) (*http.Response, error) {
	if err := d.wait(req, d.rtt/2); err != nil {
		return nil, err
	}
	if d.sent != nil {
		d.sent(Action(req.Header.Get(TargetHeader)))
	}
	resp, err := d.next.Do(req)
	if err != nil {
		return resp, err
	}
	if err := d.wait(req, d.rtt-d.rtt/2); err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

func (d delayDoer) wait(req *http.Request, delay time.Duration) error {
	if delay <= 0 {
		return req.Context().Err()
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-req.Context().Done():
		return req.Context().Err()
	}
}

// WithLatency returns an sqs.Options function that gives every request of
// the client a round trip of rtt, half before the request reaches the
// server and half after its answer, as a remote endpoint would (none when
// rtt is 0 and sent is nil); sent, if set, is called with each request's
// action as it goes to the server. Put it before Meter.Instrument, so that
// the counts are of requests sent.
func WithLatency(rtt time.Duration, sent func(string)) func(*sqs.Options) {
	return func(o *sqs.Options) {
		if rtt > 0 || sent != nil {
			o.HTTPClient = delayDoer{next: o.HTTPClient, rtt: rtt, sent: sent}
		}
	}
}
