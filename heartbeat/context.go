package heartbeat

import "context"

// ctxKey is zero-sized, so converting it to the interface key of
// context.Value does not allocate.
type ctxKey struct{}

// NewContext returns a copy of ctx that carries h; handlers find it with
// [FromContext] or beat it with [Beat]. A nil h masks any Heartbeat carried
// by ctx's parents. A nil ctx is treated as context.Background().
func NewContext(ctx context.Context, h *Heartbeat) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, ctxKey{}, h)
}

// FromContext returns the Heartbeat carried by ctx, or nil if there is none
// (or ctx is nil). Safe for concurrent use.
func FromContext(ctx context.Context) *Heartbeat {
	if ctx == nil {
		return nil
	}
	h, _ := ctx.Value(ctxKey{}).(*Heartbeat)
	return h
}

// Beat beats the Heartbeat carried by ctx (see [Heartbeat.Beat]); it does
// nothing if ctx carries none, so library code can beat unconditionally.
// It never blocks, does no I/O and allocates nothing; its cost beyond
// Heartbeat.Beat is one ctx.Value lookup, which grows with the depth of the
// context chain. In a tight loop, call FromContext once and beat the
// Heartbeat directly. Safe for concurrent use.
func Beat(ctx context.Context) {
	FromContext(ctx).Beat()
}
