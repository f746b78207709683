// Package lifecycle runs several long-lived loops (SQS consumers, HTTP
// servers, reapers) under one coordinated shutdown. A [LoopGroup] starts
// every [Runnable] and stops them all at the first SIGTERM or SIGINT, when
// its context is done, or when any one returns; a second signal exits the
// process at once, as users expect from Ctrl+C twice.
// [LoopGroup.HealthHandler] serves liveness and readiness probes, and
// readiness turns false the moment shutdown begins, so a load balancer stops
// sending work before the drain, while liveness answers 200 until Run
// returns, so an orchestrator does not kill a process finishing its work.
//
// The drain budget is set in one place: [LoopGroup.GracePeriod], the
// platform's grace between SIGTERM and SIGKILL (ECS stopTimeout,
// Kubernetes terminationGracePeriodSeconds). The group gives each loop its
// share as the deadline of its Shutdown context: critical loops (the
// default) the whole budget, background loops ([LoopOption].Background) a
// shorter one, so they are done first; last loops ([LoopOption].Last),
// which serve the others (the health probes, metrics), are asked to stop
// only once every other loop has returned. Without a GracePeriod the group
// sets no budget: a loop with a Shutdown method drains on its own terms (a
// consumer within its ShutdownTimeout), any other loop has its context
// cancelled. Run logs which loop finished when, and [LoopGroup.Stats] says
// it too.
//
// Drain mode without exit: POST /drain to [LoopGroup.DrainHandler] (off
// unless mounted, loopback clients only by default) makes every loop that
// can pause (a consumer can) stop taking new work and finish what it has in
// flight, and stay up, not ready, until POST /resume.
//
// The package imports no other package of the project: a consumer satisfies
// [Runnable], and has its optional methods (Shutdown, Ready, Interrupt,
// Pause, Resume, Paused), by its method set alone.
//
// A typical main:
//
//	group := &lifecycle.LoopGroup{GracePeriod: 30 * time.Second} // the platform's; SIGTERM/SIGINT drain, a second one exits
//	_ = group.Add("orders", ordersConsumer)                                                      // critical: the group's budget
//	_ = group.Add("thumbnails", thumbsConsumer, lifecycle.LoopOption{Background: 5 * time.Second}) // done first
//	mux := http.NewServeMux()
//	mux.Handle(lifecycle.LivezPath, group.HealthHandler())
//	mux.Handle(lifecycle.ReadyzPath, group.HealthHandler())
//	srv := &http.Server{Addr: ":8081", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
//	_ = group.Add("http", lifecycle.HTTPServer(srv, nil), lifecycle.LoopOption{Last: true}) // answers through the drain
//	err := group.Run(ctx) // returns once every loop has stopped
//	flushTelemetry()      // nothing is sending any more
//
// Every goroutine the package starts has an owner that waits for it:
// [LoopGroup.Run] handles signals on its own goroutine and waits for every
// loop and every Shutdown call it made before it returns.
package lifecycle
