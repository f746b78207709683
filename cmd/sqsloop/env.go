package main

import (
	"encoding/base64"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqsloop/sqsloop"
)

// The environment exec gives a command, one message at a time. Every
// variable starting with envPrefix is the message's: those of sqsloop's own
// environment (its settings) are not passed on.
const (
	envPrefix = "SQSLOOP_"

	envMessageID       = "SQSLOOP_MESSAGE_ID"        // the message ID
	envReceiveCount    = "SQSLOOP_RECEIVE_COUNT"     // the approximate receive count, 1 on the first delivery
	envQueue           = "SQSLOOP_QUEUE"             // the queue's name
	envMessageGroupID  = "SQSLOOP_MESSAGE_GROUP_ID"  // the message group (FIFO queues), when it has one
	envSentAt          = "SQSLOOP_SENT_AT"           // when it was sent, RFC 3339 UTC
	envFirstReceivedAt = "SQSLOOP_FIRST_RECEIVED_AT" // when it was first received, RFC 3339 UTC
	envBeatFile        = "SQSLOOP_BEAT_FILE"         // with --beat-file: the file whose modification is a beat
	envAttrPrefix      = "SQSLOOP_ATTR_"             // + attrEnvName(name): a message attribute's value
)

// messageEnv returns environ with m's variables added: the message ID,
// receive count, queue name, message group, times, and each message
// attribute as SQSLOOP_ATTR_ and its name in attrEnvName's form (String and
// Number values as they are, Binary ones in standard base64). When two
// attribute names map to one variable, the name first in byte order sets it.
func messageEnv(environ []string, queue string, m *sqsloop.Message) []string {
	env := slices.Clip(environ)
	env = append(env,
		envMessageID+"="+m.ID,
		envReceiveCount+"="+strconv.Itoa(m.ReceiveCount),
		envQueue+"="+queue,
	)
	if m.MessageGroupID != "" {
		env = append(env, envMessageGroupID+"="+m.MessageGroupID)
	}
	if !m.SentAt.IsZero() {
		env = append(env, envSentAt+"="+utc(m.SentAt))
	}
	if !m.FirstReceivedAt.IsZero() {
		env = append(env, envFirstReceivedAt+"="+utc(m.FirstReceivedAt))
	}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(m.MessageAttributes)) {
		v := envAttrPrefix + attrEnvName(name)
		if seen[v] {
			continue
		}
		seen[v] = true
		env = append(env, v+"="+attrValue(m.MessageAttributes[name]))
	}
	return env
}

// attrEnvName is a message attribute's name as a variable name: ASCII
// letters in upper case, digits as they are, and every other character
// turned into '_' ("order.id" and "order-id" both give "ORDER_ID").
func attrEnvName(name string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z':
			return c - 'a' + 'A'
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			return c
		}
		return '_'
	}, name)
}

// attrValue is an attribute's value as text: a String's or Number's as it
// is, a Binary's in standard base64.
func attrValue(a sqsloop.MessageAttribute) string {
	if strings.HasPrefix(a.DataType, "Binary") {
		return base64.StdEncoding.EncodeToString(a.BinaryValue)
	}
	return a.StringValue
}

// utc formats t as RFC 3339 in UTC, to the second ("2026-01-02T15:04:05Z"):
// ISO 8601, as Elastic Beanstalk's sqsd writes X-Aws-Sqsd-First-Received-At.
func utc(t time.Time) string { return t.UTC().Format(time.RFC3339) }
