package postgres

// The SQL of the PostgreSQL dialect, all of it. Time is the server's:
// statement_timestamp(), fixed for one statement, so every machine sharing
// the database agrees on when a lease ends. Durations are bound in whole
// seconds. Every call is one statement (and so one round trip) but a FIFO
// receive and a FIFO send, which take a few in one transaction. Data-
// modifying CTEs run to completion whether or not the query reads them
// (PostgreSQL's rule), so the audit and archive inserts ride along, and so
// does the NOTIFY that wakes other processes' long polls, when the
// notifier lets the statement carry it (its payload, or NULL: CASE WHEN ... THEN
// pg_notify(...) END; a notification is sent at commit).
const (
	// qLock takes the advisory lock Migrate holds (its key is "sqsloop" in
	// ASCII, as a number), until the transaction ends.
	qLock          = `SELECT pg_advisory_xact_lock(32494362876145520)`
	qHasSchema     = `SELECT to_regclass('sqsloop_schema') IS NOT NULL`
	qSchemaTable   = `CREATE TABLE IF NOT EXISTS sqsloop_schema (version integer NOT NULL)`
	qSchemaVersion = `SELECT coalesce(max(version), 0) FROM sqsloop_schema`
	qSetVersion    = `WITH d AS (DELETE FROM sqsloop_schema) INSERT INTO sqsloop_schema (version) VALUES ($1)`

	// channel is the LISTEN/NOTIFY channel; the payload names the queue,
	// its messages and the Store (see notify.go).
	channel = "sqsloop"
	qListen = `LISTEN ` + channel
	qNotify = `SELECT pg_notify('` + channel + `', $1::text)`

	qInsertQueue = `INSERT INTO sqsloop_queues
	(name, fifo, content_based_dedup, visibility_timeout, delay, retention, max_message_size, max_receive_count, dlq_id, key, priority)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, nullif($9::bigint, 0), $10, $11)
	ON CONFLICT (name) DO NOTHING`
	qLoadQueue = `SELECT q.id, q.name, q.fifo, q.content_based_dedup, q.visibility_timeout, q.delay, q.retention,
	q.max_message_size, q.max_receive_count, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.key, q.created_at, q.priority
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id WHERE q.name = $1`
	qQueueIsDLQ  = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues s JOIN sqsloop_queues d ON s.dlq_id = d.id WHERE d.name = $1)`
	qDeleteQueue = `DELETE FROM sqsloop_queues WHERE id = $1`
	qQueueID     = `SELECT id FROM sqsloop_queues WHERE name = $1`
	// Messages named by id. A statement that reads messages by id
	// restricts them by id = $n or id = ANY(an array: a parameter, or
	// ARRAY(SELECT id FROM one of its CTEs)), a join by id beside it at
	// most, and never compares the table's queue_id: it locks the rows so
	// found, returning their queue_id, and keeps those of its queue
	// (queue_id = $1 on what it locked). The receive's index, partial to
	// messages whose queue_id IS NOT NULL (all of them), is then no choice
	// for it (nothing in it implies that predicate), nor is the FIFO
	// messages' (dedup_id <> ''), and its plan can only descend the primary key to
	// each id, or read the table (costed at its size on disk), however
	// the planner's statistics stand. Statistics taken while the queue was
	// empty (a queue that keeps up, analyzed under an old snapshot) cost
	// the table at one row, and every path at about the same; the planner
	// then reads a whole index, filtering as it goes (the primary key for
	// a join by id alone, the receive's index for a condition on any of
	// its columns), every dead entry the snapshot keeps (measured: an ack
	// 0.11 ms before the snapshot, 33.9 ms 40 s into it;
	// benchmarks/README.md, the idle transaction;
	// TestLookupsByIDReadTheKeyUnderStaleStatistics, generic and custom
	// plans). A row of another queue so locked (a handle's message since
	// moved to the DLQ) is held until the statement's transaction ends
	// and left as it is.

	// qPurgeQueue deletes every message of queue $1, locked in id order
	// first; qLockMessages locks them so, for a queue about to be
	// deleted (its queue row locked before: the order of a FIFO receive).
	qPurgeQueue = `WITH l AS MATERIALIZED (` + qLockMessages + `)
	DELETE FROM sqsloop_messages m WHERE m.id = ANY(ARRAY(SELECT id FROM l))`
	qLockMessages = `SELECT id FROM sqsloop_messages WHERE queue_id = $1 ORDER BY id FOR UPDATE`
	qLockQueue    = `SELECT id FROM sqsloop_queues WHERE name = $1 FOR UPDATE`

	// qSend stores a standard queue's batch in the order given, and wakes
	// the queue's long polls in every process when it carries the NOTIFY
	// ($7, its payload).
	qSend = `WITH ins AS (
		INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, priority, sent_at, visible_at)
		SELECT $1, u.mid, u.body, u.attrs, u.grp, u.prio, statement_timestamp(), statement_timestamp() + u.delay * interval '1 second'
		FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::integer[], $8::smallint[])
			WITH ORDINALITY AS u(mid, body, attrs, grp, delay, prio, n)
		ORDER BY u.n
		RETURNING 1
	)
	SELECT (SELECT count(*) FROM ins), CASE WHEN $7::text IS NOT NULL THEN pg_notify('` + channel + `', $7) END`
	// A FIFO send, in one transaction: qClaimDedup claims the batch's
	// deduplication IDs ($2, each once, with the message ID of its first
	// message, $3) for $4 seconds (DeduplicationWindow), in key order (the
	// order the sweep's qTrimDedup locks them in, so the two cannot
	// deadlock; nor can two sends), unless an ID is remembered and
	// unexpired, and returns those it claimed; qStoreFIFO stores the
	// messages of the IDs claimed, in the batch's order, returning each
	// one's id (its sequence number); qDedupSeq records those, and
	// qDedupFind reads the message ID and sequence number of the IDs
	// another send holds (the duplicates).
	qClaimDedup = `INSERT INTO sqsloop_dedup AS x (queue_id, dedup_id, message_id, expires_at)
		SELECT $1, u.d, u.m, statement_timestamp() + $4::integer * interval '1 second'
		FROM unnest($2::text[], $3::text[]) AS u(d, m) ORDER BY u.d
		ON CONFLICT (queue_id, dedup_id) DO UPDATE SET message_id = excluded.message_id, expires_at = excluded.expires_at, seq = 0
		WHERE x.expires_at <= statement_timestamp()
		RETURNING dedup_id`
	qStoreFIFO = `INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, dedup_id, priority, sent_at, visible_at)
		SELECT $1, u.mid, u.body, u.attrs, u.grp, u.dedup, u.prio, statement_timestamp(), statement_timestamp() + u.delay * interval '1 second'
		FROM unnest($2::text[], $3::text[], $4::bytea[], $5::text[], $6::text[], $7::integer[], $8::smallint[])
			WITH ORDINALITY AS u(mid, body, attrs, grp, dedup, delay, prio, n)
		ORDER BY u.n
		RETURNING dedup_id, id`
	qDedupSeq = `UPDATE sqsloop_dedup x SET seq = u.s FROM unnest($2::text[], $3::bigint[]) AS u(d, s)
		WHERE x.queue_id = $1 AND x.dedup_id = u.d`
	qDedupFind = `SELECT dedup_id, message_id, seq FROM sqsloop_dedup WHERE queue_id = $1 AND dedup_id = ANY($2::text[])`

	// No deadlock. A transaction that waits for a lock while it holds
	// others is part of a deadlock only if another waits for what it holds;
	// here every statement that locks messages and waits for them (acks,
	// visibility changes, a FIFO receive, sweeps, purges) locks them in the
	// order of their ids (ORDER BY id … FOR UPDATE), and none takes a lock
	// on a queue's row after its messages that another may wait for (a
	// FIFO receive locks its queue's row first; the sweep records its
	// progress in a statement of its own; the foreign-key check of a move
	// to the DLQ takes KEY SHARE of the DLQ's row, which only deleting that
	// queue conflicts with, and a DLQ in use is not deleted), so none of
	// them can wait for another that waits for it. A standard receive locks
	// in the order of delivery (the receive index's: deadlines), SKIP
	// LOCKED, so that receivers that compete pass over each other's
	// messages in one index scan, and SKIP LOCKED does not keep it out of a
	// cycle: locking a row whose last updater committed while the receive
	// looked at it, the server follows the row's update chain, waits for
	// whoever holds its newest version (an ack deleting it) whatever the
	// wait policy, and keeps a lock on that version even when the row no
	// longer qualifies (heap_lock_updated_tuple). A receive could so hold a
	// message an ack had yet to delete while it waited for another the ack
	// had deleted: "deadlock detected" (40P01), the ack lost. So a standard
	// receive's statement gives up any lock it waited for receiveLockTimeout
	// (100 ms), ten times sooner than the server looks for deadlocks
	// (deadlock_timeout, 1 s by default): a cycle through a receive ends
	// with the receive, which took nothing and is run again (55P03), never
	// with the ack. It waits only in that race, a moment's wait for an ack,
	// rarely.
	//
	// A receive takes messages in windows, each a statement (on a FIFO
	// queue a transaction) of its own, so that one's locks end before the
	// next's begin: the Go side opens another window when one moved
	// messages to the DLQ (the dead take no place in the batch).
	//
	// The standard picks lock and return, in the order of delivery, the
	// messages to take: id, receive_count and n, their place in that
	// order; the FIFO pick returns ids, which its window locks. Their
	// LIMIT is a constant ({max}, 1–10, put in place by receiveQueries):
	// with a parameter there, a prepared receive's generic plan would be
	// costed for a tenth of the table, worse than a plan made for the
	// call's values, and the server would plan every call afresh (pgx
	// prepares each statement once per connection; a plan costs about as
	// much as the receive itself).
	//
	// qPickStandard: the oldest visible messages of a standard queue at or
	// after ($6, $7) in the receive's index (driver.ReceiveArgs.From: where
	// a receive of the Store last began to take; '-infinity' for the
	// whole queue), but those the same receive took already ($4: taken
	// with a 0 s lease, a message is visible again at once), skipping
	// those another receive has locked. All messages of a queue without
	// priorities have priority 0, so the index's range is one queue's
	// visible messages. was is each one's place before the receive.
	qPickStandard = `SELECT id, receive_count, was, row_number() OVER () AS n FROM (
			SELECT id, receive_count, visible_at AS was FROM sqsloop_messages
			WHERE queue_id = $1 AND priority = 0 AND (visible_at, id) >= ($6::timestamptz, $7::bigint) AND visible_at <= {now}
				AND id <> ALL($4::bigint[]) {skip}AND {locktimeout}
			ORDER BY visible_at, id LIMIT {max}
			FOR UPDATE SKIP LOCKED
		) s`
	// qPickPriority: the highest priority first, then the oldest
	// deadline; the index gives that order, and the scan reads past the
	// messages of higher priorities that are in flight or delayed. A send
	// of a higher priority lands before any place in that order, so it
	// looks at the whole queue: ($6, $7), unused, keep the parameters of
	// every pick alike.
	qPickPriority = `SELECT id, receive_count, was, row_number() OVER () AS n FROM (
			SELECT id, receive_count, visible_at AS was FROM sqsloop_messages
			WHERE queue_id = $1 AND visible_at <= {now} AND id <> ALL($4::bigint[]) AND ($6::timestamptz, $7::bigint) IS NOT NULL {skip}
				AND {locktimeout}
			ORDER BY priority DESC, visible_at, id LIMIT {max}
			FOR UPDATE SKIP LOCKED
		) s`
	// skipGroups is {skip} of a standard pick that passes over some message
	// groups (ReceiveArgs.SkipGroups), the last parameter ({n}: after the
	// dead-letter queue's when the queue has one); "" for one that passes
	// over none.
	skipGroups = `AND group_id <> ALL({n}::text[]) `
	// receiveLockTimeout bounds a standard receive's wait for a lock (see
	// above), set for its statement alone (set_config's is_local: until
	// the statement's transaction ends) before the scan locks a row.
	receiveLockTimeout = "100ms"
	locktimeout        = `(SELECT set_config('lock_timeout', '` + receiveLockTimeout + `', true)) IS NOT NULL AND ` + asyncCommit
	// asyncCommit lets a receive's transaction commit without waiting for
	// its WAL to reach the disk (synchronous_commit off, for that
	// transaction alone), which saves the pickup a flush: a server crash
	// may then undo a receive that returned, so that its messages are
	// visible again sooner, their receive counts one lower and their
	// handles stale, as when a receive's answer is lost (at least once);
	// an ack or a visibility change of them commits after it and flushes
	// it first. Sends, acks and visibility changes wait for their flush.
	asyncCommit = `(SELECT set_config('synchronous_commit', 'off', true)) IS NOT NULL`
	// qLockFIFO serializes a FIFO queue's receives (not its sends: an
	// insert's foreign-key check takes a KEY SHARE lock, which NO KEY
	// UPDATE does not conflict with). It is the first lock a FIFO receive
	// takes, before any message, and commits asynchronously (asyncCommit).
	qLockFIFO = `SELECT 1 FROM sqsloop_queues WHERE id = $1 AND ` + asyncCommit + ` FOR NO KEY UPDATE`
	// qPickFIFO: of the oldest 1,000 messages of the groups with nothing in
	// flight, those with only visible messages before them in their group,
	// a group at a time, the group whose next message has the highest
	// priority first (all 0 without priorities), then the oldest: as many
	// of one group as the receive takes before another (SQS's FIFO
	// delivery logic). Priority orders the groups, never the messages
	// within one. It picks {max} messages to deliver ({live}) and,
	// before and among them, those to move to the DLQ, which take no place
	// in the batch; it returns their ids only, which qWindowFIFO locks in
	// id order. Every message of a FIFO queue has a deduplication ID, so
	// the prefix is a range of the FIFO messages' index (dedup_id <> '',
	// the index's predicate). ($4, $6 and $7, unused, keep the parameters
	// of every pick alike.)
	qPickFIFO = `SELECT id FROM (
			SELECT id, head, prio,
				count(*) FILTER (WHERE {live}) OVER (ORDER BY prio DESC, head, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
			FROM (
				SELECT id, receive_count, bool_and(visible_at <= {now}) OVER (PARTITION BY group_id ORDER BY id) AS ok,
					min(id) OVER (PARTITION BY group_id) AS head,
					first_value(priority) OVER (PARTITION BY group_id ORDER BY id) AS prio
				FROM (
					SELECT id, group_id, visible_at, priority, receive_count FROM sqsloop_messages
					WHERE queue_id = $1 AND dedup_id <> '' AND group_id NOT IN (
						SELECT group_id FROM sqsloop_messages
						WHERE queue_id = $1 AND visible_at > {now} AND receive_count > 0
					)
					ORDER BY id LIMIT 1000
				) prefix
			) runs WHERE ok AND cardinality($4::bigint[]) >= 0 AND ($6::timestamptz, $7::bigint) IS NOT NULL
		) p WHERE before < {max} ORDER BY prio DESC, head, id`

	// qWindowStandard is one window of a standard queue's receive: what the
	// pick ({pick}) locked, then {take}; it misses nothing (missed: none).
	qWindowStandard = `WITH picked AS MATERIALIZED ({pick}), missed AS (SELECT 0::bigint AS id WHERE false){take}`
	// qWindowFIFO is one window of a FIFO queue's receive, whose receives
	// take turns: its candidates locked in id order, waiting for one
	// another transaction holds (an ack or a lease change: a moment), each
	// still in the queue, then {take}. missed are those gone meanwhile.
	qWindowFIFO = `WITH cand AS MATERIALIZED (
		SELECT id, row_number() OVER () AS n FROM ({pick}) c
	), locked AS MATERIALIZED (
		SELECT m.id, m.queue_id, m.receive_count, m.visible_at AS was FROM sqsloop_messages m
		WHERE m.id = ANY(ARRAY(SELECT id FROM cand))
		ORDER BY m.id FOR UPDATE
	), mine AS MATERIALIZED (
		SELECT id, receive_count, was FROM locked WHERE queue_id = $1
	), missed AS MATERIALIZED (
		SELECT id FROM cand WHERE id NOT IN (SELECT id FROM mine)
	), picked AS MATERIALIZED (
		SELECT l.id, l.receive_count, l.was, c.n FROM mine l JOIN cand c ON c.id = l.id
	){take}`
	// takeLive takes every picked message: one more receive count, a lease
	// of $2 seconds, its receive time, its first receive time if it had
	// none, no extension yet, and the receiving Mailbox's receiver ID ($3)
	// as its holder. Each row returned says what became of a candidate:
	// kind 0 taken (with n, its place in the pick's order: the update
	// returns them in no set order, and was, its place in the receive's
	// index before), 2 missed (only its id); each ends with the window's
	// time ({now}: the statement's, or for a receive's later windows the
	// first one's, $5, so that one receive takes all its messages at one
	// time, whatever it took them in).
	takeLive = `, taken AS (
		UPDATE sqsloop_messages m
		SET receive_count = m.receive_count + 1, visible_at = {now} + $2::integer * interval '1 second',
			received_at = {now}, first_received_at = coalesce(m.first_received_at, {now}),
			extended_at = NULL, leased = true, leased_by = $3
		FROM picked p
		WHERE {live}m.id = p.id AND m.id = ANY(ARRAY(SELECT id FROM picked))
		RETURNING p.n, p.was, m.id, m.message_id, m.body, m.attributes, m.group_id, m.dedup_id, m.sent_at, m.first_received_at, m.receive_count
	)
	SELECT 0, *, {now} FROM taken
	UNION ALL
	SELECT 2, 0, 'epoch', id, '', '', NULL, '', '', 'epoch', 'epoch', 0, {now} FROM missed`
	// takeOrDeadLetter is takeLive for a queue with a dead-letter queue:
	// the picked messages received maxReceiveCount ($8) times already are
	// moved to the DLQ ($9) instead, keeping their rows, and audited (the
	// queue's name $10, reason $11, kind $12); each returns a row of kind 1
	// (n, was and id set).
	takeOrDeadLetter = `, dead AS (
		UPDATE sqsloop_messages m SET queue_id = $9, visible_at = {now}, leased = false, leased_by = NULL
		FROM picked p
		WHERE p.receive_count >= $8 AND m.id = p.id AND m.id = ANY(ARRAY(SELECT id FROM picked))
		RETURNING p.n, p.was, m.id, m.message_id, m.receive_count
	), audit AS (
		INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
		SELECT $10, message_id, receive_count, $12, $11, {now} FROM dead
		RETURNING 1
	)` + takeLive + `
	UNION ALL
	SELECT 1, n, was, id, '', '', NULL, '', '', 'epoch', 'epoch', 0, {now} FROM dead`
	// qNext says, after a receive that took nothing, whether the queue
	// exists, whether visible messages are there at or after ($4, $5)
	// (where the receive looked from: other transactions held them), when
	// the earliest future visibility deadline of the queue's messages is
	// when $2 asks ('epoch' for none, or when not asked), and the server's
	// now. It reads the receive's index one priority level at a time ($3:
	// {0} on a queue without priorities), so each look is a range of it,
	// however many messages are in flight.
	qNext = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = $1),
		EXISTS (SELECT 1 FROM unnest($3::smallint[]) l(p) WHERE EXISTS (
			SELECT 1 FROM sqsloop_messages WHERE queue_id = $1 AND priority = l.p AND (visible_at, id) >= ($4::timestamptz, $5::bigint)
				AND visible_at <= statement_timestamp())),
		CASE WHEN $2 THEN coalesce((SELECT min((SELECT min(visible_at) FROM sqsloop_messages
				WHERE queue_id = $1 AND priority = l.p AND visible_at > statement_timestamp())) FROM unnest($3::smallint[]) l(p)), 'epoch')
			ELSE 'epoch' END,
		statement_timestamp()`

	qExists = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = $1)`
	// qCounts reads queue $1's counts: visible, in flight (received, its
	// deadline ahead) and delayed (never received, visible later). It
	// reads the receive's index one priority level at a time ($2, as
	// qNext), in two ranges of it, the visible and the later, so that each
	// message's entries are read once, and only those of the ranges
	// counted.
	qCounts = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = $1),
	(SELECT coalesce(sum((SELECT count(*) FROM sqsloop_messages
		WHERE queue_id = $1 AND priority = l.p AND visible_at <= statement_timestamp())), 0)::bigint FROM unnest($2::smallint[]) l(p)),
	c.f, c.d FROM (SELECT coalesce(sum(x.f), 0)::bigint AS f, coalesce(sum(x.d), 0)::bigint AS d FROM unnest($2::smallint[]) l(p) CROSS JOIN LATERAL (
		SELECT count(*) FILTER (WHERE receive_count > 0) AS f, count(*) FILTER (WHERE receive_count = 0) AS d FROM sqsloop_messages
		WHERE queue_id = $1 AND priority = l.p AND visible_at > statement_timestamp()) x) c`

	// qDelete deletes the messages of the refs ($2 ids, $3 receive
	// counts) whose receive is the message's (qDeleting), locked in id
	// order first; $4 is true on a FIFO queue, whose handles expire with
	// the lease. A ref given twice deletes once. A delete that carries the
	// NOTIFY ($5: a FIFO queue's, whose delete may free a group) sends it
	// if it deleted something.
	qDelete = `WITH lk AS MATERIALIZED (` + qDeleting + `), l AS (SELECT id FROM lk WHERE queue_id = $1)
	DELETE FROM sqsloop_messages m WHERE m.id = ANY(ARRAY(SELECT id FROM l))
	RETURNING m.id, m.receive_count, CASE WHEN $5::text IS NOT NULL THEN pg_notify('` + channel + `', $5) END`
	// qDeleteArchive is qDelete copying the deleted messages to the
	// archive table, under the queue's name $6 (Config.Archive).
	qDeleteArchive = `WITH lk AS MATERIALIZED (` + qDeleting + `), l AS (SELECT id FROM lk WHERE queue_id = $1), d AS (
		DELETE FROM sqsloop_messages m WHERE m.id = ANY(ARRAY(SELECT id FROM l))
		RETURNING m.id, m.message_id, m.body, m.attributes, m.group_id, m.receive_count, m.sent_at
	), a AS (
		INSERT INTO sqsloop_archive (queue, message_id, body, attributes, group_id, receive_count, sent_at, deleted_at)
		SELECT $6, message_id, body, attributes, group_id, receive_count, sent_at, statement_timestamp() FROM d
		RETURNING 1
	)
	SELECT id, receive_count, CASE WHEN $5::text IS NOT NULL THEN pg_notify('` + channel + `', $5) END FROM d`
	// qDeleting locks, in id order, the messages a delete deletes, with
	// their queue (l keeps queue $1's): the keys bound the scan ($2 with =
	// ANY: an index scan of the primary key), the pairs pick the receives,
	// checked again on the row's newest version once its lock is held.
	qDeleting = `SELECT m.id, m.queue_id FROM sqsloop_messages m
		WHERE m.id = ANY($2::bigint[]) AND (m.id, m.receive_count) IN (SELECT * FROM unnest($2::bigint[], $3::integer[]))
			AND (NOT $4 OR m.visible_at > statement_timestamp())
		ORDER BY m.id FOR UPDATE`

	// qAddAcked adds counts (queue $1, hour $2, receive count $3: $4
	// messages) to the acked tally, in key order (two Stores adding at
	// once take the rows' locks in one order), skipping deleted queues.
	qAddAcked = `INSERT INTO sqsloop_acked AS x (queue_id, hour, receive_count, messages)
	SELECT u.q, u.h, u.c, u.n FROM unnest($1::bigint[], $2::timestamptz[], $3::integer[], $4::bigint[]) AS u(q, h, c, n)
	WHERE EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = u.q)
	ORDER BY u.q, u.h, u.c
	ON CONFLICT (queue_id, hour, receive_count) DO UPDATE SET messages = x.messages + excluded.messages`

	// qChange applies the batch's changes in order, each to its message as
	// the changes before it left it, in one statement: a change applies
	// when its receive ($3) is the message's, the message is in flight (at
	// the statement's start, and no earlier applied change of the batch
	// nacked it) and its new deadline is within $5 seconds
	// (sqsloop.MaxVisibilityTimeout, 12 h) of the receive; the last change
	// that applies to a message sets its lease. Each entry, in order,
	// reports 0 (changed), 1 (stale) or 2 (past the ceiling), and whether
	// some deadline moved earlier, which carries the NOTIFY when the
	// notifier lets it ($6).
	qChange = `WITH c AS (
		SELECT * FROM unnest($2::bigint[], $3::integer[], $4::integer[]) WITH ORDINALITY AS c(id, cnt, secs, n)
	), cur AS MATERIALIZED (
		SELECT m.id, m.queue_id, m.receive_count, m.received_at, m.visible_at FROM sqsloop_messages m
		WHERE m.id = ANY($2::bigint[]) AND m.visible_at > statement_timestamp()
		ORDER BY m.id FOR UPDATE
	), e AS MATERIALIZED (
		SELECT c.n, c.id, c.secs, cur.visible_at AS was,
			coalesce(cur.receive_count = c.cnt, false) AS live,
			coalesce(statement_timestamp() + c.secs * interval '1 second' <= cur.received_at + $5::integer * interval '1 second', false) AS within
		FROM c LEFT JOIN cur ON cur.id = c.id AND cur.queue_id = $1
	), r AS MATERIALIZED (
		SELECT e.n, e.id, e.secs, e.was, e.within,
			e.live AND NOT EXISTS (SELECT 1 FROM e z WHERE z.id = e.id AND z.n < e.n AND z.live AND z.within AND z.secs = 0) AS inflight
		FROM e
	), last AS MATERIALIZED (
		SELECT DISTINCT ON (id) id, secs, was FROM r WHERE inflight AND within ORDER BY id, n DESC
	), upd AS (
		UPDATE sqsloop_messages m SET visible_at = statement_timestamp() + last.secs * interval '1 second', leased = last.secs > 0,
			extended_at = CASE WHEN last.secs > 0 THEN statement_timestamp() END
		FROM last WHERE m.id = last.id AND m.id = ANY(ARRAY(SELECT id FROM last))
		RETURNING 1
	), s AS (
		SELECT EXISTS (SELECT 1 FROM last WHERE statement_timestamp() + last.secs * interval '1 second' < last.was) AS sooner
	)
	SELECT CASE WHEN r.inflight AND r.within THEN 0 WHEN r.inflight THEN 2 ELSE 1 END, s.sooner,
		CASE WHEN $6::text IS NOT NULL AND s.sooner THEN pg_notify('` + channel + `', $6) END
	FROM r, s ORDER BY r.n`

	qRecordFailure = `WITH l AS MATERIALIZED (
		SELECT id, queue_id FROM sqsloop_messages WHERE id = $2 AND receive_count = $3 FOR UPDATE
	), u AS (
		UPDATE sqsloop_messages SET leased = false WHERE id = ANY(ARRAY(SELECT id FROM l WHERE queue_id = $1)) RETURNING 1
	)
	INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
	VALUES ($4, $5, $6, $7, $8, statement_timestamp())`
	qAuditList = `SELECT queue, message_id, receive_count, kind, reason, at FROM sqsloop_audit
	WHERE $1 = '' OR queue = $1 ORDER BY id DESC LIMIT $2`
	qArchiveList = `SELECT queue, message_id, body, attributes, group_id, receive_count, sent_at, deleted_at FROM sqsloop_archive
	WHERE queue = $1 ORDER BY id DESC LIMIT $2`

	// The sweep's steps (sqlmailbox's policy runs them), each one
	// statement that handles at most $limit rows, locking messages in id
	// order and waiting for those another transaction holds (a moment),
	// so that no lapse is passed over.
	qSweepQueues = `SELECT q.id, q.name, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.max_receive_count, q.retention, q.priority,
		q.swept_at, statement_timestamp()
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id ORDER BY q.id`
	// qSweepLapsed handles up to $6 leases of queue $1 of priority $2 that
	// lapsed after ($3, $4) (deadline, id: where the last step left off)
	// and by $5, one range of the receive's index: the over-received ones
	// ($8 maxReceiveCount, $7 DLQ) move to the DLQ, the others are marked
	// no longer leased; both are audited (the queue's name $9, reasons $10
	// and $13, kinds $11 and $12). Once it holds a lease's lock it checks
	// that the lease is still there and lapsed: a receive may have taken
	// the message again, an ack deleted it. It returns how many of each,
	// how many leases it looked at, and the last one's deadline and id.
	qSweepLapsed = `WITH cand AS MATERIALIZED (
		SELECT id, visible_at FROM sqsloop_messages
		WHERE queue_id = $1 AND priority = $2 AND (visible_at, id) > ($3, $4) AND visible_at <= $5 AND leased
		ORDER BY visible_at, id LIMIT $6
	), lk AS MATERIALIZED (
		SELECT m.id, m.queue_id, m.message_id, m.receive_count, ($7 <> 0 AND m.receive_count >= $8) AS dead FROM sqsloop_messages m
		WHERE m.id = ANY(ARRAY(SELECT id FROM cand)) AND m.leased AND m.visible_at <= $5
		ORDER BY m.id FOR UPDATE
	), l AS MATERIALIZED (
		SELECT id, message_id, receive_count, dead FROM lk WHERE queue_id = $1
	), upd AS (
		UPDATE sqsloop_messages m SET leased = false, leased_by = NULL,
			queue_id = CASE WHEN l.dead THEN $7 ELSE m.queue_id END
		FROM l WHERE m.id = l.id AND m.id = ANY(ARRAY(SELECT id FROM l))
		RETURNING 1
	), audit AS (
		INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
		SELECT $9, message_id, receive_count,
			CASE WHEN dead THEN $11 ELSE $12 END,
			CASE WHEN dead THEN $10 ELSE $13 END,
			statement_timestamp()
		FROM l
		RETURNING 1
	), last AS (
		SELECT visible_at, id FROM cand ORDER BY visible_at DESC, id DESC LIMIT 1
	)
	SELECT (SELECT count(*) FROM l WHERE NOT dead), (SELECT count(*) FROM l WHERE dead), (SELECT count(*) FROM cand),
		coalesce((SELECT visible_at FROM last), 'epoch'), coalesce((SELECT id FROM last), 0)`
	// qSwept records that queue $1's lapses were handled up to $2, in a
	// statement of its own: a queue's row is never locked after its
	// messages (see qWindow).
	qSwept = `UPDATE sqsloop_queues SET swept_at = greatest(swept_at, $2) WHERE id = $1`
	// qSweepRetention deletes those of queue $1's oldest $6 messages (in id
	// order, the order they were sent, and the order it locks them in)
	// sent before $2, auditing them (kind $5, reason $4).
	qSweepRetention = `WITH old AS MATERIALIZED (
		SELECT id, queue_id FROM sqsloop_messages WHERE id = ANY(ARRAY(
			SELECT id FROM sqsloop_messages WHERE queue_id = $1 ORDER BY id LIMIT $6
		)) AND sent_at < $2
		ORDER BY id FOR UPDATE
	), d AS (
		DELETE FROM sqsloop_messages m WHERE m.id = ANY(ARRAY(SELECT id FROM old WHERE queue_id = $1))
		RETURNING m.message_id, m.receive_count
	), audit AS (
		INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at)
		SELECT $3, message_id, receive_count, $5, $4, statement_timestamp() FROM d
		RETURNING 1
	)
	SELECT count(*) FROM audit`
	// qTrimDedup forgets the expired of the $3 deduplication IDs after
	// ($1, $2) in key order (the order a FIFO send claims them in), and
	// returns how many, how many it looked at, and the last one's key.
	qTrimDedup = `WITH page AS MATERIALIZED (
		SELECT queue_id, dedup_id FROM sqsloop_dedup WHERE (queue_id, dedup_id) > ($1, $2) ORDER BY queue_id, dedup_id LIMIT $3
	), l AS MATERIALIZED (
		SELECT queue_id, dedup_id FROM sqsloop_dedup
		WHERE (queue_id, dedup_id) IN (SELECT queue_id, dedup_id FROM page) AND expires_at <= statement_timestamp()
		ORDER BY queue_id, dedup_id FOR UPDATE
	), del AS (
		DELETE FROM sqsloop_dedup d USING l WHERE d.queue_id = l.queue_id AND d.dedup_id = l.dedup_id
		RETURNING 1
	), last AS (
		SELECT queue_id, dedup_id FROM page ORDER BY queue_id DESC, dedup_id DESC LIMIT 1
	)
	SELECT (SELECT count(*) FROM del), (SELECT count(*) FROM page),
		coalesce((SELECT queue_id FROM last), 0), coalesce((SELECT dedup_id FROM last), '')`
	// The trims delete up to $2 rows older than $1 microseconds, the
	// oldest first where an index says which.
	qTrimAcked = `DELETE FROM sqsloop_acked WHERE (queue_id, hour, receive_count) IN (
		SELECT queue_id, hour, receive_count FROM sqsloop_acked WHERE hour < statement_timestamp() - $1::bigint * interval '1 microsecond' LIMIT $2)`
	qTrimAudit = `DELETE FROM sqsloop_audit WHERE id IN (
		SELECT id FROM sqsloop_audit WHERE at < statement_timestamp() - $1::bigint * interval '1 microsecond' ORDER BY at LIMIT $2)`
	qTrimArchive = `DELETE FROM sqsloop_archive WHERE id IN (
		SELECT id FROM sqsloop_archive WHERE deleted_at < statement_timestamp() - $1::bigint * interval '1 microsecond' ORDER BY deleted_at LIMIT $2)`
	qTrimReceivers = `DELETE FROM sqsloop_receivers WHERE id IN (
		SELECT id FROM sqsloop_receivers WHERE last_seen < statement_timestamp() - $1::bigint * interval '1 microsecond' LIMIT $2)`

	// qInFlight lists up to $2 messages of queue $1 a receive holds, the
	// earliest deadline first, with their holders' receiver rows. It reads
	// every message of the queue (an operator's call).
	qInFlight = `SELECT m.message_id, m.group_id, m.receive_count, m.sent_at, coalesce(m.received_at, m.sent_at), m.visible_at,
		coalesce(m.extended_at, 'epoch'), statement_timestamp() - coalesce(m.extended_at, m.received_at, m.sent_at),
		m.visible_at <= statement_timestamp(), coalesce(m.leased_by, ''), r.id IS NOT NULL, coalesce(r.queue, ''),
		coalesce(r.host, ''), coalesce(r.pid, 0), coalesce(r.started_at, 'epoch'), coalesce(r.last_seen, 'epoch'),
		coalesce(statement_timestamp() - r.last_seen, '0')
	FROM sqsloop_messages m LEFT JOIN sqsloop_receivers r ON r.id = m.leased_by
	WHERE m.queue_id = $1 AND m.leased
	ORDER BY m.visible_at, m.id LIMIT $2`
	// qLeaseStats returns rows (what, receive count, messages; what as
	// driver.LeaseStatsRow.Add reads it) about queue $1 (named $2) since
	// $3: the messages held, the deadline ahead or passed; the audit rows
	// of kinds $4 (lease-expired) and $5 (failure); the acked tally and the
	// audit rows of kind $6 (dead-lettered) by receive count. One
	// statement: one snapshot.
	qLeaseStats = `SELECT CASE WHEN visible_at > statement_timestamp() THEN 'in-flight' ELSE 'past-deadline' END, 0, count(*)
		FROM sqsloop_messages WHERE queue_id = $1 AND leased GROUP BY 1
	UNION ALL
	SELECT CASE WHEN kind = $4 THEN 'lease-expired' ELSE 'failure' END, 0, count(*)
		FROM sqsloop_audit WHERE queue = $2 AND at >= $3 AND kind IN ($4, $5) GROUP BY kind
	UNION ALL
	SELECT 'acked', receive_count, sum(messages)::bigint FROM sqsloop_acked WHERE queue_id = $1 AND hour >= $3 GROUP BY receive_count
	UNION ALL
	SELECT 'dead-lettered', receive_count, count(*) FROM sqsloop_audit WHERE queue = $2 AND at >= $3 AND kind = $6 GROUP BY receive_count`

	qRegisterReceiver = `INSERT INTO sqsloop_receivers (id, queue, host, pid, started_at, last_seen)
	VALUES ($1, $2, $3, $4, statement_timestamp(), statement_timestamp())
	ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen`
	qRemoveReceiver = `DELETE FROM sqsloop_receivers WHERE id = $1`
	qReceivers      = `SELECT r.id, r.queue, r.host, r.pid, r.started_at, r.last_seen,
		statement_timestamp() - r.last_seen, coalesce(h.n, 0)
	FROM sqsloop_receivers r LEFT JOIN (
		SELECT leased_by, count(*)::integer AS n FROM sqsloop_messages
		WHERE leased AND visible_at > statement_timestamp() GROUP BY leased_by
	) h ON h.leased_by = r.id ORDER BY r.started_at`
)
