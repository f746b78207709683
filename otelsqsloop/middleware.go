package otelsqsloop

import (
	"context"

	"go.opentelemetry.io/otel/metric"

	"github.com/sqsloop/sqsloop/checkpoint"
	"github.com/sqsloop/sqsloop/idempotency"
)

// middlewareCounter is one count of a middleware's Stats, as an
// observable counter.
type middlewareCounter struct {
	name, unit, desc string
	read             func() int64
}

// observeMiddlewares registers the counters of the middlewares cfg names,
// read from their Stats at each collection (see the package doc).
func (o *Observer) observeMiddlewares(m metric.Meter, idem *idempotency.Idempotency, cps *checkpoint.Checkpoints) error {
	var counters []middlewareCounter
	if idem != nil {
		counters = append(counters,
			middlewareCounter{"sqsloop.idempotency.runs", "{run}", "Handler runs of the idempotency middleware: claims won.", func() int64 { return idem.Stats().Ran }},
			middlewareCounter{"sqsloop.idempotency.duplicates", "{message}", "Deliveries of completed keys, acked without running the handler.", func() int64 { return idem.Stats().Duplicates }},
			middlewareCounter{"sqsloop.idempotency.busy", "{message}", "Deliveries nacked because another run held the key.", func() int64 { return idem.Stats().Busy }},
			middlewareCounter{"sqsloop.idempotency.lost_claims", "{run}", "Runs whose claim another run took.", func() int64 { return idem.Stats().LostClaims }},
			middlewareCounter{"sqsloop.idempotency.store_errors", "{call}", "Calls of the idempotency middleware to its store that failed.", func() int64 { return idem.Stats().StoreErrors }},
		)
	}
	if cps != nil {
		counters = append(counters,
			middlewareCounter{"sqsloop.checkpoint.saved", "{checkpoint}", "Checkpoints saved.", func() int64 { return cps.Stats().Saved }},
			middlewareCounter{"sqsloop.checkpoint.resumed", "{message}", "Deliveries that found a checkpoint to resume from.", func() int64 { return cps.Stats().Resumed }},
			middlewareCounter{"sqsloop.checkpoint.finished", "{message}", "Deliveries of a job marked done or failed for good, answered from the mark without running the handler (its ack or dead-letter copy had not been made).", func() int64 { return cps.Stats().Finished }},
			middlewareCounter{"sqsloop.checkpoint.mark_errors", "{call}", "Done or failed marks that could not be written (the last checkpoint stands).", func() int64 { return cps.Stats().MarkErrors }},
		)
	}
	if len(counters) == 0 {
		return nil
	}
	insts := make([]metric.Int64ObservableCounter, len(counters))
	observables := make([]metric.Observable, len(counters))
	for i, c := range counters {
		inst, err := m.Int64ObservableCounter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.desc))
		if err != nil {
			return err
		}
		insts[i], observables[i] = inst, inst
	}
	_, err := m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		for i, c := range counters {
			obs.ObserveInt64(insts[i], c.read(), o.opts.plain)
		}
		return nil
	}, observables...)
	return err
}
