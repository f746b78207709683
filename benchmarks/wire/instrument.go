package wire

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Meter holds the three counts of one instrumented client. Safe for
// concurrent use.
type Meter struct {
	// Wire counts HTTP requests by X-Amz-Target action.
	Wire Counter
	// Attempts counts SDK attempts by operation name (one per HTTP request).
	Attempts Counter
	// Calls counts SDK operation calls by operation name (retries not
	// included).
	Calls Counter
}

// Instrument returns an sqs.Options function that routes the client's
// requests through a counting HTTPClient wrapped around the HTTP client
// already set (from aws.Config.HTTPClient; the SDK's default when none is)
// and adds the counting Middleware. Use it as the last option of
// sqs.NewFromConfig, so that it wraps the HTTP client the others chose.
func (m *Meter) Instrument() func(*sqs.Options) {
	return func(o *sqs.Options) {
		next := Doer(o.HTTPClient)
		if next == nil {
			next = defaultDoer()
		}
		o.HTTPClient = &HTTPClient{Next: next, Requests: &m.Wire}
		o.APIOptions = append(o.APIOptions, Middleware(&m.Calls, &m.Attempts))
	}
}

// Snapshot is the three counts of a Meter at one moment.
type Snapshot struct {
	Wire, Attempts, Calls Counts
}

// Snapshot returns the counts so far.
func (m *Meter) Snapshot() Snapshot {
	return Snapshot{Wire: m.Wire.Snapshot(), Attempts: m.Attempts.Snapshot(), Calls: m.Calls.Snapshot()}
}

// Sub returns s minus an earlier snapshot of the same Meter.
func (s Snapshot) Sub(before Snapshot) Snapshot {
	return Snapshot{Wire: s.Wire.Sub(before.Wire), Attempts: s.Attempts.Sub(before.Attempts), Calls: s.Calls.Sub(before.Calls)}
}

// Check returns nil when the wire count equals the SDK's attempt count,
// action by action, and an error listing both otherwise.
func (s Snapshot) Check() error {
	if s.Wire.Equal(s.Attempts) {
		return nil
	}
	return fmt.Errorf("wire: request counts disagree: on the wire %v, SDK attempts %v", s.Wire, s.Attempts)
}

// Retries returns attempts minus calls over every action: how many requests
// were the SDK's retries.
func (s Snapshot) Retries() int64 {
	return s.Attempts.Total() - s.Calls.Total()
}
