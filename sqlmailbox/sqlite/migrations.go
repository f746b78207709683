package sqlite

// migrations are the schema's versions, in order: migrations[i] brings a
// database from version i to version i+1. A released migration is never
// edited: a change to the schema is a new entry. sqsloop_schema holds the
// version; a database whose version is past len(migrations) was migrated by
// a newer sqsloop and is refused (sqlmailbox.ErrSchemaTooNew).
//
// Times are microseconds since the Unix epoch (INTEGER), durations whole
// seconds. sqsloop_messages.id is AUTOINCREMENT, never reused, since a
// receipt handle names a row by it: a reused key would let an old handle
// delete a new message.
var migrations = []string{
	// 1: queues, messages, deduplication IDs, the audit and archive tables,
	// the registry of receiving Mailboxes.
	`
CREATE TABLE sqsloop_queues (
	id                  INTEGER PRIMARY KEY AUTOINCREMENT,
	name                TEXT    NOT NULL UNIQUE,
	fifo                INTEGER NOT NULL,
	content_based_dedup INTEGER NOT NULL,
	visibility_timeout  INTEGER NOT NULL,
	delay               INTEGER NOT NULL,
	retention           INTEGER NOT NULL,
	max_message_size    INTEGER NOT NULL,
	max_receive_count   INTEGER NOT NULL,
	dlq_id              INTEGER REFERENCES sqsloop_queues (id),
	key                 BLOB    NOT NULL,
	created_at          INTEGER NOT NULL,
	swept_at            INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE sqsloop_messages (
	id                INTEGER PRIMARY KEY AUTOINCREMENT,
	queue_id          INTEGER NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	message_id        TEXT    NOT NULL,
	body              TEXT    NOT NULL,
	attributes        BLOB,
	group_id          TEXT    NOT NULL DEFAULT '',
	dedup_id          TEXT    NOT NULL DEFAULT '',
	sent_at           INTEGER NOT NULL,
	visible_at        INTEGER NOT NULL,
	receive_count     INTEGER NOT NULL DEFAULT 0,
	first_received_at INTEGER,
	received_at       INTEGER,
	leased            INTEGER NOT NULL DEFAULT 0,
	leased_by         TEXT
);
-- The receive's index: the visible messages of a queue, oldest deadline
-- first (and, implicitly, by id).
CREATE INDEX sqsloop_messages_visible ON sqsloop_messages (queue_id, visible_at);
-- A queue's messages in id order: FIFO receives, the retention sweep.
CREATE INDEX sqsloop_messages_queue ON sqsloop_messages (queue_id);
CREATE TABLE sqsloop_dedup (
	queue_id   INTEGER NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	dedup_id   TEXT    NOT NULL,
	message_id TEXT    NOT NULL,
	seq        INTEGER NOT NULL, -- the message's id: its sequence number
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (queue_id, dedup_id)
) WITHOUT ROWID;
CREATE TABLE sqsloop_audit (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	queue         TEXT    NOT NULL,
	message_id    TEXT    NOT NULL,
	receive_count INTEGER NOT NULL,
	kind          TEXT    NOT NULL,
	reason        TEXT    NOT NULL,
	at            INTEGER NOT NULL
);
CREATE INDEX sqsloop_audit_at ON sqsloop_audit (at);
CREATE TABLE sqsloop_archive (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	queue         TEXT    NOT NULL,
	message_id    TEXT    NOT NULL,
	body          TEXT    NOT NULL,
	attributes    BLOB,
	group_id      TEXT    NOT NULL,
	receive_count INTEGER NOT NULL,
	sent_at       INTEGER NOT NULL,
	deleted_at    INTEGER NOT NULL
);
CREATE INDEX sqsloop_archive_deleted ON sqsloop_archive (deleted_at);
CREATE TABLE sqsloop_workers (
	id         TEXT    PRIMARY KEY,
	queue      TEXT    NOT NULL,
	host       TEXT    NOT NULL,
	pid        INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL
);
`,
	// 2: the registry of receiving Mailboxes is the receiver registry.
	`ALTER TABLE sqsloop_workers RENAME TO sqsloop_receivers`,
	// 3: priorities (a queue's setting, each message's priority, the
	// receive's index in their order: a queue without priorities has only
	// priority 0, one range of the index); when a lease was last extended;
	// the tally of acked messages by receive count.
	`
ALTER TABLE sqsloop_queues ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sqsloop_messages ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sqsloop_messages ADD COLUMN extended_at INTEGER;
CREATE INDEX sqsloop_messages_ready ON sqsloop_messages (queue_id, priority DESC, visible_at);
DROP INDEX sqsloop_messages_visible;
CREATE TABLE sqsloop_acked (
	queue_id      INTEGER NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	hour          INTEGER NOT NULL,
	receive_count INTEGER NOT NULL,
	messages      INTEGER NOT NULL,
	PRIMARY KEY (queue_id, hour, receive_count)
) WITHOUT ROWID;
`,
}
