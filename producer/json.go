package producer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// JSONBody returns m with v, encoded with encoding/json, as its body: the
// typed body consumer.JSONHandler decodes into the same type on the other side.
// m's other fields (message attributes, group, deduplication ID, delay)
// are kept. Errors wrap sqsloop.ErrInvalidArgument: m.Body is not empty, or
// v does not encode (json.Marshal's error is wrapped too).
func JSONBody(v any, m sqsloop.OutgoingMessage) (sqsloop.OutgoingMessage, error) {
	if m.Body != "" {
		return m, fmt.Errorf("producer: JSONBody: m.Body: must be empty (the body is v encoded), got %d bytes: %w", len(m.Body), sqsloop.ErrInvalidArgument)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return m, fmt.Errorf("producer: JSONBody: encoding %T: %w: %w", v, sqsloop.ErrInvalidArgument, err)
	}
	m.Body = string(body)
	return m, nil
}

// SendJSON sends v encoded as JSON (see JSONBody) with m's other fields, like
// Send, and returns Send's result; JSONBody's errors come first.
func (p *Producer) SendJSON(ctx context.Context, v any, m sqsloop.OutgoingMessage) (Result, error) {
	msg, err := JSONBody(v, m)
	if err != nil {
		return Result{}, err
	}
	return p.Send(ctx, msg)
}

// SendAllJSON sends each of values encoded as JSON (see JSONBody), with m's
// other fields (a FIFO queue's messages keep values' order in m's message
// group), like p.SendAll, and returns its results and error. A value that
// does not encode fails alone, its entry of the *BatchError wrapping
// sqsloop.ErrInvalidArgument; the others are sent. (A function, not a
// method: Go methods take no type parameters.)
func SendAllJSON[T any](ctx context.Context, p *Producer, values []T, m sqsloop.OutgoingMessage) ([]Result, error) {
	msgs := make([]sqsloop.OutgoingMessage, len(values))
	errs := make([]error, len(values))
	for i, v := range values {
		msgs[i], errs[i] = JSONBody(v, m)
	}
	return p.sendAll(ctx, msgs, errs)
}
