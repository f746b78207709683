package leases

import "time"

// Extension is what each extension of l asks for now: what its handler
// set (SetExtension), else the Manager's choice for it. It is the length
// a handler's middlewares read through sqsloop.Lease, so that what they
// hold for the lease's time (an idempotency claim) lasts as long as the
// lease does. Safe for concurrent use.
func (l *Lease) Extension() time.Duration {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.extension(l)
}
