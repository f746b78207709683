package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/sqsloop/sqsloop"
)

// PanicError is the error a Handler's panic turns into: the message is
// nacked with the retry back-off like any failure, and the loop goes on.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the panicking goroutine's stack trace.
	Stack []byte
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("consumer: handler panicked: %v", e.Value) }

// Unwrap returns Value when it is an error, so errors.Is reaches it.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// recoverPanics turns a panic in the handler (or a middleware) into a
// *PanicError, logged at ERROR with its stack. The consumer installs it
// outermost; the message is then nacked with the back-off like any failure.
func recoverPanics(logger *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return func(ctx context.Context, m *sqsloop.Message) (err error) {
			defer func() {
				if v := recover(); v != nil {
					pe := &PanicError{Value: v, Stack: debug.Stack()}
					logger.Error("consumer: handler panicked", slog.String("message_id", m.ID),
						slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
					err = pe
				}
			}()
			return next(ctx, m)
		}
	}
}
