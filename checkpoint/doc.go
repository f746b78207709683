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
// a saved checkpoint proves progress. On a redelivery the middleware reads
// it before the handler runs (not on a first delivery, ReceiveCount 1,
// where there cannot be one), and Load answers from memory.
//
// A checkpoint ends with the ack, not with the handler: between the two
// an ack may never be made (the drain's budget spent, a lost lease, a
// kill, a failed dead-letter copy), and the message comes back. So once
// the handler returns nil after a checkpoint was saved or found, the
// middleware replaces the checkpoint with a mark that the job is done
// (jobstate.Completed), and after a permanent failure (sqsloop.Permanent:
// the message goes to the dead-letter queue) with a mark that it failed
// for good (jobstate.Failed, with why). A later delivery of a job marked
// done is acked without running the handler; one of a job marked failed
// fails for good again, without running (ErrFailedBefore, a
// sqsloop.Permanent error: to the dead-letter queue). A mark that cannot
// be written leaves the last checkpoint: the job resumes from it. After
// any other failure or a panic the checkpoint is kept for the next
// delivery. A checkpoint or a mark stays until it expires, Config.Retention
// after its last write, which should be the queue's retention period (a
// message never outlives it); a message moved to the dead-letter queue by
// the queue's redrive policy leaves its checkpoint to expire so.
//
// Cost, per message: nothing for a handler that never saves on its first
// delivery; otherwise one store write per Save and one write (the mark)
// at the end, plus one read on every redelivery, which answers Load.
// docs/checkpoints.md in the repository has the measured latency per
// store.
//
// The store is a jobstate.Store: jobstate.Memory in one process,
// jobstate/sqlitestate, jobstate/pgstate on SQLite or PostgreSQL, jobstate/dynamostore on
// DynamoDB. The package imports the root, heartbeat and jobstate only.
package checkpoint
