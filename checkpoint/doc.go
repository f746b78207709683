// Package checkpoint lets a long handler save its progress, so that a later
// delivery of the same message resumes where the last one was instead of
// starting over: the way a retried Temporal activity reads the heartbeat
// details its last attempt recorded.
//
// The middleware (Checkpoints.Middleware, in consumer.Config.Middleware or
// sqslambda.Config.Middleware alike) gives each handler run a checkpoint
// in its context. Inside the handler:
//
//	var st progress
//	if _, err := checkpoint.LoadJSON(ctx, &st); err != nil { // the last saved, on a redelivery
//		return err
//	}
//	for ; st.Step < 20; st.Step++ {
//		doStep(st.Step)
//		if err := checkpoint.SaveJSON(ctx, st); err != nil { // also a heartbeat
//			return err
//		}
//	}
//
// A checkpoint belongs to one message of one queue: its key is
// Config.Queue and the message ID, which stays the same across
// redeliveries. Its value is small (MaxSize, 64 KiB): an index, an offset,
// a hash's state, not the work's output. Save writes it to the store at
// once (one write per Save, no batching: a process killed after Save
// returned has the value saved), and beats the message's heartbeat, since
// a saved checkpoint proves progress. Load reads it once per delivery (not
// at all on a first delivery, ReceiveCount 1, where there cannot be one)
// and then answers from memory.
//
// The middleware deletes the checkpoint once the handler returns nil (the
// consumer acks the message) or a permanent failure (sqsloop.Permanent:
// the message goes to the dead-letter queue); after any other failure or a
// panic it is kept for the next delivery. A message moved to the
// dead-letter queue by the queue's redrive policy (after maxReceiveCount)
// is not seen by the middleware: its checkpoint stays until it expires,
// Config.Retention after its last save, which should be the queue's
// retention period (a message never outlives it).
//
// Cost, per message: nothing for a handler that never saves; otherwise one
// store write per Save and one delete at the end, plus one read on a
// redelivery that loads (or deletes) the checkpoint. docs/checkpoints.md
// in the repository has the measured latency per store.
//
// The store is a jobstate.Store: jobstate.Memory in one process,
// jobstate/sqlitestate, jobstate/pgstate on SQLite or PostgreSQL, jobstate/dynamostore on
// DynamoDB. The package imports the root, heartbeat and jobstate only.
package checkpoint
