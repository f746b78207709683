// Package lifecycle runs several long-lived loops (SQS consumers, HTTP
// servers, reapers) under one coordinated shutdown. A [LoopGroup] starts
// every [Runnable] and stops them all at the first SIGTERM or SIGINT, when
// its context is done, or when any one returns; a second signal exits the
// process at once, as users expect from Ctrl+C twice.
// [LoopGroup.HealthHandler] serves liveness and readiness probes, and
// readiness turns false the moment shutdown begins, so a load balancer stops
// sending work before the drain.
//
// The group sets no drain budget of its own: a loop that implements
// [Shutdowner] drains on its own terms (a consumer within its
// ShutdownTimeout), any other loop has its context cancelled.
//
// The package imports no other package of the project: a consumer satisfies
// [Runnable] (and [Shutdowner], [ReadyReporter]) by its method set alone.
//
// A typical main:
//
//	var group lifecycle.LoopGroup // SIGTERM/SIGINT drain; a second one exits at once
//	if err := group.Add("orders", ordersConsumer); err != nil { ... }
//	health := &http.Server{Addr: ":8081", Handler: group.HealthHandler()}
//	go health.ListenAndServe() // ended by health.Shutdown below
//	err := group.Run(ctx)      // returns once every loop has stopped
//	_ = health.Shutdown(ctx)
//	flushTelemetry()           // nothing is sending any more
//
// Every goroutine the package starts has an owner that waits for it:
// [LoopGroup.Run] handles signals on its own goroutine and waits for every
// loop and every Shutdown call it made before it returns.
package lifecycle
