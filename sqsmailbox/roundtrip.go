package sqsmailbox

import (
	"errors"
	"sync"
	"time"

	"github.com/aws/smithy-go"
)

// Parameters of the round-trip estimator, from RFC 6298 ("Computing TCP's
// Retransmission Timer"), which this estimator follows except where noted.
const (
	// rttInitialBound is the bound before the first sample: RFC 6298 §2.1
	// sets the initial RTO to 1 second.
	rttInitialBound = time.Second

	// rttGranularity is G, the clock granularity of RFC 6298 §2.2 and §2.3:
	// the least a bound may exceed SRTT by. 1 ms, the resolution that matters
	// for SQS round trips (a few ms inside a region).
	rttGranularity = time.Millisecond

	// rttMaxBound caps the bound. RFC 6298 §2.5 allows an upper bound of at
	// least 60 seconds; 60 s is also far more than any one SQS call that is
	// not a long poll should take, SDK retries included.
	rttMaxBound = 60 * time.Second
)

// rttEstimator bounds the network round trip to SQS, from the durations of
// calls that do not wait on the server, with the smoothed estimator of RFC
// 6298 §2: SRTT (smoothed round-trip time), RTTVAR (round-trip time
// variation), and bound = SRTT + max(G, 4·RTTVAR), clamped to rttMaxBound.
//
// Unlike TCP's RTO it has no lower clamp of 1 s (RFC 6298 §2.4): that rule
// keeps TCP from retransmitting too early, a concern this bound does not
// have. Before the first sample the bound is rttInitialBound.
//
// The zero value is ready to use. It is safe for concurrent use and does not
// allocate.
type rttEstimator struct {
	mu       sync.Mutex
	measured bool          // a sample has been taken
	srtt     time.Duration // SRTT
	rttvar   time.Duration // RTTVAR
	bound    time.Duration // SRTT + max(G, 4·RTTVAR), clamped; valid when measured
}

// sample takes r, the duration of one call that got an answer, as a
// round-trip measurement. A negative r is ignored.
func (e *rttEstimator) sample(r time.Duration) {
	if r < 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.measured {
		// RFC 6298 §2.2: the first measurement R.
		e.measured = true
		e.srtt = r
		e.rttvar = r / 2
	} else {
		// RFC 6298 §2.3, with alpha = 1/8 and beta = 1/4; RTTVAR is
		// updated first, with the SRTT from before this measurement.
		diff := e.srtt - r
		if diff < 0 {
			diff = -diff
		}
		e.rttvar = (3*e.rttvar + diff) / 4
		e.srtt = (7*e.srtt + r) / 8
	}
	e.bound = min(e.srtt+max(rttGranularity, 4*e.rttvar), rttMaxBound)
}

// rto returns the current bound on one round trip: rttInitialBound until
// the first sample, then SRTT + max(G, 4·RTTVAR), at most rttMaxBound.
func (e *rttEstimator) rto() time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.measured {
		return rttInitialBound
	}
	return e.bound
}

// observe feeds the estimator with a call made at start that returned err,
// if it is a sample: a call that got an answer, a success (err nil) or an
// SQS error answer (a smithy.APIError). A call that was cancelled, timed
// out, failed in transport or never left (no credentials) is not one: its
// duration says nothing about the round trip. Callers pass only calls that
// do not wait on the server (not long polls, whose duration includes the
// wait). A call the SDK retried (throttling, 5xx) is one sample, its back-off
// included: the bound grows, so ReceivedAt errs early, the safe side, and
// shrinks back with the next samples.
func (m *Mailbox) observe(start time.Time, err error) {
	d := time.Since(start)
	if err != nil {
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) {
			return
		}
	}
	m.rtt.sample(d)
}
