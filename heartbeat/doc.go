// Package heartbeat lets a message handler prove that it is making progress.
//
// The consumer gives every received message a fresh [Heartbeat] and carries it
// to the handler in the handler's [context.Context] ([NewContext]). The
// handler, and anything it calls, beats with [Beat](ctx) or [Heartbeat.Beat]
// whenever it gets something done; [NewReader] and [NewWriter] beat for it
// while bytes flow. The lease owner (package visibility) extends the
// visibility timeout of a message only while its heartbeat shows progress,
// so a handler that hangs loses its lease and another worker gets the
// message.
//
// # Cost of a beat
//
// A beat is meant to be sprinkled into hot loops: it never blocks, does no
// I/O, allocates nothing and does not read the clock. It only sets an atomic
// "pending" flag. The observer — [Heartbeat.LastBeat], called by the lease
// owner when it looks at a lease — stamps the time lazily: the first
// observation after a beat records time.Now as the time of the beat. The
// time of a beat is therefore known to the precision of the observer's
// polling period (the lease owner looks once per visibility Interval), and
// is never earlier than the real beat.
//
// The package imports no other package of the project.
package heartbeat
