package sqlite

// The SQL of the SQLite dialect, all of it. Parameters are numbered (?1) so
// one value serves several places; now is ?-bound in microseconds since the
// Unix epoch by the caller's clock.
const (
	qHasSchema     = `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sqsloop_schema'`
	qSchemaTable   = `CREATE TABLE IF NOT EXISTS sqsloop_schema (version INTEGER NOT NULL)`
	qSchemaVersion = `SELECT coalesce(max(version), 0) FROM sqsloop_schema`
	qClearVersion  = `DELETE FROM sqsloop_schema`
	qSetVersion    = `INSERT INTO sqsloop_schema (version) VALUES (?1)`

	qInsertQueue = `INSERT INTO sqsloop_queues
	(name, fifo, content_based_dedup, visibility_timeout, delay, retention, max_message_size, max_receive_count, dlq_id, key, created_at, priority)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
	ON CONFLICT (name) DO NOTHING`
	qLoadQueue = `SELECT q.id, q.name, q.fifo, q.content_based_dedup, q.visibility_timeout, q.delay, q.retention,
	q.max_message_size, q.max_receive_count, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.key, q.created_at, q.priority
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id WHERE q.name = ?1`
	qQueueIsDLQ  = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues s JOIN sqsloop_queues d ON s.dlq_id = d.id WHERE d.name = ?1)`
	qDeleteQueue = `DELETE FROM sqsloop_queues WHERE name = ?1`
	qQueueID     = `SELECT id FROM sqsloop_queues WHERE name = ?1`
	qPurgeQueue  = `DELETE FROM sqsloop_messages WHERE queue_id = ?1`

	qInsertMessage = `INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, dedup_id, sent_at, visible_at, priority)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id`
	qDedupForget = `DELETE FROM sqsloop_dedup WHERE queue_id = ?1 AND dedup_id = ?2 AND expires_at <= ?3`
	qDedupFind   = `SELECT message_id, seq FROM sqsloop_dedup WHERE queue_id = ?1 AND dedup_id = ?2`
	qDedupAdd    = `INSERT INTO sqsloop_dedup (queue_id, dedup_id, message_id, seq, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)`

	// qPickStandard: the oldest visible messages, by the receive's index,
	// but those the same receive took already (?5, a JSON array: taken
	// with a lease of 0 s, a message is visible again). All messages of a
	// queue without priorities have priority 0, so the index's range is one
	// queue's visible messages.
	qPickStandard = `SELECT id, receive_count FROM sqsloop_messages
	WHERE queue_id = ?1 AND priority = 0 AND visible_at <= ?2 AND id NOT IN (SELECT value FROM json_each(?5))
	ORDER BY visible_at, id LIMIT ?3`
	// qPickPriority: the highest priority first, then the oldest
	// deadline; the index gives that order, and the scan reads past the
	// messages of higher priorities that are in flight or delayed.
	qPickPriority = `SELECT id, receive_count FROM sqsloop_messages
	WHERE queue_id = ?1 AND visible_at <= ?2 AND id NOT IN (SELECT value FROM json_each(?5))
	ORDER BY priority DESC, visible_at, id LIMIT ?3`
	// qPickFIFO: of the oldest 1,000 messages of the groups with nothing in
	// flight, those with only visible messages before them in their group,
	// a group at a time, the group whose next message has the highest
	// priority first (all 0 without priorities), then the oldest: as many
	// of one group as the receive takes before another (SQS's FIFO
	// delivery logic). Priority orders the groups, never the messages
	// within one. It picks ?3 messages to deliver and, before and among
	// them, those received ?4 (maxReceiveCount) times already, which go to
	// the DLQ and take no place in the batch.
	qPickFIFO = `WITH busy AS (
		SELECT DISTINCT group_id FROM sqsloop_messages
		WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count > 0
	), prefix AS (
		SELECT id, group_id, receive_count, priority, visible_at <= ?2 AS vis FROM sqsloop_messages
		WHERE queue_id = ?1 AND group_id NOT IN busy ORDER BY id LIMIT 1000
	), runs AS (
		SELECT id, receive_count, min(vis) OVER (PARTITION BY group_id ORDER BY id) AS ok,
			min(id) OVER (PARTITION BY group_id) AS head,
			first_value(priority) OVER (PARTITION BY group_id ORDER BY id) AS prio FROM prefix
	), ordered AS (
		SELECT id, receive_count, head, prio,
			count(*) FILTER (WHERE receive_count < ?4) OVER (ORDER BY prio DESC, head, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
		FROM runs WHERE ok
	)
	SELECT id, receive_count FROM ordered WHERE before < ?3 ORDER BY prio DESC, head, id`
	// qTake (with the ids in place of $ids: takeQuery) takes the messages
	// a pick chose, in one statement, returning them in no set order.
	qTake = `UPDATE sqsloop_messages
	SET receive_count = receive_count + 1, visible_at = ?3, received_at = ?2,
		first_received_at = coalesce(first_received_at, ?2), extended_at = NULL, leased = 1, leased_by = ?4
	WHERE queue_id = ?1 AND id IN ($ids)
	RETURNING id, message_id, body, attributes, group_id, dedup_id, sent_at, first_received_at, receive_count`
	// qMoveToDLQ keeps the row: its ID, body, attributes, counts, sent time.
	qMoveToDLQ = `UPDATE sqsloop_messages SET queue_id = ?3, visible_at = ?2, leased = 0, leased_by = NULL
	WHERE id = ?4 AND queue_id = ?1 RETURNING message_id, receive_count`
	qAudit = `INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`

	qExists = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1)`
	// qNext: whether the queue exists and the earliest future visibility
	// deadline of its messages, 0 for none, read from the receive's index
	// one priority level ({levels}: 0 alone on a queue without
	// priorities) at a time, so each look is a range of it, however many
	// messages are in flight.
	qNext = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1),
	coalesce((SELECT min((SELECT min(visible_at) FROM sqsloop_messages WHERE queue_id = ?1 AND priority = l.p AND visible_at > ?2))
		FROM (SELECT column1 AS p FROM (VALUES {levels})) l), 0)`
	qCounts = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = ?1 AND visible_at <= ?2),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count > 0),
	(SELECT count(*) FROM sqsloop_messages WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count = 0)`

	// qDelete: ?4 is 1 on a FIFO queue, whose handles expire with the lease.
	qDelete = `DELETE FROM sqsloop_messages
	WHERE id = ?2 AND queue_id = ?1 AND receive_count = ?3 AND (?4 = 0 OR visible_at > ?5)
	RETURNING message_id, body, attributes, group_id, receive_count, sent_at`
	qArchive = `INSERT INTO sqsloop_archive (queue, message_id, body, attributes, group_id, receive_count, sent_at, deleted_at)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`

	// qLease: whether the receive ?3 of message ?2 is in flight at ?4, and
	// its visibility deadline.
	qLease = `SELECT receive_count = ?3 AND visible_at > ?4, visible_at FROM sqsloop_messages WHERE id = ?2 AND queue_id = ?1`
	// qChange: in flight, same receive, within ?6 µs of it
	// (sqsloop.MaxVisibilityTimeout, 12 h).
	qChange = `UPDATE sqsloop_messages SET visible_at = ?2 + ?5, leased = ?5 > 0, extended_at = CASE WHEN ?5 > 0 THEN ?2 END
	WHERE id = ?3 AND queue_id = ?1 AND receive_count = ?4 AND visible_at > ?2 AND ?2 + ?5 <= received_at + ?6`
	qUnlease = `UPDATE sqsloop_messages SET leased = 0 WHERE id = ?2 AND queue_id = ?1 AND receive_count = ?3`

	qAuditList = `SELECT queue, message_id, receive_count, kind, reason, at FROM sqsloop_audit
	WHERE ?1 = '' OR queue = ?1 ORDER BY id DESC LIMIT ?2`
	qArchiveList = `SELECT queue, message_id, body, attributes, group_id, receive_count, sent_at, deleted_at FROM sqsloop_archive
	WHERE queue = ?1 ORDER BY id DESC LIMIT ?2`

	// The sweep's steps (sqlmailbox's policy runs them), each in one
	// transaction of at most ?limit rows.
	qSweepQueues = `SELECT q.id, q.name, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.max_receive_count, q.retention, q.priority, q.swept_at
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id ORDER BY q.id`
	// qLapsed: up to ?6 leases of queue ?1 of priority ?2 that lapsed after
	// (?3, ?4) (deadline, id: where the last step left off) and by ?5, one
	// range of the receive's index.
	qLapsed = `SELECT id, message_id, receive_count, visible_at FROM sqsloop_messages
	WHERE queue_id = ?1 AND priority = ?2 AND (visible_at, id) > (?3, ?4) AND visible_at <= ?5 AND leased = 1
	ORDER BY visible_at, id LIMIT ?6`
	qSwept   = `UPDATE sqsloop_queues SET swept_at = max(swept_at, ?2) WHERE id = ?1`
	qOldest  = `SELECT id, message_id, receive_count, sent_at FROM sqsloop_messages WHERE queue_id = ?1 ORDER BY id LIMIT ?2`
	qDropMsg = `DELETE FROM sqsloop_messages WHERE id = ?2 AND queue_id = ?1`
	// qDedupPage: the ?3 deduplication IDs after (?1, ?2) in key order.
	qDedupPage = `SELECT queue_id, dedup_id, expires_at FROM sqsloop_dedup WHERE (queue_id, dedup_id) > (?1, ?2)
	ORDER BY queue_id, dedup_id LIMIT ?3`
	qDedupDrop = `DELETE FROM sqsloop_dedup WHERE queue_id = ?1 AND dedup_id = ?2`
	// The trims delete up to ?2 rows older than ?1, the oldest first where
	// an index says which.
	qTrimAcked = `DELETE FROM sqsloop_acked WHERE (queue_id, hour, receive_count) IN (
		SELECT queue_id, hour, receive_count FROM sqsloop_acked WHERE hour < ?1 LIMIT ?2)`
	qTrimAudit     = `DELETE FROM sqsloop_audit WHERE id IN (SELECT id FROM sqsloop_audit WHERE at < ?1 ORDER BY at LIMIT ?2)`
	qTrimArchive   = `DELETE FROM sqsloop_archive WHERE id IN (SELECT id FROM sqsloop_archive WHERE deleted_at < ?1 ORDER BY deleted_at LIMIT ?2)`
	qTrimReceivers = `DELETE FROM sqsloop_receivers WHERE id IN (SELECT id FROM sqsloop_receivers WHERE last_seen < ?1 LIMIT ?2)`

	// qInFlight lists up to ?2 messages of queue ?1 a receive holds at ?3,
	// the earliest deadline first, with their holders' receiver rows. It
	// reads every message of the queue (an operator's call).
	qInFlight = `SELECT m.message_id, m.group_id, m.receive_count, m.sent_at, coalesce(m.received_at, m.sent_at), m.visible_at,
		coalesce(m.extended_at, 0), coalesce(m.extended_at, m.received_at, m.sent_at), m.visible_at <= ?3,
		coalesce(m.leased_by, ''), r.id IS NOT NULL, coalesce(r.queue, ''), coalesce(r.host, ''), coalesce(r.pid, 0),
		coalesce(r.started_at, 0), coalesce(r.last_seen, 0)
	FROM sqsloop_messages m LEFT JOIN sqsloop_receivers r ON r.id = m.leased_by
	WHERE m.queue_id = ?1 AND m.leased = 1
	ORDER BY m.visible_at, m.id LIMIT ?2`
	// qLeaseStats returns rows (what, receive count, messages; what as
	// driver.LeaseStatsRow.Add reads it) about queue ?1 (named ?2) at ?4
	// since ?3: the messages held, the deadline ahead or passed; the audit
	// rows of kinds ?5 (lease-expired) and ?6 (failure); the acked tally
	// and the audit rows of kind ?7 (dead-lettered) by receive count.
	qLeaseStats = `SELECT CASE WHEN visible_at > ?4 THEN 'in-flight' ELSE 'past-deadline' END AS what, 0, count(*)
		FROM sqsloop_messages WHERE queue_id = ?1 AND leased = 1 GROUP BY what
	UNION ALL
	SELECT CASE WHEN kind = ?5 THEN 'lease-expired' ELSE 'failure' END, 0, count(*)
		FROM sqsloop_audit WHERE queue = ?2 AND at >= ?3 AND kind IN (?5, ?6) GROUP BY kind
	UNION ALL
	SELECT 'acked', receive_count, sum(messages) FROM sqsloop_acked WHERE queue_id = ?1 AND hour >= ?3 GROUP BY receive_count
	UNION ALL
	SELECT 'dead-lettered', receive_count, count(*) FROM sqsloop_audit WHERE queue = ?2 AND at >= ?3 AND kind = ?7 GROUP BY receive_count`

	// qAddAcked adds ?4 messages to the acked tally of queue ?1, hour ?2
	// (its start), receive count ?3, unless the queue was deleted.
	qAddAcked = `INSERT INTO sqsloop_acked (queue_id, hour, receive_count, messages)
	SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1)
	ON CONFLICT (queue_id, hour, receive_count) DO UPDATE SET messages = messages + excluded.messages`

	qRegisterReceiver = `INSERT INTO sqsloop_receivers (id, queue, host, pid, started_at, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
	ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen`
	qRemoveReceiver = `DELETE FROM sqsloop_receivers WHERE id = ?1`
	qReceivers      = `SELECT r.id, r.queue, r.host, r.pid, r.started_at, r.last_seen, coalesce(h.n, 0)
	FROM sqsloop_receivers r LEFT JOIN (
		SELECT leased_by, count(*) AS n FROM sqsloop_messages
		WHERE leased = 1 AND visible_at > ?1 GROUP BY leased_by
	) h ON h.leased_by = r.id ORDER BY r.started_at`
)
