package sqsloop

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The request rules of SQS that every Mailbox checks before its call, in one
// place, so that memmailbox and sqsmailbox reject the same requests with the
// same error text. The rules come from the SQS API reference and the SDK's
// docs of the matching calls (ReceiveMessage, DeleteMessageBatch,
// ChangeMessageVisibilityBatch, SendMessageBatch); the limits are the
// constants of limits.go.
//
// Every error of a rule wraps ErrInvalidArgument and reads
//
//	sqsloop: invalid argument: <where>: must <rule>, got <value>
//
// where <where> names the call and the field as the caller wrote it
// ("Send: msgs[2].Delay", "ReceiveRequest.WaitTime"); a rule about presence
// ("must not be empty") has no "got". The rules that depend on the queue (a
// FIFO queue needs a MessageGroupID) are QueueSpec.AcceptMessage's, for the
// mailboxes that keep queues themselves (memmailbox, sqlmailbox).

const (
	// maxIDLength is the longest MessageGroupID or DeduplicationID SQS
	// accepts: 128 characters.
	maxIDLength = 128

	// maxAttrNameLength is the longest message attribute name, and the
	// longest data type, SQS accepts: 256 characters.
	maxAttrNameLength = 256

	// sqsChars lists the characters SQS accepts in a body or a string
	// attribute value (the SDK's SendMessage doc).
	sqsChars = "#x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD #x10000–#x10FFFF"

	// sqsVisibility names SQS's VisibilityTimeout parameter and its range.
	sqsVisibility = "SQS VisibilityTimeout 0–43200 s"
)

// WholeSeconds rounds d up to a whole number of seconds, as SQS counts every
// duration (VisibilityTimeout, WaitTimeSeconds, DelaySeconds are integers):
// 1 ns and 1 s give 1 s, 1.2 s gives 2 s, 0 gives 0, so a message is never
// hidden, delayed or waited on for less than asked. Both mailboxes apply it
// to every duration of a request after the request passed its rule: 12 h is
// accepted, 12 h + 1 ns is not, since it would round to 43,201 s. A negative
// d rounds towards zero (-1.5 s gives -1 s); a d above the largest whole
// second a Duration holds (about 292 years) gives that second.
func WholeSeconds(d time.Duration) time.Duration {
	t := d.Truncate(time.Second) // towards zero: the ceiling for d < 0
	if t < d && t <= maxDuration-time.Second {
		t += time.Second
	}
	return t
}

// maxDuration is the largest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// WantsMessageAttribute reports whether r asks for the message attribute
// name, as SQS reads MessageAttributeNames: nil asks for every attribute
// and an empty slice for none; "All" and ".*" ask for every one; a name
// ending in ".*" ("order.*") for every name with that prefix, the dot
// included ("order.id", not "orders"); any other name for itself. Names
// are case-sensitive. The mailboxes that choose attributes themselves
// (memmailbox, sqlmailbox) call it; SQS does it for sqsmailbox.
func (r ReceiveRequest) WantsMessageAttribute(name string) bool {
	if r.MessageAttributeNames == nil {
		return true
	}
	for _, n := range r.MessageAttributeNames {
		prefix, wildcard := strings.CutSuffix(n, "*")
		if n == "All" || n == name || (wildcard && strings.HasSuffix(prefix, ".") && strings.HasPrefix(name, strings.TrimPrefix(prefix, "."))) {
			return true
		}
	}
	return false
}

// Validate reports every problem of r, joined with errors.Join, or nil for a
// request SQS's ReceiveMessage accepts: MaxMessages 1–10 (MaxBatchSize; SQS
// MaxNumberOfMessages), VisibilityTimeout 0–12 h (MaxVisibilityTimeout; SQS
// VisibilityTimeout 0–43,200 s) and WaitTime 0–20 s (MaxWaitTime; SQS
// WaitTimeSeconds 0–20), the durations checked before WholeSeconds rounds
// them, and no empty name in MessageAttributeNames. Each problem names its
// field ("ReceiveRequest.WaitTime", "ReceiveRequest.MessageAttributeNames[2]")
// and range and wraps ErrInvalidArgument (errors.Is). Every Mailbox's
// Receive returns this error, unchanged, for a request it rejects.
func (r ReceiveRequest) Validate() error {
	var errs []error
	if r.MaxMessages < 1 || r.MaxMessages > MaxBatchSize {
		errs = append(errs, invalid("ReceiveRequest.MaxMessages: must be between 1 and %d (SQS MaxNumberOfMessages), got %d",
			MaxBatchSize, r.MaxMessages))
	}
	if outside(r.VisibilityTimeout, MaxVisibilityTimeout) {
		errs = append(errs, durationError("ReceiveRequest.VisibilityTimeout", r.VisibilityTimeout, MaxVisibilityTimeout, sqsVisibility))
	}
	if outside(r.WaitTime, MaxWaitTime) {
		errs = append(errs, durationError("ReceiveRequest.WaitTime", r.WaitTime, MaxWaitTime, "SQS WaitTimeSeconds 0–20"))
	}
	for i, name := range r.MessageAttributeNames {
		if name == "" {
			errs = append(errs, invalid("ReceiveRequest.MessageAttributeNames[%d]: must not be empty", i))
		}
	}
	return errors.Join(errs...)
}

// ValidateDelete checks a Mailbox.Delete (DeleteMessageBatch) request. A
// non-nil err fails the call as a whole: receiptHandles must hold 1–10
// entries (MaxBatchSize; SQS EmptyBatchRequest, TooManyEntriesInBatchRequest).
// Otherwise entries holds one error per handle, in order: nil for a handle
// to send, an error for an empty one (SQS requires ReceiptHandle), which
// fails alone. Every error wraps ErrInvalidArgument (errors.Is) and names
// its field ("Delete: receiptHandles[3]"); a Mailbox returns them unchanged.
// Whether a handle is known or stale only the queue can tell.
func ValidateDelete(receiptHandles []string) (entries []error, err error) {
	if err := checkBatch("Delete: receiptHandles", len(receiptHandles)); err != nil {
		return nil, err
	}
	entries = make([]error, len(receiptHandles))
	for i, h := range receiptHandles {
		if h == "" {
			entries[i] = invalid("Delete: receiptHandles[%d]: must not be empty", i)
		}
	}
	return entries, nil
}

// ValidateChangeVisibility checks a Mailbox.ChangeVisibility
// (ChangeMessageVisibilityBatch) request. A non-nil err fails the call as a
// whole: changes must hold 1–10 entries (MaxBatchSize). Otherwise entries
// holds one error per change, in order, nil for a change to send, else every
// problem of that change joined, which fails alone: an empty ReceiptHandle,
// or a Timeout outside 0–12 h (MaxVisibilityTimeout; SQS VisibilityTimeout
// 0–43,200 s), checked before WholeSeconds rounds it. Every error wraps
// ErrInvalidArgument (errors.Is) and names its field ("ChangeVisibility:
// changes[1].Timeout"); a Mailbox returns them unchanged. The 12-hour
// ceiling counted from the receive (ErrLeaseCeiling) is the queue's to
// check.
func ValidateChangeVisibility(changes []VisibilityChange) (entries []error, err error) {
	if err := checkBatch("ChangeVisibility: changes", len(changes)); err != nil {
		return nil, err
	}
	entries = make([]error, len(changes))
	for i, c := range changes {
		var errs []error
		if c.ReceiptHandle == "" {
			errs = append(errs, invalid("ChangeVisibility: changes[%d].ReceiptHandle: must not be empty", i))
		}
		if outside(c.Timeout, MaxVisibilityTimeout) {
			errs = append(errs, durationError(fmt.Sprintf("ChangeVisibility: changes[%d].Timeout", i), c.Timeout, MaxVisibilityTimeout, sqsVisibility))
		}
		entries[i] = errors.Join(errs...)
	}
	return entries, nil
}

// ValidateSend checks a Mailbox.Send (SendMessageBatch) request against the
// rules of SQS that do not depend on the queue. A non-nil err fails the call
// as a whole: msgs must hold 1–10 entries (MaxBatchSize), and the entries
// that pass their own rules must take at most MaxMessageSize (1 MiB) bytes
// together, bodies and message attributes (SQS BatchRequestTooLong).
// Otherwise entries holds one error per message, in order, nil for a
// message to send, else every problem of that message joined, which fails
// alone:
//
//   - Body empty, or holding a character SQS does not accept (only #x9, #xA,
//     #xD, #x20–#xD7FF, #xE000–#xFFFD and #x10000–#x10FFFF);
//   - more than MaxMessageAttributes (10) message attributes; an attribute
//     name not of 1–256 letters, digits, '_', '-' and '.', starting with
//     "AWS." or "Amazon." (any case), starting or ending with '.' or holding
//     ".."; a DataType not String, Number or Binary (each optionally followed
//     by ".label", 256 characters at most); a String or Number attribute with
//     an empty or invalid StringValue (a Number's must be a decimal number)
//     or with a BinaryValue; a Binary attribute with an empty BinaryValue or
//     with a StringValue;
//   - body and message attributes (names, data types and values) together
//     over MaxMessageSize (1,048,576 bytes);
//   - Delay outside 0–15 min (MaxDelay; SQS DelaySeconds 0–900), checked
//     before WholeSeconds rounds it;
//   - a MessageGroupID or DeduplicationID that is set but not 1–128 letters,
//     digits and ASCII punctuation (SQS MessageGroupId,
//     MessageDeduplicationId).
//
// Every error wraps ErrInvalidArgument (errors.Is) and names its field
// ("Send: msgs[0].Body"); a Mailbox returns them unchanged. What depends on
// the queue (a FIFO queue needs a MessageGroupID, takes no per-message Delay,
// and only a FIFO queue takes a DeduplicationID) is the queue's to check.
func ValidateSend(msgs []OutgoingMessage) (entries []error, err error) {
	if err := checkBatch("Send: msgs", len(msgs)); err != nil {
		return nil, err
	}
	entries = make([]error, len(msgs))
	total := 0
	for i, m := range msgs {
		size, err := checkMessage(false, i, m)
		if err != nil {
			entries[i] = err
			continue
		}
		total += size
	}
	if total > MaxMessageSize {
		return nil, invalid("Send: msgs: must take at most %d bytes together, bodies and message attributes of the valid entries (SQS BatchRequestTooLong), got %d",
			MaxMessageSize, total)
	}
	return entries, nil
}

// ValidateSendBulk checks a SendBulk call (BulkSender) as ValidateSend
// checks a Send, with the bulk's limits instead of SQS's batch limits:
// 1–MaxBulkSize (1,000) messages, at most MaxBulkBytes (16 MiB) together;
// each message is checked as ValidateSend checks it (at most
// MaxMessageSize alone), and its error names it "SendBulk: msgs[i]…".
// Errors wrap ErrInvalidArgument.
func ValidateSendBulk(msgs []OutgoingMessage) (entries []error, err error) {
	if n := len(msgs); n < 1 || n > MaxBulkSize {
		return nil, invalid("SendBulk: msgs: must hold between 1 and %d entries (MaxBulkSize), got %d", MaxBulkSize, n)
	}
	entries = make([]error, len(msgs))
	total := 0
	for i, m := range msgs {
		size, err := checkMessage(true, i, m)
		if err != nil {
			entries[i] = err
			continue
		}
		total += size
	}
	if total > MaxBulkBytes {
		return nil, invalid("SendBulk: msgs: must take at most %d bytes together (MaxBulkBytes), bodies and message attributes of the valid entries, got %d",
			MaxBulkBytes, total)
	}
	return entries, nil
}

// invalid returns an error wrapping ErrInvalidArgument, in the rules' grammar.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// checkBatch checks the number of entries n of the batch named where.
func checkBatch(where string, n int) error {
	if n < 1 || n > MaxBatchSize {
		return invalid("%s: must hold between 1 and %d entries (SQS batch limit), got %d", where, MaxBatchSize, n)
	}
	return nil
}

// outside reports whether d lies outside 0..max.
func outside(d, max time.Duration) bool { return d < 0 || d > max }

// durationError is the problem of d, named where, outside 0..max; sqs names
// the SQS parameter and its range.
func durationError(where string, d, max time.Duration, sqs string) error {
	return invalid("%s: must be between 0 and %s (%s), got %v", where, limit(max), sqs, d)
}

// limit formats a limit without zero minutes or seconds: 12h, 15m, 20s.
func limit(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// checkMessage returns every problem of msgs[i] of a Send (of a SendBulk
// when bulk), joined, and else its size in bytes: body plus the names, data
// types and values of its attributes.
func checkMessage(bulk bool, i int, m OutgoingMessage) (int, error) {
	var errs []error
	if m.Body == "" {
		errs = append(errs, invalid("%s: must not be empty (SQS takes 1 byte to 1 MiB)", field{bulk: bulk, i: i, name: ".Body"}))
	} else if at, ok := validText(m.Body); !ok {
		errs = append(errs, invalid("%s: must hold only characters SQS accepts (%s), got %s", field{bulk: bulk, i: i, name: ".Body"}, sqsChars, badChar(m.Body, at)))
	}
	if n := len(m.MessageAttributes); n > MaxMessageAttributes {
		errs = append(errs, invalid("%s: must hold at most %d attributes, got %d", field{bulk: bulk, i: i, name: ".MessageAttributes"}, MaxMessageAttributes, n))
	}
	size := m.Size()
	var buf [MaxMessageAttributes]string
	names := buf[:0]
	for name := range m.MessageAttributes {
		names = append(names, name)
	}
	slices.Sort(names) // the same problems in the same order, every time
	for _, name := range names {
		errs = appendAttr(errs, bulk, i, name, m.MessageAttributes[name])
	}
	if size > MaxMessageSize {
		errs = append(errs, invalid("%s: must take at most %d bytes, body and message attributes together (SQS message size limit), got %d",
			field{bulk: bulk, i: i}, MaxMessageSize, size))
	}
	if outside(m.Delay, MaxDelay) {
		errs = append(errs, durationError(field{bulk: bulk, i: i, name: ".Delay"}.String(), m.Delay, MaxDelay, "SQS DelaySeconds 0–900"))
	}
	errs = appendID(errs, field{bulk: bulk, i: i, name: ".MessageGroupID"}, m.MessageGroupID, "SQS MessageGroupId")
	errs = appendID(errs, field{bulk: bulk, i: i, name: ".DeduplicationID"}, m.DeduplicationID, "SQS MessageDeduplicationId")
	if len(errs) > 0 {
		return 0, errors.Join(errs...)
	}
	return size, nil
}

// field names a field of msgs[i] of a Send, as in "Send: msgs[2].Delay" or
// "Send: msgs[2].MessageAttributes["trace"].DataType". It is formatted only
// when a problem is reported, so a valid message costs no formatting.
type field struct {
	bulk   bool // of a SendBulk
	i      int
	inAttr bool   // the field belongs to message attribute attr
	attr   string // name of that attribute
	name   string // the field, with its leading '.'; empty for the message
}

// String formats f.
func (f field) String() string {
	call := "Send"
	if f.bulk {
		call = "SendBulk"
	}
	if f.inAttr {
		return fmt.Sprintf("%s: msgs[%d].MessageAttributes[%s]%s", call, f.i, quote(f.attr), f.name)
	}
	return fmt.Sprintf("%s: msgs[%d]%s", call, f.i, f.name)
}

// appendID appends the problem of a MessageGroupID or DeduplicationID, if
// set: 1–128 letters, digits and ASCII punctuation.
func appendID(errs []error, where field, id, sqs string) []error {
	if id == "" {
		return errs
	}
	if len(id) > maxIDLength {
		return append(errs, invalid("%s: must be at most %d characters (%s), got %d", where, maxIDLength, sqs, len(id)))
	}
	for at, c := range id {
		if c <= ' ' || c > '~' {
			return append(errs, invalid("%s: must hold only letters, digits and ASCII punctuation (%s), got %s", where, sqs, badChar(id, at)))
		}
	}
	return errs
}

// appendAttr appends the problems of message attribute name, a, of msgs[i].
func appendAttr(errs []error, bulk bool, i int, name string, a MessageAttribute) []error {
	at := func(f string) field { return field{bulk: bulk, i: i, inAttr: true, attr: name, name: f} }
	errs = appendAttrName(errs, at(""), name)
	base, label, dotted := strings.Cut(a.DataType, ".")
	if len(a.DataType) > maxAttrNameLength || (dotted && label == "") ||
		(base != "String" && base != "Number" && base != "Binary") {
		return append(errs, invalid("%s: must be String, Number or Binary, optionally followed by .label, at most %d characters, got %s",
			at(".DataType"), maxAttrNameLength, quote(a.DataType)))
	}
	if base == "Binary" {
		if len(a.BinaryValue) == 0 {
			errs = append(errs, invalid("%s: must not be empty in a Binary attribute", at(".BinaryValue")))
		}
		if a.StringValue != "" {
			errs = append(errs, invalid("%s: must be empty in a Binary attribute, got %d bytes", at(".StringValue"), len(a.StringValue)))
		}
		return errs
	}
	switch bad, ok := validText(a.StringValue); {
	case a.StringValue == "":
		errs = append(errs, invalid("%s: must not be empty in a %s attribute", at(".StringValue"), base))
	case !ok:
		errs = append(errs, invalid("%s: must hold only characters SQS accepts (%s), got %s", at(".StringValue"), sqsChars, badChar(a.StringValue, bad)))
	case base == "Number" && !isDecimal(a.StringValue):
		errs = append(errs, invalid("%s: must be a decimal number in a Number attribute, got %s", at(".StringValue"), quote(a.StringValue)))
	}
	if len(a.BinaryValue) > 0 {
		errs = append(errs, invalid("%s: must be empty in a %s attribute, got %d bytes", at(".BinaryValue"), base, len(a.BinaryValue)))
	}
	return errs
}

// appendAttrName appends the problems of a message attribute name: 1–256
// letters, digits, '_', '-' and '.', not starting with "AWS." or "Amazon."
// (any case), without ".." and neither starting nor ending with '.'.
func appendAttrName(errs []error, where field, name string) []error {
	if len(name) == 0 || len(name) > maxAttrNameLength {
		return append(errs, invalid("%s: must have a name of 1 to %d characters, got %d", where, maxAttrNameLength, len(name)))
	}
	for at, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return append(errs, invalid("%s: must have a name of letters, digits, '_', '-' and '.' only, got %s", where, badChar(name, at)))
		}
	}
	switch {
	case hasPrefixFold(name, "aws.") || hasPrefixFold(name, "amazon."):
		errs = append(errs, invalid(`%s: must have a name not starting with "AWS." or "Amazon." (reserved)`, where))
	case strings.Contains(name, "..") || name[0] == '.' || name[len(name)-1] == '.':
		errs = append(errs, invalid(`%s: must have a name neither starting nor ending with '.', nor holding ".."`, where))
	}
	return errs
}

// hasPrefixFold reports whether s starts with prefix, ignoring case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// validText reports whether s holds only characters SQS accepts in a body or
// a string attribute value, and else the byte offset of the first other one.
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

// badChar describes the character of s at byte offset at.
func badChar(s string, at int) string {
	c, n := utf8.DecodeRuneInString(s[at:])
	if c == utf8.RuneError && n <= 1 {
		return fmt.Sprintf("invalid UTF-8 at byte %d", at)
	}
	return fmt.Sprintf("%U at byte %d", c, at)
}

// quote quotes s for an error message, cut to its first 64 bytes.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
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

// AcceptMessage applies the rules of the queue s describes to msgs[i] of a
// Send, a message that passed ValidateSend (the rules of every queue), and
// returns what the queue stores of it: its delay, and on a FIFO queue its
// deduplication ID, never empty there (a Mailbox may tell a FIFO queue's
// messages by it, as sqlmailbox/postgres's FIFO index does). The rules are SQS's: at most s.MaxMessageSize bytes,
// body and message attributes together (Size; 0 means MaxMessageSize); on a
// FIFO queue a MessageGroupID, no per-message Delay (only the queue's), and
// a DeduplicationID unless s.ContentBasedDeduplication, which makes the
// body's SHA-256, in hex, the ID; a standard queue takes no
// DeduplicationID (it takes a MessageGroupID: fair queues). delay is
// m.Delay rounded up to whole seconds (WholeSeconds), or s.Delay when
// m.Delay is 0. Each error wraps ErrInvalidArgument and names the field, in
// the request rules' grammar ("Send: msgs[2].MessageGroupID: must not be
// empty on a FIFO queue"); a Mailbox returns it as the entry's error.
func (s QueueSpec) AcceptMessage(i int, m OutgoingMessage) (delay time.Duration, dedupID string, err error) {
	most := s.MaxMessageSize
	if most == 0 {
		most = MaxMessageSize
	}
	if size := m.Size(); size > most {
		return 0, "", invalid("%s: must take at most %d bytes on queue %q (its MaxMessageSize), body and message attributes together, got %d",
			field{i: i}, most, s.Name, size)
	}
	delay = s.Delay
	if m.Delay > 0 {
		delay = WholeSeconds(m.Delay)
	}
	if !s.FIFO {
		if m.DeduplicationID != "" {
			return 0, "", invalid("%s: must be empty on a standard queue (only a FIFO queue deduplicates)", field{i: i, name: ".DeduplicationID"})
		}
		return delay, "", nil
	}
	switch {
	case m.Delay != 0:
		return 0, "", invalid("%s: must be 0 on a FIFO queue (it takes only the queue's delay), got %v", field{i: i, name: ".Delay"}, m.Delay)
	case m.MessageGroupID == "":
		return 0, "", invalid("%s: must not be empty on a FIFO queue", field{i: i, name: ".MessageGroupID"})
	case m.DeduplicationID != "":
		return delay, m.DeduplicationID, nil
	case s.ContentBasedDeduplication:
		sum := sha256.Sum256([]byte(m.Body))
		return delay, hex.EncodeToString(sum[:]), nil
	}
	return 0, "", invalid("%s: must not be empty on a FIFO queue without ContentBasedDeduplication", field{i: i, name: ".DeduplicationID"})
}
