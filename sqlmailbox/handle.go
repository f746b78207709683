package sqlmailbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// A receipt handle names one receive of one message: the message's row key
// and its receive count after that receive, signed with the queue's key
// (HMAC-SHA-256, cut to 16 bytes), in URL-safe base64 (38 characters). The
// count makes every receive's handle new; the signature lets the queue tell
// a handle it issued, now stale, from one it never issued (a made-up or
// altered handle passes with odds of 2⁻¹²⁸), as SQS does, without storing
// handles.
const (
	refLen = 8 + 4
	macLen = 16
)

var (
	handleEncoding = base64.RawURLEncoding
	handleLen      = handleEncoding.EncodedLen(refLen + macLen) // 38
)

// encodeHandle returns the receipt handle of ref on the queue whose key is
// key.
func encodeHandle(key []byte, ref Ref) string {
	var b [refLen + macLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(ref.ID))
	binary.BigEndian.PutUint32(b[8:refLen], uint32(ref.ReceiveCount))
	copy(b[refLen:], sign(key, b[:refLen]))
	return handleEncoding.EncodeToString(b[:])
}

// decodeHandle returns the ref of a handle issued with key, and false for
// any string that is not one.
func decodeHandle(key []byte, h string) (Ref, bool) {
	if len(h) != handleLen {
		return Ref{}, false
	}
	var b [refLen + macLen]byte
	if n, err := handleEncoding.Decode(b[:], []byte(h)); err != nil || n != len(b) {
		return Ref{}, false
	}
	if !hmac.Equal(b[refLen:], sign(key, b[:refLen])) {
		return Ref{}, false
	}
	return Ref{
		ID:           int64(binary.BigEndian.Uint64(b[:8])),
		ReceiveCount: int(binary.BigEndian.Uint32(b[8:refLen])),
	}, true
}

// sign returns the first macLen bytes of HMAC-SHA-256(key, ref).
func sign(key, ref []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(ref)
	return m.Sum(nil)[:macLen]
}
