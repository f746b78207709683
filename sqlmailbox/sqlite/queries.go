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
	(name, fifo, content_based_dedup, visibility_timeout, delay, retention, max_message_size, max_receive_count, dlq_id, key, created_at)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
	ON CONFLICT (name) DO NOTHING`
	qLoadQueue = `SELECT q.id, q.name, q.fifo, q.content_based_dedup, q.visibility_timeout, q.delay, q.retention,
	q.max_message_size, q.max_receive_count, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.key, q.created_at
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id WHERE q.name = ?1`
	qQueueIsDLQ  = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues s JOIN sqsloop_queues d ON s.dlq_id = d.id WHERE d.name = ?1)`
	qDeleteQueue = `DELETE FROM sqsloop_queues WHERE name = ?1`
	qQueueID     = `SELECT id FROM sqsloop_queues WHERE name = ?1`
	qPurgeQueue  = `DELETE FROM sqsloop_messages WHERE queue_id = ?1`

	qInsertMessage = `INSERT INTO sqsloop_messages (queue_id, message_id, body, attributes, group_id, dedup_id, sent_at, visible_at)
	VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id`
	qDedupForget = `DELETE FROM sqsloop_dedup WHERE queue_id = ?1 AND dedup_id = ?2 AND expires_at <= ?3`
	qDedupFind   = `SELECT message_id, seq FROM sqsloop_dedup WHERE queue_id = ?1 AND dedup_id = ?2`
	qDedupAdd    = `INSERT INTO sqsloop_dedup (queue_id, dedup_id, message_id, seq, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)`

	// qPickStandard: the oldest visible messages, by the receive's index.
	qPickStandard = `SELECT id, receive_count FROM sqsloop_messages
	WHERE queue_id = ?1 AND visible_at <= ?2 ORDER BY visible_at, id LIMIT ?3`
	// qPickFIFO: of the oldest 1,000 messages of the groups with nothing in
	// flight, those with only visible messages before them in their group,
	// a group at a time, oldest group first: as many of one group as the
	// receive takes before another (SQS's FIFO delivery logic).
	qPickFIFO = `WITH busy AS (
		SELECT DISTINCT group_id FROM sqsloop_messages
		WHERE queue_id = ?1 AND visible_at > ?2 AND receive_count > 0
	), prefix AS (
		SELECT id, group_id, receive_count, visible_at <= ?2 AS vis FROM sqsloop_messages
		WHERE queue_id = ?1 AND group_id NOT IN busy ORDER BY id LIMIT 1000
	), runs AS (
		SELECT id, receive_count, min(vis) OVER (PARTITION BY group_id ORDER BY id) AS ok,
			min(id) OVER (PARTITION BY group_id) AS head FROM prefix
	)
	SELECT id, receive_count FROM runs WHERE ok ORDER BY head, id LIMIT ?3`
	// qTake (with the ids in place of $ids: takeQuery) takes the messages
	// a pick chose, in one statement, returning them in no set order.
	qTake = `UPDATE sqsloop_messages
	SET receive_count = receive_count + 1, visible_at = ?3, received_at = ?2,
		first_received_at = coalesce(first_received_at, ?2), leased = 1, leased_by = ?4
	WHERE queue_id = ?1 AND id IN ($ids)
	RETURNING id, message_id, body, attributes, group_id, dedup_id, sent_at, first_received_at, receive_count`
	// qMoveToDLQ keeps the row: its ID, body, attributes, counts, sent time.
	qMoveToDLQ = `UPDATE sqsloop_messages SET queue_id = ?3, visible_at = ?2, leased = 0, leased_by = NULL
	WHERE id = ?4 AND queue_id = ?1 RETURNING message_id, receive_count`
	qAudit = `INSERT INTO sqsloop_audit (queue, message_id, receive_count, kind, reason, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)`

	qExists = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1)`
	// qNext: whether the queue exists and the earliest future visibility
	// deadline of its messages, 0 for none.
	qNext = `SELECT EXISTS (SELECT 1 FROM sqsloop_queues WHERE id = ?1),
	coalesce((SELECT min(visible_at) FROM sqsloop_messages WHERE queue_id = ?1 AND visible_at > ?2), 0)`
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
	qChange = `UPDATE sqsloop_messages SET visible_at = ?2 + ?5, leased = ?5 > 0
	WHERE id = ?3 AND queue_id = ?1 AND receive_count = ?4 AND visible_at > ?2 AND ?2 + ?5 <= received_at + ?6`
	qUnlease = `UPDATE sqsloop_messages SET leased = 0 WHERE id = ?2 AND queue_id = ?1 AND receive_count = ?3`

	qAuditList = `SELECT queue, message_id, receive_count, kind, reason, at FROM sqsloop_audit
	WHERE ?1 = '' OR queue = ?1 ORDER BY id DESC LIMIT ?2`
	qArchiveList = `SELECT queue, message_id, body, attributes, group_id, receive_count, sent_at, deleted_at FROM sqsloop_archive
	WHERE queue = ?1 ORDER BY id DESC LIMIT ?2`

	qSweepQueues = `SELECT q.id, q.name, coalesce(q.dlq_id, 0), coalesce(d.name, ''), q.max_receive_count, q.retention, q.swept_at
	FROM sqsloop_queues q LEFT JOIN sqsloop_queues d ON d.id = q.dlq_id ORDER BY q.id`
	// qLapsed: leases that ended since the queue's last sweep; the earlier
	// ones that sweep saw.
	qLapsed = `SELECT id, message_id, receive_count FROM sqsloop_messages
	WHERE queue_id = ?1 AND visible_at > ?2 AND visible_at <= ?3 AND leased = 1`
	qSwept         = `UPDATE sqsloop_queues SET swept_at = ?2 WHERE id = ?1`
	qOldest        = `SELECT id, message_id, receive_count, sent_at FROM sqsloop_messages WHERE queue_id = ?1 ORDER BY id LIMIT 500`
	qDropMsg       = `DELETE FROM sqsloop_messages WHERE id = ?2 AND queue_id = ?1`
	qTrimDedup     = `DELETE FROM sqsloop_dedup WHERE expires_at <= ?1`
	qTrimAudit     = `DELETE FROM sqsloop_audit WHERE at < ?1`
	qTrimArchive   = `DELETE FROM sqsloop_archive WHERE deleted_at < ?1`
	qTrimReceivers = `DELETE FROM sqsloop_receivers WHERE last_seen < ?1`

	qRegisterReceiver = `INSERT INTO sqsloop_receivers (id, queue, host, pid, started_at, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
	ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen`
	qRemoveReceiver = `DELETE FROM sqsloop_receivers WHERE id = ?1`
	qReceivers      = `SELECT r.id, r.queue, r.host, r.pid, r.started_at, r.last_seen, coalesce(h.n, 0)
	FROM sqsloop_receivers r LEFT JOIN (
		SELECT leased_by, count(*) AS n FROM sqsloop_messages
		WHERE leased_by IS NOT NULL AND visible_at > ?1 GROUP BY leased_by
	) h ON h.leased_by = r.id ORDER BY r.started_at`
)
