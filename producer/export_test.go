package producer

// Listed returns how many messages p's lists hold (ready, waiting for a
// retry or behind their group's head), withdrawn ones not yet dropped
// included.
func Listed(p *Producer) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.q.ready) + len(p.q.retry)
	for _, g := range p.q.groups {
		n += len(g.waiting)
	}
	return n
}
