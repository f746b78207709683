package consumer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// JSONHandler returns an sqsloop.Handler that decodes each message's body
// as JSON (encoding/json) into a new T and calls fn with it: the typed side
// of producer.JSONBody. A body that does not decode into T (not JSON, the
// wrong shape, trailing data) is a poison message: the handler returns
// sqsloop.Permanent of an error naming T and wrapping the decoder's error, so the
// message goes to the dead-letter queue on its first delivery, the reason
// in its copy's attributes. Unknown fields are ignored (a newer sender may
// add some). fn's result is the handler's.
func JSONHandler[T any](fn func(ctx context.Context, m *sqsloop.Message, v T) error) sqsloop.Handler {
	return func(ctx context.Context, m *sqsloop.Message) error {
		var v T
		if err := json.Unmarshal([]byte(m.Body), &v); err != nil {
			return sqsloop.Permanent(fmt.Errorf("consumer: JSONHandler: the body does not decode into %T: %w", v, err))
		}
		return fn(ctx, m, v)
	}
}
