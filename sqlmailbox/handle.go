package sqlmailbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/sqsloop/sqsloop/sqlmailbox/internal/driver"
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

// signer signs and checks the receipt handles of one queue: HMAC-SHA-256
// under the queue's key, its keyed hashes kept in a pool (making one costs
// more than signing). Safe for concurrent use.
type signer struct {
	pool sync.Pool
}

func newSigner(key []byte) *signer {
	return &signer{pool: sync.Pool{New: func() any { return hmac.New(sha256.New, key) }}}
}

// sign returns the first macLen bytes of HMAC-SHA-256(key, ref).
func (s *signer) sign(ref []byte) []byte {
	m := s.pool.Get().(hash.Hash)
	m.Reset()
	m.Write(ref)
	var sum [sha256.Size]byte
	out := m.Sum(sum[:0])[:macLen]
	s.pool.Put(m)
	return out
}

// encode returns the receipt handle of ref.
func (s *signer) encode(ref driver.Ref) string {
	var b [refLen + macLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(ref.ID))
	binary.BigEndian.PutUint32(b[8:refLen], uint32(ref.ReceiveCount))
	copy(b[refLen:], s.sign(b[:refLen]))
	return handleEncoding.EncodeToString(b[:])
}

// decode returns the ref of a handle this signer issued, and false for any
// string that is not one.
func (s *signer) decode(h string) (driver.Ref, bool) {
	if len(h) != handleLen {
		return driver.Ref{}, false
	}
	var b [refLen + macLen]byte
	if n, err := handleEncoding.Decode(b[:], []byte(h)); err != nil || n != len(b) {
		return driver.Ref{}, false
	}
	if !hmac.Equal(b[refLen:], s.sign(b[:refLen])) {
		return driver.Ref{}, false
	}
	return driver.Ref{
		ID:           int64(binary.BigEndian.Uint64(b[:8])),
		ReceiveCount: int(binary.BigEndian.Uint32(b[8:refLen])),
	}, true
}
