package memmailbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sqsloop/sqsloop"
)

// Limits on a sent message, from SQS. The size limit is
// sqsloop.MaxMessageSize (1 MiB), shared with sqsmailbox.
const (
	// MaxMessageAttributes is the most message attributes a message may carry.
	MaxMessageAttributes = 10

	// MaxIDLength is the longest MessageGroupID or DeduplicationID: 128
	// characters of letters, digits and ASCII punctuation.
	MaxIDLength = 128

	// maxAttrNameLength is the longest message attribute name, and the
	// longest data type.
	maxAttrNameLength = 256
)

// prepare validates entry i of a Send batch on a queue configured as cfg and
// returns the record to enqueue (without ID or times), its delay, and its
// size in bytes. Errors wrap sqsloop.ErrInvalidArgument and name the field.
func prepare(i int, m sqsloop.OutgoingMessage, cfg QueueConfig) (*record, time.Duration, int, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("memmailbox: Send entry %d: OutgoingMessage."+format+": %w", append([]any{i}, append(args, sqsloop.ErrInvalidArgument)...)...)
	}
	size := len(m.Body)
	if len(m.Body) == 0 {
		return nil, 0, 0, bad("Body is empty; SQS takes 1 byte to 1 MiB")
	}
	if at, ok := validText(m.Body); !ok {
		return nil, 0, 0, bad("Body: character at byte %d is not one SQS accepts (#x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF)", at)
	}
	if len(m.MessageAttributes) > MaxMessageAttributes {
		return nil, 0, 0, bad("MessageAttributes: %d attributes, want at most %d", len(m.MessageAttributes), MaxMessageAttributes)
	}
	for name, a := range m.MessageAttributes {
		n, err := validateAttr(name, a)
		if err != nil {
			return nil, 0, 0, bad("MessageAttributes[%q]: %v", name, err)
		}
		size += n
	}
	if size > sqsloop.MaxMessageSize {
		return nil, 0, 0, bad("Body and MessageAttributes: %d bytes, want at most %d (SQS caps a message at 1 MiB)", size, sqsloop.MaxMessageSize)
	}
	if m.Delay < 0 || m.Delay > sqsloop.MaxDelay {
		return nil, 0, 0, bad("Delay %v out of range 0–15m", m.Delay)
	}
	r := &record{body: m.Body, attrs: copyAttrs(m.MessageAttributes)}
	delay := cfg.Delay
	if m.Delay > 0 {
		delay = m.Delay
	}
	if !cfg.FIFO {
		// SQS takes a MessageGroupId on a standard queue too (fair queues);
		// there it orders nothing, and the received message reports it.
		if m.MessageGroupID != "" {
			if err := validateID(m.MessageGroupID); err != nil {
				return nil, 0, 0, bad("MessageGroupID %q: %v", m.MessageGroupID, err)
			}
			r.group = m.MessageGroupID
		}
		if m.DeduplicationID != "" {
			return nil, 0, 0, bad("DeduplicationID %q: only a FIFO queue takes one", m.DeduplicationID)
		}
		return r, delay, size, nil
	}
	if m.Delay != 0 {
		return nil, 0, 0, bad("Delay %v: a FIFO queue takes only the queue's delay, so want 0", m.Delay)
	}
	if err := validateID(m.MessageGroupID); err != nil {
		return nil, 0, 0, bad("MessageGroupID %q: %v (required on a FIFO queue)", m.MessageGroupID, err)
	}
	r.group = m.MessageGroupID
	switch {
	case m.DeduplicationID != "":
		if err := validateID(m.DeduplicationID); err != nil {
			return nil, 0, 0, bad("DeduplicationID %q: %v", m.DeduplicationID, err)
		}
		r.dedupID = m.DeduplicationID
	case cfg.ContentBasedDeduplication:
		sum := sha256.Sum256([]byte(m.Body))
		r.dedupID = hex.EncodeToString(sum[:])
	default:
		return nil, 0, 0, bad("DeduplicationID is empty and the queue has no ContentBasedDeduplication: a FIFO queue needs one or the other")
	}
	return r, delay, size, nil
}

// validText reports whether s holds only characters SQS accepts in a body or
// attribute value, and else the byte offset of the first other one.
func validText(s string) (int, bool) {
	for i, c := range s {
		switch {
		case c == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return i, false
			}
		case c == 0x9 || c == 0xA || c == 0xD:
		case c < 0x20, c > 0xD7FF && c < 0xE000, c == 0xFFFE, c == 0xFFFF:
			return i, false
		}
	}
	return 0, true
}

// validateID checks a MessageGroupID or DeduplicationID: 1–128 characters,
// letters, digits and ASCII punctuation.
func validateID(id string) error {
	if len(id) == 0 || len(id) > MaxIDLength {
		return fmt.Errorf("length %d out of range 1–%d", len(id), MaxIDLength)
	}
	for _, c := range id {
		if c <= ' ' || c > '~' {
			return fmt.Errorf("character %q not allowed (letters, digits and ASCII punctuation only)", c)
		}
	}
	return nil
}

// validateAttr checks one message attribute against SQS's rules and returns
// its size in bytes (name, data type and value).
func validateAttr(name string, a sqsloop.MessageAttribute) (int, error) {
	if err := validateAttrName(name); err != nil {
		return 0, err
	}
	base, custom, _ := strings.Cut(a.DataType, ".")
	if len(a.DataType) > maxAttrNameLength || (custom == "" && strings.Contains(a.DataType, ".")) {
		return 0, fmt.Errorf("DataType %q malformed", a.DataType)
	}
	size := len(name) + len(a.DataType)
	switch base {
	case "String", "Number":
		if a.StringValue == "" {
			return 0, fmt.Errorf("StringValue is empty; a %s attribute needs one", base)
		}
		if a.BinaryValue != nil {
			return 0, fmt.Errorf("BinaryValue is set on a %s attribute", base)
		}
		if at, ok := validText(a.StringValue); !ok {
			return 0, fmt.Errorf("StringValue: character at byte %d is not one SQS accepts", at)
		}
		if base == "Number" && !isDecimal(a.StringValue) {
			return 0, fmt.Errorf("StringValue %q is not a decimal number", a.StringValue)
		}
		return size + len(a.StringValue), nil
	case "Binary":
		if len(a.BinaryValue) == 0 {
			return 0, fmt.Errorf("BinaryValue is empty; a Binary attribute needs one")
		}
		if a.StringValue != "" {
			return 0, fmt.Errorf("StringValue is set on a Binary attribute")
		}
		return size + len(a.BinaryValue), nil
	default:
		return 0, fmt.Errorf("DataType %q: want String, Number or Binary, optionally followed by .label", a.DataType)
	}
}

// validateAttrName checks a message attribute name: 1–256 letters, digits,
// '_', '-' and '.', not starting with "AWS." or "Amazon.", without ".." and
// neither starting nor ending with '.'.
func validateAttrName(name string) error {
	if len(name) == 0 || len(name) > maxAttrNameLength {
		return fmt.Errorf("name length %d out of range 1–%d", len(name), maxAttrNameLength)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("name: character %q not allowed (letters, digits, '_', '-', '.')", c)
		}
	}
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon."):
		return fmt.Errorf("name: prefixes \"AWS.\" and \"Amazon.\" are reserved")
	case strings.Contains(name, "..") || name[0] == '.' || name[len(name)-1] == '.':
		return fmt.Errorf("name: no leading, trailing or doubled '.'")
	}
	return nil
}

// isDecimal reports whether s is a decimal number: an optional sign, digits
// with an optional fraction, and an optional exponent.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}
