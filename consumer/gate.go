package consumer

import (
	"container/heap"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sqsloop/sqsloop"
	"github.com/sqsloop/sqsloop/heartbeat"
	"github.com/sqsloop/sqsloop/jobstate"
)

// maxLimitWait is the longest a message waits for a rate limit's turn in
// its lease, in the gate's room: a minute. A longer wait sends it back to
// the queue (deferred) for that wait, at least a minute, so that its
// receive count grows by at most one per minute it waits for a rate limit.
const maxLimitWait = time.Minute

// holdWait is the longest a message waits for a rate limit's turn in its
// lease when the room is full: 10 s. It then holds one of the intake's
// own units, so that a queue of limited messages stops being received
// rather than churned through (each received, deferred, received again);
// a longer wait (a key paused by back-pressure, a slow limit) is deferred,
// which keeps the units for the other keys' messages.
const holdWait = 10 * time.Second

// limitRetry is how long a message whose take failed (the store did not
// answer) waits in its lease before the next take, at first; it doubles
// up to maxLimitWait while takes fail.
const limitRetry = time.Second

// minDefer is the shortest delay a message over its group's limit is
// deferred by: a second, SQS's unit.
const minDefer = time.Second

// storeCallTimeout bounds one take or pause of a rate limit's store.
const storeCallTimeout = 10 * time.Second

// closeGrace is how long the drain lets the takes on the wire come back
// before it cancels them: 1 s (a take is one round trip).
const closeGrace = time.Second

// gate stands between the receive loops and the handler pool when the
// consumer has limits (Config.GroupLimit, Config.RateLimits): it runs a
// sequence once its group has a free slot and each rate limit covering it
// gave it a turn. A sequence that must wait is parked: its leases are kept
// by beats of the gate's own (it holds no handler goroutine). In the room
// (extra), it waits beside the intake's own units, raising the intake's
// limit, so that the handlers and the receives stay free for other work:
// up to a second of the handlers' work (roomNow), a second of its group's
// work behind a group limit (groupRoom), Concurrency messages waiting for
// rate limits' turns. Beyond that, a message over its group's limit is
// deferred (nacked with a delay, groupDelay), and one whose turn is near
// (holdWait) holds one of the intake's units; a longer wait is deferred.
// A message is deferred only when the queue's redrive policy leaves it
// room, else it is parked all the same (holding a unit): a limit never
// sends a message to the dead-letter queue. Without limits the consumer
// has no gate and pays nothing. Safe for concurrent use.
type gate struct {
	c          *Consumer
	handlers   *pool // set by start
	groupLimit int
	groupOf    func(*sqsloop.Message) string
	byGroupID  bool // groupOf is the MessageGroupID: a receive can skip busy groups (receiveFrom)
	limits     []limit
	slots      int // Config.Concurrency

	ctx    context.Context // the takes' and pauses'; ended by close
	cancel context.CancelFunc
	takes  sync.WaitGroup // take goroutines
	wake   chan struct{}  // capacity 1: the earliest wait changed
	served chan struct{}  // closed when serve has returned

	mu      sync.Mutex
	groups  map[string]*group
	waits   waitHeap              // parked sequences waiting for a turn or a take, by due
	parked  map[*waiter]struct{}  // every parked sequence
	slotted map[*sequence]*waiter // the sequences holding a group slot, until done
	held    int                   // messages parked in the room (extra)
	turns   int                   // of those, messages waiting for a rate limit's turn
	redrive []int                 // each queue's maxReceiveCount: 0 none, -1 not known (yet)
	closed  bool
	warned  time.Time // the last WARN about a failed take or pause
}

// limit is a RateLimit as the gate applies it.
type limit struct {
	name  string
	key   func(*sqsloop.Message) string
	rate  jobstate.Rate
	store jobstate.RateLimiter
}

// waiter is a sequence as the gate sees it, from admit until it runs, is
// deferred or given back (and, holding a group slot, until its handler
// is done). Its fields are guarded by g.mu but for group and keys, set
// once by the receive loop that admits it. The sequence itself carries
// nothing of the gate's: a consumer without limits pays nothing.
type waiter struct {
	s       *sequence
	group   string    // its group under Config.GroupLimit; "": none
	keys    []string  // its key of each rate limit; "": not covered
	slotted bool      // it holds a slot of its group
	extra   bool      // parked in the room
	turn    bool      // parked in the room waiting for a rate limit's turn
	due     time.Time // parked: when its wait ends
	retake  bool      // parked: at due it takes again (else it runs)
	slot    int       // its place in g.waits + 1; 0: not there
	retries int       // takes failed in a row
	gone    bool      // given back (the drain)
}

// group is one group's state under GroupLimit.
type group struct {
	running int       // its sequences admitted: taking, waiting for a turn, queued for or with a handler
	waiting []*waiter // parked over the limit, in arrival order
	next    time.Time // when its latest deferred message comes back
}

// newGate returns the gate of cfg (defaults applied), or nil when cfg has
// no limits.
func newGate(c *Consumer, cfg Config) *gate {
	if cfg.GroupLimit == 0 && len(cfg.RateLimits) == 0 {
		return nil
	}
	g := &gate{c: c, groupLimit: cfg.GroupLimit, groupOf: cfg.GroupOf, slots: cfg.Concurrency,
		wake: make(chan struct{}, 1), served: make(chan struct{}),
		groups: map[string]*group{}, parked: map[*waiter]struct{}{}, slotted: map[*sequence]*waiter{}, redrive: make([]int, len(c.queues))}
	for i := range g.redrive {
		g.redrive[i] = -1
	}
	if g.groupOf == nil {
		g.groupOf = func(m *sqsloop.Message) string { return m.MessageGroupID }
		g.byGroupID = cfg.GroupLimit > 0
	}
	var mem *jobstate.Memory
	for _, l := range cfg.RateLimits {
		store := l.Store
		if store == nil {
			if mem == nil {
				mem = &jobstate.Memory{}
			}
			store = mem
		}
		key := l.Key
		if key == nil {
			name := l.Name
			key = func(*sqsloop.Message) string { return name }
		}
		g.limits = append(g.limits, limit{name: l.Name, key: key, rate: l.rate(), store: store})
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g
}

// start runs the gate's loop (due waits, beats) for handlers, the pool it
// hands sequences to; beat is how often parked leases are beaten.
func (g *gate) start(handlers *pool, beat time.Duration) {
	g.handlers = handlers
	go g.serve(beat)
}

// setRedrive records queue q's maxReceiveCount (0: no redrive policy).
func (g *gate) setRedrive(q, maxReceiveCount int) {
	g.mu.Lock()
	g.redrive[q] = maxReceiveCount
	g.mu.Unlock()
}

// dispatch hands seq, just received, to the handlers: through the gate when
// the consumer has limits.
func (c *Consumer) dispatch(handlers *pool, seq *sequence) {
	if c.gate == nil {
		handlers.submit(seq)
		return
	}
	c.gate.admit(seq)
}

// receiveFrom receives from q: around the groups whose messages the gate
// would only send back (at their limit, their room to wait full) when q's
// Mailbox can skip groups (sqsloop.GroupSkipper: the database mailboxes,
// in their query) and the groups are message groups (Config.GroupOf
// left nil).
func (c *Consumer) receiveFrom(ctx context.Context, q *queue, req sqsloop.ReceiveRequest) ([]*sqsloop.Message, error) {
	if c.gate != nil && c.gate.byGroupID {
		if gs, ok := q.mb.(sqsloop.GroupSkipper); ok {
			if skip := c.gate.full(); len(skip) > 0 {
				return gs.ReceiveSkipping(ctx, req, skip)
			}
		}
	}
	return q.mb.Receive(ctx, req)
}

// full returns the groups at their limit with as many waiting as may wait
// (groupRoom), at most sqsloop.MaxSkipGroups of them: a message of theirs
// received now would be deferred.
func (g *gate) full() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	room := g.groupRoom()
	for name, gr := range g.groups {
		if gr.running >= g.groupLimit && len(gr.waiting) >= room {
			out = append(out, name)
			if len(out) == sqsloop.MaxSkipGroups {
				break
			}
		}
	}
	return out
}

// admit takes seq, just received: it counts it against its group, or parks
// or defers it when the group is at its limit, then asks for its turns.
func (g *gate) admit(seq *sequence) {
	w := &waiter{s: seq}
	if g.groupLimit > 0 {
		w.group = g.groupOf(seq.msgs[0])
	}
	if w.group != "" {
		g.mu.Lock()
		if g.closed {
			g.closedLocked(w)
			g.mu.Unlock()
			return
		}
		gr := g.groups[w.group]
		if gr == nil {
			gr = &group{}
			g.groups[w.group] = gr
		}
		if gr.running >= g.groupLimit {
			g.overGroup(gr, w, time.Now())
			g.mu.Unlock()
			return
		}
		gr.running++
		w.slotted = true
		g.slotted[seq] = w
		g.mu.Unlock()
	}
	g.turn(w)
}

// overGroup parks w behind its group gr, at its limit, while the group
// has less than a second of its work waiting (groupRoom) and the room
// allows; else it defers w until about when the group's handlers get to
// it (see groupDelay), when the redrive policy allows; else it parks it
// all the same. Called with g.mu held.
func (g *gate) overGroup(gr *group, w *waiter, now time.Time) {
	switch {
	case len(gr.waiting) < g.groupRoom() && g.held+len(w.s.msgs) <= g.roomNow():
		g.park(w, true)
	case g.deferrable(w):
		g.deferLocked(w, g.groupDelay(gr, len(w.s.msgs), now))
		return
	default:
		g.park(w, false)
	}
	gr.waiting = append(gr.waiting, w)
}

// roomNow is how many messages may wait for limits beside the handlers'
// own units: a second of the handlers' work (Concurrency ÷ the handler
// time; SQS delays count whole seconds, so deferred messages come back a
// second's worth at a time), at least Concurrency, at most maxAhead.
func (g *gate) roomNow() int {
	return min(max(g.perSecond(g.slots), g.slots), maxAhead)
}

// groupRoom is how many messages of a group may wait behind its limit: a
// second of its work (GroupLimit ÷ the handler time), at least GroupLimit,
// at most roomNow.
func (g *gate) groupRoom() int {
	return min(max(g.perSecond(g.groupLimit), g.groupLimit), g.roomNow())
}

// perSecond is how many messages n handlers get through in a second at
// the measured handler time (1 s until measured).
func (g *gate) perSecond(n int) int {
	run := g.c.intake.runTime()
	if run == 0 {
		return n
	}
	return int(int64(n) * int64(time.Second) / int64(run))
}

// groupDelay is how long n messages of gr deferred at now stay away: until
// the group's handlers, taking its messages at GroupLimit ÷ the handler
// time, have worked through those waiting here and those deferred before
// (gr.next), in whole seconds (SQS's unit) rounded down, at least
// minDefer (and that until a handler has run): a message that comes back
// early waits behind the group (groupRoom is a second of its work), one
// that came back late would leave its handlers idle. So a flood comes back
// about as fast as its handlers take it, each message deferred about
// once. Called with g.mu held.
func (g *gate) groupDelay(gr *group, n int, now time.Time) time.Duration {
	// Before a handler has run, minDefer: the message comes back soon, to
	// a gate that knows the handler time by then.
	per := g.c.intake.runTime() / time.Duration(g.groupLimit)
	from := now.Add(per * time.Duration(len(gr.waiting)))
	if gr.next.After(from) {
		from = gr.next
	}
	gr.next = from.Add(per * time.Duration(n))
	return min(max(gr.next.Sub(now).Truncate(time.Second), minDefer), sqsloop.MaxVisibilityTimeout)
}

// turn asks each rate limit covering w for its turn, in a goroutine of its
// own (a take is a round trip to the store), or runs w when none covers
// it.
func (g *gate) turn(w *waiter) {
	if len(g.limits) == 0 {
		g.run(w)
		return
	}
	if w.keys == nil {
		w.keys = make([]string, len(g.limits))
		for i, l := range g.limits {
			w.keys[i] = l.key(w.s.msgs[0])
		}
	}
	covered := false
	for _, k := range w.keys {
		covered = covered || k != ""
	}
	if !covered {
		g.run(w)
		return
	}
	g.mu.Lock()
	if g.closed {
		g.closedLocked(w)
		g.mu.Unlock()
		return
	}
	g.takes.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.takes.Done()
		g.take(w)
	}()
}

// take takes w's turn of each limit covering it, reserving one up to
// maxLimitWait ahead when w may wait in the room (it is there already, or
// the room has space), else up to holdWait; then runs w, parks it until
// its turn, or, refused, defers it.
func (g *gate) take(w *waiter) {
	g.mu.Lock()
	room := w.extra || g.turnRoom(len(w.s.msgs))
	g.mu.Unlock()
	maxWait := holdWait
	if room {
		maxWait = maxLimitWait
	}
	now := time.Now()
	var wait time.Duration
	for i, l := range g.limits {
		if w.keys[i] == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(g.ctx, storeCallTimeout)
		gr, err := l.store.Take(ctx, l.name+"/"+w.keys[i], l.rate, maxWait)
		cancel()
		switch {
		case err != nil:
			g.takeFailed(w, l.name, err)
			return
		case !gr.OK:
			g.refused(w, gr.Wait)
			return
		}
		wait = max(wait, gr.Wait)
	}
	w.retries = 0
	if wait <= 0 {
		g.run(w)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closedLocked(w)
		return
	}
	g.c.st.waited.Add(int64(len(w.s.msgs)))
	g.waitLocked(w, now.Add(wait), false)
}

// turnRoom reports whether n more messages may wait for a turn in the
// room: at most Concurrency of them, within roomNow. Called with g.mu
// held.
func (g *gate) turnRoom(n int) bool {
	return g.turns+n <= g.slots && g.held+n <= g.roomNow()
}

// refused follows a take refused because its turn is wait off (beyond
// maxLimitWait, or beyond holdWait with the room full): w goes back to the
// queue for wait, at least maxLimitWait, when the redrive policy allows;
// else it waits in its lease, to take again when the turn nears (at most
// maxLimitWait later).
func (g *gate) refused(w *waiter, wait time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closedLocked(w)
		return
	}
	if g.deferrable(w) {
		g.deferLocked(w, min(sqsloop.WholeSeconds(max(wait, maxLimitWait)), sqsloop.MaxVisibilityTimeout))
		return
	}
	g.c.st.waited.Add(int64(len(w.s.msgs)))
	g.waitLocked(w, time.Now().Add(min(wait, maxLimitWait)), true)
}

// takeFailed parks w, whose take failed with err, to take again after
// limitRetry, doubling while takes fail, at most maxLimitWait; a WARN says
// so, at most every 10 s.
func (g *gate) takeFailed(w *waiter, name string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closedLocked(w)
		return
	}
	d := min(limitRetry<<min(w.retries, 8), maxLimitWait)
	w.retries++
	if now := time.Now(); now.Sub(g.warned) >= 10*time.Second {
		g.warned = now
		g.c.cfg.Logger.Warn("consumer: a rate limit's store failed; the message waits in its lease and takes again",
			slog.String("limit", name), slog.String("message_id", w.s.msgs[0].ID), duration("retry_in", d), slog.Any("error", err))
	}
	g.waitLocked(w, time.Now().Add(d), true)
}

// waitLocked parks w until at, when it runs (or, with retake, takes
// again): in the room when it is there or the room has space for it.
// Called with g.mu held, g not closed.
func (g *gate) waitLocked(w *waiter, at time.Time, retake bool) {
	if _, ok := g.parked[w]; !ok {
		extra := g.turnRoom(len(w.s.msgs))
		g.park(w, extra)
		if extra {
			g.turns += len(w.s.msgs)
			w.turn = true
		}
	}
	w.due, w.retake = at, retake
	heap.Push(&g.waits, w)
	if w.slot == 1 { // the earliest
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// run hands w to the handlers, unparking it.
func (g *gate) run(w *waiter) {
	g.mu.Lock()
	if g.closed {
		g.closedLocked(w)
		g.mu.Unlock()
		return
	}
	g.unpark(w)
	g.mu.Unlock()
	g.handlers.submit(w.s)
}

// done follows seq's handler run: its group has a free slot, which the
// next sequence waiting behind it takes.
func (g *gate) done(seq *sequence) {
	if g.groupLimit == 0 {
		return
	}
	g.mu.Lock()
	w := g.slotted[seq]
	if w == nil { // no group, or close forgot the groups
		g.mu.Unlock()
		return
	}
	delete(g.slotted, seq)
	gr := g.groups[w.group]
	gr.running--
	var next *waiter
	if len(gr.waiting) > 0 {
		next, gr.waiting = gr.waiting[0], gr.waiting[1:]
		gr.running++
		next.slotted = true
		g.slotted[next.s] = next
	}
	if gr.running == 0 && len(gr.waiting) == 0 && !gr.next.After(time.Now()) {
		delete(g.groups, w.group)
	}
	g.mu.Unlock()
	if next != nil {
		g.turn(next) // parked still: unparked when it runs
	}
}

// deferrable reports whether w may go back to the queue with a delay: the
// queue has no redrive policy, or each of its messages has been received
// less than half the queue's maxReceiveCount times, so that a limit uses
// at most half of a message's receives and leaves the rest to its own
// failures. Not while the redrive policy is unknown. Called with g.mu
// held.
func (g *gate) deferrable(w *waiter) bool {
	redrive := g.redrive[g.c.queueOf(w.s).index]
	switch redrive {
	case -1:
		return false
	case 0:
		return true
	}
	for _, m := range w.s.msgs {
		if 2*m.ReceiveCount >= redrive {
			return false
		}
	}
	return true
}

// deferLocked sends w back to the queue for delay (a nack that is no
// failure), freeing its group slot if it holds one. Called with g.mu held.
func (g *gate) deferLocked(w *waiter, delay time.Duration) {
	g.unpark(w)
	if gr := g.groups[w.group]; w.slotted && gr != nil {
		w.slotted = false
		delete(g.slotted, w.s)
		g.releaseSlot(gr)
	}
	first, end := w.s.rest()
	for _, l := range w.s.leases[first:end] {
		l.Nack(delay)
	}
	w.s.done()
	g.c.st.deferred.Add(int64(len(w.s.msgs)))
	g.c.intake.release(g.c.queueOf(w.s).index, len(w.s.msgs))
}

// releaseSlot frees a group slot of gr that a sequence held without
// running: the next waiting sequence takes it, asking for its turns.
// Called with g.mu held.
func (g *gate) releaseSlot(gr *group) {
	gr.running--
	if len(gr.waiting) > 0 {
		next := gr.waiting[0]
		gr.waiting = gr.waiting[1:]
		gr.running++
		next.slotted = true
		g.slotted[next.s] = next
		g.takes.Add(1)
		go func() { // not under g.mu: turn takes it
			defer g.takes.Done()
			g.turn(next)
		}()
	}
}

// park keeps w's leases alive while it waits: a heartbeat of its own that
// the gate beats. In the room (extra), its messages count in held, and the
// intake lets as many more be received; else they hold the intake's units
// they came with. Called with g.mu held.
func (g *gate) park(w *waiter, extra bool) {
	if _, ok := g.parked[w]; ok {
		return
	}
	if w.s.hb == nil {
		w.s.hb = heartbeat.New()
		for _, l := range w.s.leases {
			l.Start(w.s.hb)
		}
	}
	g.parked[w] = struct{}{}
	if w.extra = extra; extra {
		g.held += len(w.s.msgs)
		g.c.intake.park(len(w.s.msgs))
	}
}

// unpark ends w's wait, if parked. Called with g.mu held.
func (g *gate) unpark(w *waiter) {
	if _, ok := g.parked[w]; !ok {
		return
	}
	delete(g.parked, w)
	if w.slot > 0 {
		heap.Remove(&g.waits, w.slot-1)
	}
	if w.turn {
		g.turns -= len(w.s.msgs)
		w.turn = false
	}
	if w.extra {
		g.held -= len(w.s.msgs)
		g.c.intake.park(-len(w.s.msgs))
		w.extra = false
	}
}

// closedLocked gives back w, parked when close came or come to the gate
// after it: visibility 0 at once, never to run; once. Called with g.mu
// held.
func (g *gate) closedLocked(w *waiter) {
	if w.gone {
		return // close gave it back while it was parked
	}
	w.gone = true
	g.unpark(w)
	w.s.giveBack()
	w.s.done()
	g.c.intake.release(g.c.queueOf(w.s).index, len(w.s.msgs))
}

// close gives back every parked sequence and every one whose take is on
// the wire (once it is back, or cancelled after closeGrace), and stops
// the loop; what reaches the gate from then on is given back at once. It
// runs once no receive is in flight, before the handler pool closes.
func (g *gate) close() {
	g.mu.Lock()
	g.closed = true
	for w := range g.parked {
		g.closedLocked(w)
	}
	g.groups, g.slotted = map[string]*group{}, map[*sequence]*waiter{}
	g.mu.Unlock()
	// The takes on the wire get closeGrace to come back before they are
	// cancelled: a call cut short costs a store a connection (and kills
	// dynalite, which throws on an aborted request).
	taken := make(chan struct{})
	go func() { g.takes.Wait(); close(taken) }()
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	select {
	case <-taken:
	case <-grace.C:
	}
	g.cancel()
	<-taken
	if g.handlers != nil { // started
		<-g.served
	}
}

// serve is the gate's loop: it runs (or takes again) the parked sequences
// whose wait is over, and beats the parked leases every beat, until close.
func (g *gate) serve(beat time.Duration) {
	defer close(g.served)
	beats := time.NewTicker(beat)
	defer beats.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		g.mu.Lock()
		now := time.Now()
		var ready []*waiter
		for len(g.waits) > 0 && !g.waits[0].due.After(now) {
			w := heap.Pop(&g.waits).(*waiter)
			ready = append(ready, w)
		}
		if len(g.waits) > 0 {
			timer.Reset(g.waits[0].due.Sub(now))
		}
		g.mu.Unlock()
		for _, w := range ready {
			if w.retake {
				g.turn(w)
			} else {
				g.run(w)
			}
		}
		select {
		case <-g.ctx.Done():
			return
		case <-beats.C:
			g.mu.Lock()
			for w := range g.parked {
				w.s.hb.Beat()
			}
			g.mu.Unlock()
		case <-timer.C:
		case <-g.wake:
		}
	}
}

// waitHeap orders parked sequences by due; it implements container/heap.
// A sequence's slot is its position + 1, 0 when it is not in the heap.
type waitHeap []*waiter

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h waitHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot = i + 1
	h[j].slot = j + 1
}
func (h *waitHeap) Push(x any) {
	w := x.(*waiter)
	*h = append(*h, w)
	w.slot = len(*h)
}
func (h *waitHeap) Pop() any {
	old := *h
	n := len(old)
	w := old[n-1]
	old[n-1] = nil
	w.slot = 0
	*h = old[:n-1]
	return w
}

// pause holds the keys of m under each rate limit covering it until until
// (sqsloop.SlowDown): in the limit's store, for every process, and here
// for the sequences of those keys parked with an earlier turn. A failed
// pause is logged at WARN (at most every 10 s); m's own nack goes ahead.
func (g *gate) pause(m *sqsloop.Message, until time.Time) {
	for i, l := range g.limits {
		k := l.key(m)
		if k == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(g.ctx, storeCallTimeout)
		err := l.store.Pause(ctx, l.name+"/"+k, l.rate, until)
		cancel()
		g.mu.Lock()
		if err != nil {
			if now := time.Now(); now.Sub(g.warned) >= 10*time.Second {
				g.warned = now
				g.c.cfg.Logger.Warn("consumer: a rate limit's store failed to pause a key (sqsloop.SlowDown); other processes go on taking it",
					slog.String("limit", l.name), slog.String("message_id", m.ID), slog.Any("error", err))
			}
		}
		var moved []*waiter
		for _, w := range g.waits {
			if len(w.keys) > i && w.keys[i] == k && w.due.Before(until) {
				w.due = until
				moved = append(moved, w)
			}
		}
		for _, w := range moved {
			heap.Fix(&g.waits, w.slot-1)
		}
		g.mu.Unlock()
	}
}
