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
