package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sqsloop/sqsloop"
)

// peekWait is the long poll of peek's receives: a short poll of SQS samples
// only some of its servers and may answer empty while messages wait.
const peekWait = time.Second

// peekCmd is `sqsloop peek`.
type peekCmd struct {
	mailboxFlags `embed:""`

	Max  int  `default:"10" placeholder:"N" help:"Print at most N messages (1-1000). Up to 10 take one receive."`
	JSON bool `name:"json" help:"Print each whole message as a line of JSON (ID, body, receive count, times, message group, system and message attributes)."`
}

// Help is peek's long help.
func (c *peekCmd) Help() string {
	return `Receives with a visibility timeout of 0, so the messages stay visible, and prints one body per line (a
body's own newlines are printed as they are; --json for one line per message). It never deletes. SQS has
no read that does not count: each peek adds one to the receive count of every message it prints, and a
message at its queue's max receive count goes to the dead-letter queue at its next receive. Up to 10
messages take one receive; more take more, and peek stops at the first receive that brings fewer than it
asked for or only messages it has printed. On SQS a receive samples SQS's servers: it may show fewer
messages than the queue holds.

Examples:

  sqsloop peek --queue-url "$QUEUE_URL"
  sqsloop peek --queue jobs-dlq --max 100 --json | jq -r '.message_attributes["sqsloop.poison.reason"].string_value'
  sqsloop peek --mailbox sqlite:jobs.db --queue jobs`
}

// Validate checks peek's flags.
func (c *peekCmd) Validate() error {
	if c.Max < 1 || c.Max > 1000 {
		return fmt.Errorf("--max: want 1-1000, got %d", c.Max)
	}
	return nil
}

// Run prints the messages.
func (c *peekCmd) Run(g *globals) error {
	q, err := c.open(g.ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	seen := map[string]bool{}
	enc := json.NewEncoder(g.stdout)
	enc.SetEscapeHTML(false)
	for len(seen) < c.Max {
		want := min(sqsloop.MaxBatchSize, c.Max-len(seen))
		msgs, err := q.mb.Receive(g.ctx, sqsloop.ReceiveRequest{MaxMessages: want, WaitTime: peekWait})
		if err != nil {
			return err
		}
		fresh := 0
		for _, m := range msgs {
			if seen[m.ID] || len(seen) == c.Max {
				continue
			}
			seen[m.ID] = true
			fresh++
			if c.JSON {
				if err := enc.Encode(jsonMessage(m)); err != nil {
					return err
				}
			} else if _, err := fmt.Fprintln(g.stdout, m.Body); err != nil {
				return err
			}
		}
		if fresh == 0 || len(msgs) < want {
			return nil // a receive more would count another receive of the same messages
		}
	}
	return nil
}

// messageJSON is a message as peek --json prints it.
type messageJSON struct {
	ID                string                   `json:"id"`
	Body              string                   `json:"body"`
	ReceiveCount      int                      `json:"receive_count"`
	SentAt            *time.Time               `json:"sent_at,omitempty"`
	FirstReceivedAt   *time.Time               `json:"first_received_at,omitempty"`
	MessageGroupID    string                   `json:"message_group_id,omitempty"`
	Attributes        map[string]string        `json:"attributes,omitempty"`
	MessageAttributes map[string]attributeJSON `json:"message_attributes,omitempty"`
}

// attributeJSON is a message attribute in messageJSON: a Binary value in
// base64 (encoding/json's []byte).
type attributeJSON struct {
	DataType    string `json:"data_type"`
	StringValue string `json:"string_value,omitempty"`
	BinaryValue []byte `json:"binary_value,omitempty"`
}

func jsonMessage(m *sqsloop.Message) messageJSON {
	j := messageJSON{ID: m.ID, Body: m.Body, ReceiveCount: m.ReceiveCount, MessageGroupID: m.MessageGroupID, Attributes: m.Attributes}
	if !m.SentAt.IsZero() {
		t := m.SentAt.UTC()
		j.SentAt = &t
	}
	if !m.FirstReceivedAt.IsZero() {
		t := m.FirstReceivedAt.UTC()
		j.FirstReceivedAt = &t
	}
	if len(m.MessageAttributes) > 0 {
		j.MessageAttributes = make(map[string]attributeJSON, len(m.MessageAttributes))
		for k, a := range m.MessageAttributes {
			j.MessageAttributes[k] = attributeJSON{DataType: a.DataType, StringValue: a.StringValue, BinaryValue: a.BinaryValue}
		}
	}
	return j
}
