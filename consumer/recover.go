package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/sqsloop/sqsloop"
)

// panicError is the error a Handler's panic turns into: the message is
// nacked with the retry back-off like any failure, and the loop goes on.
type panicError struct {
	value any    // what the handler panicked with
	stack []byte // the panicking goroutine's stack trace
}

func (e *panicError) Error() string { return fmt.Sprintf("consumer: handler panicked: %v", e.value) }

// Unwrap returns the value when it is an error, so errors.Is reaches it.
func (e *panicError) Unwrap() error {
	err, _ := e.value.(error)
	return err
}

// recoverPanics turns a panic in the handler (or a middleware) into a
// *panicError, logged at ERROR with its stack. The consumer installs it
// outermost; the message is then nacked with the back-off like any failure.
func recoverPanics(logger *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, m *sqsloop.Message) (err error) {
			defer func() {
				if v := recover(); v != nil {
					pe := &panicError{value: v, stack: debug.Stack()}
					logger.Error("consumer: handler panicked", slog.String("message_id", m.ID),
						slog.Any("panic", v), slog.String("stack", string(pe.stack)))
					err = pe
				}
			}()
			return next(ctx, m)
		}
	}
}
