// Package sqlmailbox is a durable [sqsloop.Mailbox] on a SQL database, with
// the semantics of SQS and memmailbox, so the consumer, the lease owner,
// heartbeats and the drain work on it unchanged: SQLite (package
// sqlmailbox/sqlite, an embedded file that survives restarts, no server) and
// PostgreSQL (package sqlmailbox/postgres, one queue shared by many worker
// machines). Each of those packages is the only one that imports its
// database driver, so a program compiles the database it uses and no other;
// this package holds the semantics and speaks to them through a driver
// interface that is internal to sqlmailbox, not user API.
//
// A program opens a [Store] (sqlite.Open; postgres.Open with a DSN, or
// postgres.New with a pgx pool the program configured) and takes its
// queues from it: [Store.CreateQueue] with a sqsloop.QueueSpec (and its
// dead-letter queue), or [Store.Queue] by name. A [Mailbox] implements
// sqsloop.Mailbox, sqsloop.BulkSender (up to 1,000 messages in one
// transaction: package producer sends through it), sqsloop.AttributesReader
// and sqsloop.DeadLetterQueueOpener. From configuration, a URL does the same:
// [Open] opens the Store of sqlite:jobs.db or postgres://host/db, and
// sqsloop.OpenMailbox the queue of sqlite:jobs.db?queue=jobs in a Store of
// its own (each database package registers its schemes as it is
// imported).
//
// # Migrations
//
// The schema is versioned ([SchemaVersion]). Opening a Store checks the
// version and changes nothing: a database without the schema, or with an
// older one, is refused with [ErrSchemaOutdated], one a newer sqsloop
// migrated with [ErrSchemaTooNew]. Migrating is a step of its own, as with
// any migration tool (River's rivermigrate): postgres.Migrate, run by a
// role that may create tables, before the workers start, whose role needs
// only SELECT, INSERT, UPDATE and DELETE on the tables (and USAGE on their
// sequences); sqlite.Migrate for a file an older sqsloop wrote. SQLite
// gives a new file (one without the schema) its schema at Open.
//
// # The lease-and-recovery system, in SQS's words
//
// A message row has a visibility deadline. Receive takes up to 10 rows whose
// deadline has passed, atomically (PostgreSQL: SELECT … FOR UPDATE SKIP
// LOCKED, and on a FIFO queue under a lock of the queue's row, which its
// receives take in turn; SQLite: one short write transaction), and in the
// same statement moves their deadline to now + the visibility timeout,
// adds one to their receive count, sets their first-receive time, and
// records the receiving Mailbox: the message is in flight (the seed's in_progress), its lease
// held. ChangeVisibility renews the lease (the heartbeat; the consumer's
// lease owner calls it while handlers beat) or, with 0, gives the message
// back (a nack). Delete acks: the row is deleted (completed), or copied to
// the archive table first. A lease that is not renewed lapses by itself: the
// receive query takes any row whose deadline has passed, so recovery needs
// no sweeper. The redrive policy's maxReceiveCount is the seed's
// max_retries: a message received that many times is moved to the
// dead-letter queue (failed) by the receive that would deliver it again,
// which goes on to the next visible message.
//
// Every receive gives a new receipt handle (the row's key and its receive
// count, signed with the queue's secret key): an older handle no longer
// extends the message, and deleting with it succeeds and deletes nothing,
// as SQS documents; a handle the queue never issued fails with
// sqsloop.ErrReceiptHandleExpired. FIFO queues keep one message group in
// flight at a time and its order, deduplicate by ID or content for
// DeduplicationWindow (5 minutes), and fill a receive with as many messages
// of one group as they can before they take another (SQS's FIFO delivery
// logic). Delays, the 12-hour lease ceiling, message attributes (chosen per
// receive), per-entry batch results (entries naming one message apply in
// order, each with its own result), queue attributes with the counts by
// state, and sqsloop's request rules (with the same error texts) are SQS's.
// A queue created with QueueSpec.Priority delivers messages of a higher
// priority first (the message attribute sqsloop.PriorityAttribute, -9 to
// 9, higher first, 0 without it; on a FIFO queue it orders the groups by
// their next message, never the messages within a group): a difference
// from SQS, which has none.
// A long poll waits in its caller's goroutine and never answers empty while
// a message is visible: every change that makes a message receivable (a
// send, a nack or a shortened lease, a FIFO delete that frees a group, a
// move to the dead-letter queue) wakes it at once when made through its
// Store, and on PostgreSQL from any process (LISTEN/NOTIFY, at most one
// NOTIFY per queue per 2 ms from each Store); a lease or delay ending
// wakes it when the database said it would; otherwise it looks again every
// Config.PollInterval (SQLite 200 ms, for writers in other processes). A
// change wakes as many of a queue's long polls as its messages need (the
// oldest first), not every one: a message sent does not send 32 waiting
// receives to the database of which one finds it. On PostgreSQL a receive
// of a standard queue looks from a second before where the Store's last
// receive began to take, so that index entries an old snapshot keeps
// alive (an idle transaction, a long report) are not stepped over again
// by every receive, and looks at the whole queue before a long poll
// answers empty and at least once a second, or every 100 times as long as
// the last whole look took (30 s at most) while such a snapshot makes
// whole looks slow, so that they take about 1 % of the database's time.
//
// # Beyond the Mailbox
//
// [Store.Sweep] (once) and [Store.Sweeper] (a loop a lifecycle.LoopGroup
// owns) are optional: they audit leases that lapsed and no receive has
// taken again, move those at maxReceiveCount to the DLQ, delete messages
// past their queue's retention period, forget old deduplication IDs, and
// trim the audit table, the archive table and the receiver registry,
// returning [SweepStats] (expired found, recovered, failed, scan duration,
// …). A sweep works in short transactions (at most 500 rows, about 20 ms
// each) and waits as long between them, whatever its backlog, so that
// other writers get their turns, and it audits every lapse it finds once,
// waiting for a row another transaction holds rather than passing it over. The audit table ([Store.Audit]) keeps every failure: dead letters,
// lapsed leases, retention deletes, and the consumer's own reports
// ([Mailbox.RecordFailure], from a middleware), for Config.AuditRetention.
// With Config.Archive, acked messages stay in the archive table
// ([Store.Archived]) for Config.ArchiveRetention. Every receiving Mailbox
// registers a row in the receiver registry (host, pid, started, last seen),
// renewed by its calls; [Store.Receivers] lists them with what each holds
// in flight and shows dead those that stopped.
//
// What is held and by whom: [Store.InFlight] lists a queue's messages in
// flight with their receive count, holder (the receiver row: host, PID,
// alive), lease deadline, last extension and time since the lease was last
// renewed, the leases that lapsed unnoticed first; [Store.LeaseStats]
// counts them, and since a time the acked and dead-lettered messages by
// receive count, the leases sweeps recovered and the failures reported.
// [SweepStats.ByQueue] says what each sweep recovered, by queue;
// otelsqsloop's LeaseMetrics turns both into metrics (the recovery rate,
// the messages past their deadline).
//
// # Where it differs from SQS
//
// Counts are exact, not approximate, and a deleted queue is gone at once
// (SQS takes up to 60 s and refuses the name for 60 s more). Messages are
// deleted for retention only by a sweep. Delivery order on a standard queue
// is by visibility deadline, then send order (SQS promises none); on a
// queue with priorities (which SQS has not) by priority first. A FIFO
// receive looks at the oldest 1,000 messages of the groups with nothing in
// flight: a message behind more than 1,000 others of blocked groups waits
// for them, whatever its priority. Leases follow the database's clock on PostgreSQL and the
// process's on SQLite. mailboxtest's conformance suite passes on both with
// no declared difference.
//
// # Durability
//
// A Send that returned has committed: its messages survive the process's
// death (SIGKILL) at any moment after, and a Delete that returned stays
// done. On SQLite (WAL journal) the default synchronous=FULL syncs the log
// at every commit, so they also survive a power loss, if the disk keeps
// what fsync reported written; sqlite.SyncNormal syncs at checkpoints only,
// and a power loss may then undo the last moments' calls (sends lost, acks
// undone: redelivered). On PostgreSQL, a commit is as durable as the
// server's settings make it (fsync, synchronous_commit). A receive
// commits without waiting for its WAL to reach the disk (its
// transaction's synchronous_commit is off): a server crash may undo a
// receive that returned, its messages visible again sooner (at least
// once), never a send, an ack or a visibility change that returned.
//
// All methods are safe for concurrent use, by many goroutines and many
// processes; a message is in flight to one receiver at a time. Where a
// method's doc says "the database's" error, a login the PostgreSQL server
// refuses or a privilege its role lacks wraps sqsloop.ErrAccessDenied
// (not transient); other database errors are transient.
package sqlmailbox
