package postgres

// migrations are the schema's versions, in order: migrations[i] brings a
// database from version i to version i+1. A released migration is never
// edited: a change to the schema is a new entry. sqsloop_schema holds the
// version; a database whose version is past len(migrations) was migrated by
// a newer sqsloop and is refused (sqlmailbox.ErrSchemaTooNew), one at an
// older version too (sqlmailbox.ErrSchemaOutdated) until Migrate has run.
// Migrate holds a transaction-scoped advisory lock (qLock) while it runs,
// so processes migrating together migrate once.
//
// Messages are keyed by id, an identity: it never reuses a value, so a
// receipt handle, which names a row by it, can never name a newer message.
// The receive's index starts with the queue, and so does the FIFO
// messages' index, in id order, for the FIFO receive's pick; a statement
// that names messages by id reads neither (see queries.go, messages
// named by id).
var migrations = []string{
	// 1: queues, messages, deduplication IDs, the audit and archive tables,
	// the registry of receiving Mailboxes.
	`
CREATE TABLE sqsloop_queues (
	id                  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name                text        NOT NULL UNIQUE,
	fifo                boolean     NOT NULL,
	content_based_dedup boolean     NOT NULL,
	visibility_timeout  integer     NOT NULL,
	delay               integer     NOT NULL,
	retention           integer     NOT NULL,
	max_message_size    integer     NOT NULL,
	max_receive_count   integer     NOT NULL,
	dlq_id              bigint      REFERENCES sqsloop_queues (id),
	key                 bytea       NOT NULL,
	created_at          timestamptz NOT NULL DEFAULT statement_timestamp(),
	swept_at            timestamptz NOT NULL DEFAULT 'epoch'
);
CREATE TABLE sqsloop_messages (
	queue_id          bigint      NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	id                bigint      GENERATED ALWAYS AS IDENTITY,
	message_id        text        NOT NULL,
	body              text        NOT NULL,
	attributes        bytea,
	group_id          text        NOT NULL DEFAULT '',
	dedup_id          text        NOT NULL DEFAULT '',
	sent_at           timestamptz NOT NULL,
	visible_at        timestamptz NOT NULL,
	receive_count     integer     NOT NULL DEFAULT 0,
	first_received_at timestamptz,
	received_at       timestamptz,
	leased            boolean     NOT NULL DEFAULT false,
	leased_by         text,
	PRIMARY KEY (queue_id, id)
);
-- The receive's index: the visible messages of a queue, oldest deadline
-- first; a receive reads as many entries as it takes (and skips).
CREATE INDEX sqsloop_messages_visible ON sqsloop_messages (queue_id, visible_at, id);
CREATE TABLE sqsloop_dedup (
	queue_id   bigint      NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	dedup_id   text        NOT NULL,
	message_id text        NOT NULL,
	seq        bigint      NOT NULL DEFAULT 0, -- the message's id: its sequence number
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (queue_id, dedup_id)
);
CREATE TABLE sqsloop_audit (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	queue         text        NOT NULL,
	message_id    text        NOT NULL,
	receive_count integer     NOT NULL,
	kind          text        NOT NULL,
	reason        text        NOT NULL,
	at            timestamptz NOT NULL
);
CREATE INDEX sqsloop_audit_at ON sqsloop_audit (at);
CREATE TABLE sqsloop_archive (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	queue         text        NOT NULL,
	message_id    text        NOT NULL,
	body          text        NOT NULL,
	attributes    bytea,
	group_id      text        NOT NULL,
	receive_count integer     NOT NULL,
	sent_at       timestamptz NOT NULL,
	deleted_at    timestamptz NOT NULL
);
CREATE INDEX sqsloop_archive_deleted ON sqsloop_archive (deleted_at);
CREATE TABLE sqsloop_workers (
	id         text        PRIMARY KEY,
	queue      text        NOT NULL,
	host       text        NOT NULL,
	pid        integer     NOT NULL,
	started_at timestamptz NOT NULL,
	last_seen  timestamptz NOT NULL
);
`,
	// 2: the registry of receiving Mailboxes is the receiver registry.
	`ALTER TABLE sqsloop_workers RENAME TO sqsloop_receivers`,
	// 3: priorities (a queue's setting, each message's priority, the
	// receive's index in their order: a queue without priorities has only
	// priority 0, one range of the index); when a lease was last extended;
	// the tally of acked messages by receive count. Building the new index
	// holds off writes to the messages for as long as it takes (a second or
	// so per million messages).
	`
ALTER TABLE sqsloop_queues ADD COLUMN priority boolean NOT NULL DEFAULT false;
ALTER TABLE sqsloop_messages ADD COLUMN priority smallint NOT NULL DEFAULT 0, ADD COLUMN extended_at timestamptz;
CREATE INDEX sqsloop_messages_ready ON sqsloop_messages (queue_id, priority DESC, visible_at, id);
DROP INDEX sqsloop_messages_visible;
CREATE TABLE sqsloop_acked (
	queue_id      bigint      NOT NULL REFERENCES sqsloop_queues (id) ON DELETE CASCADE,
	hour          timestamptz NOT NULL,
	receive_count integer     NOT NULL,
	messages      bigint      NOT NULL,
	PRIMARY KEY (queue_id, hour, receive_count)
);
`,
	// 4: messages keyed by id alone; the FIFO messages (those with a
	// deduplication ID: only a FIFO queue's) indexed by queue in id order,
	// for the FIFO receive's pick; the receive's index partial to
	// queue_id IS NOT NULL (every message), which the statements that read
	// a queue imply (queue_id = $1) and those that name messages by id do
	// not (see queries.go, messages named by id), so that these have no
	// index but the key to read.
	// It holds the messages table locked until it commits, reads
	// included: 0.9 s for a million messages, a tenth of them FIFO, on a
	// 2-core machine.
	`
ALTER TABLE sqsloop_messages DROP CONSTRAINT sqsloop_messages_pkey, ADD PRIMARY KEY (id);
DROP INDEX sqsloop_messages_ready;
CREATE INDEX sqsloop_messages_ready ON sqsloop_messages (queue_id, priority DESC, visible_at, id) WHERE queue_id IS NOT NULL;
CREATE INDEX sqsloop_messages_fifo ON sqsloop_messages (queue_id, id) WHERE dedup_id <> '';
`,
}
