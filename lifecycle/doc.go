// Package lifecycle runs several long-lived loops (SQS consumers, HTTP
// servers, reapers) under one coordinated shutdown: a [LoopGroup] starts every
// [Runnable] and stops them all when any one returns, when its context is
// done, or when a [ShutdownCoordinator] begins shutdown; the coordinator turns
// SIGTERM and SIGINT into that shutdown, runs registered callbacks, and exits
// the process at once on a second signal, as users expect from Ctrl+C twice.
// [LoopGroup.HealthHandler] serves liveness and readiness probes, and
// readiness turns false the moment shutdown begins, so a load balancer stops
// sending work before the drain.
//
// The package imports no other package of the project: a consumer satisfies
// [Runnable] (and [Shutdowner], [ReadyReporter]) by its method set alone.
//
// A typical main:
//
//	coord, err := lifecycle.NewShutdownCoordinator(lifecycle.CoordinatorConfig{})
//	if err != nil { ... }
//	if err := coord.Install(); err != nil { ... }
//	defer coord.Stop()
//	group, err := lifecycle.NewLoopGroup(lifecycle.GroupConfig{Coordinator: coord})
//	if err != nil { ... }
//	if err := group.Add("orders", ordersConsumer); err != nil { ... }
//	health := &http.Server{Addr: ":8081", Handler: group.HealthHandler()}
//	go health.ListenAndServe() // ended by health.Shutdown below
//	err = errors.Join(group.Run(ctx), coord.Wait(ctx))
//	_ = health.Shutdown(ctx)
//
// Every goroutine the package starts has an owner that stops it and waits for
// it: [LoopGroup.Run] waits for every loop and every Shutdown call it made;
// [ShutdownCoordinator.Stop] ends the signal goroutine and waits for the
// shutdown callbacks.
package lifecycle
