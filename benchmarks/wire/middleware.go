package wire

import (
	"context"

	"github.com/aws/smithy-go/middleware"
)

// Middleware IDs, as they appear in the SDK's middleware stack.
const (
	attemptID = "wire.CountAttempts"
	callID    = "wire.CountCalls"
)

// Middleware returns an SDK API option (for sqs.Options.APIOptions) that
// counts every operation call in calls, at the start of the Initialize step
// (once per call), and every attempt in attempts, at the end of the Finalize
// step (after the retry loop and signing, so once per HTTP request the SDK
// sends). Both count by operation name (middleware.GetOperationName). Either
// counter may be nil to skip it.
func Middleware(calls, attempts *Counter) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		if calls != nil {
			err := s.Initialize.Add(middleware.InitializeMiddlewareFunc(callID,
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					calls.Add(middleware.GetOperationName(ctx))
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
			if err != nil {
				return err
			}
		}
		if attempts != nil {
			return s.Finalize.Add(middleware.FinalizeMiddlewareFunc(attemptID,
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					attempts.Add(middleware.GetOperationName(ctx))
					return next.HandleFinalize(ctx, in)
				}), middleware.After)
		}
		return nil
	}
}
