package leases

import "container/heap"

// released is the decision of a lease that someone else settles (Release):
// the Manager sends nothing for it.
const released decision = givenUp + 1

// Release ends the lease without a call: the Manager stops extending it
// and sends nothing, because someone else settles the message. On AWS Lambda
// the event source mapping deletes the records a function reports as
// processed (package sqslambda), so the function must neither delete them
// nor make them visible. The message stays hidden until the deadline its
// last extension set, unless it is deleted before. Not counted in Stats but
// in Held (no longer held).
//
// Release never blocks and never does I/O. Only the first decision about a
// lease (Ack, Nack, GiveBack or Release) counts; later ones, and any after
// the Manager's Run has returned, are ignored. Safe for concurrent use.
func (l *Lease) Release() {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || l.done || l.decided != holding {
		return
	}
	l.decided = released
	if l.index >= 0 {
		heap.Remove(&m.leases, l.index)
	}
	if !l.busy {
		m.finish(l)
	}
	// A lease with an extension on the wire ends when that call returns
	// (applyExtension, then settle).
}
