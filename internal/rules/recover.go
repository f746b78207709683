package rules

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/sqsloop/sqsloop"
)

// Wrap returns h as the consumer and sqslambda run it: inside the panic
// recovery, outermost, then mws (mws[0] outermost). A panic in h or in a
// middleware becomes an error for which IsPanic reports true, logged at
// ERROR on logger with its stack. mws holds no nil (the runtimes'
// Config.Validate reports one).
func Wrap(h sqsloop.Handler, logger *slog.Logger, mws []sqsloop.Middleware) sqsloop.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return func(ctx context.Context, m *sqsloop.Message) (err error) {
		defer func() {
			if v := recover(); v != nil {
				pe := &panicError{value: v, stack: debug.Stack()}
				logger.Error("consumer: handler panicked", slog.String("message_id", m.ID),
					slog.Any("panic", v), slog.String("stack", string(pe.stack)))
				err = pe
			}
		}()
		return h(ctx, m)
	}
}

// IsPanic reports whether err is, or wraps, a handler panic recovered by
// Wrap.
func IsPanic(err error) bool {
	var pe *panicError
	return errors.As(err, &pe)
}

// panicError is the error a handler's panic turns into: the message is
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
