// Package console is the operator console of sqsloop's queues: an
// http.Handler serving server-rendered pages, every asset embedded (it
// works offline, under a strict Content-Security-Policy: no inline script
// or style), that a service mounts under a path prefix or `sqsloop console`
// serves alone.
//
//	st, err := sqlite.Open(ctx, "jobs.db", sqlite.Options{})
//	c, err := console.NewDatabase(st, console.Options{Prefix: "/console", Auth: console.Auth{Username: "ops", Password: pw}})
//	defer c.Close()
//	mux.Handle("/console/", c)
//
// What it shows:
//
//   - Queues: every queue (SQS: ListQueues with a name prefix; a database:
//     all) with its visible, in-flight and delayed counts, its dead-letter
//     queue's depth, its oldest message, its FIFO groups in flight, and a
//     chart of its depth and throughput over the last hour, which the
//     console samples while it runs (Options.SampleInterval).
//   - Messages: a queue's or a dead-letter queue's, filtered by body
//     substring, JSON path, message attribute, receive count, age and
//     message group; one message whole (the body pretty-printed when it is
//     JSON, its message and system attributes, and in a database its
//     history from the audit table).
//   - Actions on all the messages a filter selects, not a page of them:
//     redrive (to the source queue or another, at a chosen rate, with
//     progress and cancel), delete, export as JSON lines. Each shows a
//     dry-run count first, is logged (who, what, on which messages, how
//     many) and, with Options.Journal, kept in a file that a restarted
//     console reads back. A message is deleted from its queue only after
//     it was sent to the other: an interruption leaves it in both, never in
//     neither, and the action says exactly how many it moved.
//   - Leases and workers: in a database, the messages in flight
//     (sqlmailbox.Store.InFlight: holder, receive count, deadline, last
//     extension) and the receiver registry; for SQS, the lease pages of
//     the worker processes of Options.Workers (package leasepage), merged,
//     with a button to drain and resume each (lifecycle.LoopGroup's drain
//     endpoint).
//
// Reading without receiving: a database mailbox's messages are read as
// they are (sqlmailbox.Store.Browse): no receive count goes up. SQS has no
// such read. To list a queue the console receives every message of it (a
// "look": each held hidden for Options.Hold, extended while the look runs,
// all given back at its end) and keeps what it read in memory, up to
// 100,000 messages or 256 MiB; filters and counts apply to that. A look
// counts one receive of each message toward the queue's redrive policy, so
// the console asks before the first look at a queue with one, and looks at
// the others (dead-letter queues) freely. Actions receive the queue again:
// a redrive of a whole dead-letter queue uses SQS's StartMessageMoveTask
// where the server has it, any other one receives, sends, then deletes, up
// to 10 messages at a time. One action (or look) at a time runs on a
// queue. SQS reports no oldest message (CloudWatch does), no delete counts
// (the chart's throughput on SQS is the depth's fall) and no message
// groups in flight (the workers' lease pages show theirs).
//
// Safety: without Auth, the console answers loopback clients only; with
// it, basic authentication, a bearer token, or the mounting service's own
// (Auth.External). Every state-changing request carries a CSRF token and
// must come from the console's own origin; Options.ReadOnly hides and
// refuses every action. Receipt handles never appear in a page or the log.
package console
