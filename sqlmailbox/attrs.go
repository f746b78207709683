package sqlmailbox

import (
	"encoding/json"
	"fmt"

	"github.com/sqsloop/sqsloop"
)

// storedAttr is one message attribute as the attributes column keeps it:
// JSON, readable with the database's own JSON functions ({"order.id":
// {"t":"String","s":"o-1"}}; a binary value in base64 under "b").
type storedAttr struct {
	T string `json:"t"`
	S string `json:"s,omitempty"`
	B []byte `json:"b,omitempty"`
}

// encodeAttrs returns the column value of attrs: nil for none.
func encodeAttrs(attrs map[string]sqsloop.MessageAttribute) ([]byte, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	m := make(map[string]storedAttr, len(attrs))
	for k, a := range attrs {
		m[k] = storedAttr{T: a.DataType, S: a.StringValue, B: a.BinaryValue}
	}
	return json.Marshal(m)
}

// decodeAttrs returns the attributes of a column value that names selects
// (sqsloop.ReceiveRequest.MessageAttributeNames: nil all, empty none,
// "All" or ".*" all, "prefix.*" a prefix, else a name); nil for none.
func decodeAttrs(raw []byte, names []string) (map[string]sqsloop.MessageAttribute, error) {
	if len(raw) == 0 || (names != nil && len(names) == 0) {
		return nil, nil
	}
	var m map[string]storedAttr
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("sqlmailbox: stored message attributes: %w", err)
	}
	want := sqsloop.ReceiveRequest{MessageAttributeNames: names}
	var out map[string]sqsloop.MessageAttribute
	for k, a := range m {
		if !want.WantsMessageAttribute(k) {
			continue
		}
		if out == nil {
			out = make(map[string]sqsloop.MessageAttribute, len(m))
		}
		out[k] = sqsloop.MessageAttribute{DataType: a.T, StringValue: a.S, BinaryValue: a.B}
	}
	return out, nil
}
