package memmailbox

import (
	"crypto/aes"
	"crypto/cipher"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// idGen makes message IDs and receipt handles for one queue. It is guarded by
// the queue's mutex. Message IDs come from a ChaCha8 generator seeded from
// crypto/rand, so they are hard to guess.
//
// A receipt handle is the queue's count of receives so far, encrypted with a
// key of its own (one AES block), so the queue can tell a handle it issued
// from any other string without remembering the handles, as SQS does
// (ReceiptHandleIsInvalid for a handle it never issued, success for an old
// one it did). Handles are unique because the count is, and a made-up or
// altered handle passes for an issued one with odds of 2⁻⁶⁴.
type idGen struct {
	rng     *rand.ChaCha8
	block   cipher.Block
	handles uint64              // receipt handles issued
	buf     [aes.BlockSize]byte // scratch block: a local one would escape through block
}

// handleLen is the length of a receipt handle: one AES block in hex.
const handleLen = 2 * aes.BlockSize

func newIDGen() idGen {
	var seed [32]byte
	var key [16]byte
	_, _ = crand.Read(seed[:]) // never fails (crypto/rand.Read crashes the program instead)
	_, _ = crand.Read(key[:])
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic("memmailbox: " + err.Error()) // unreachable: the key has a valid length
	}
	return idGen{rng: rand.NewChaCha8(seed), block: block}
}

// messageID returns a random UUID (version 4), the form of SQS message IDs.
func (g *idGen) messageID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], g.rng.Uint64())
	binary.LittleEndian.PutUint64(b[8:], g.rng.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// receiptHandle returns a new receipt handle: the encrypted block of eight
// zero bytes and the new count, in hex.
func (g *idGen) receiptHandle() string {
	g.handles++
	b := g.buf[:]
	binary.BigEndian.PutUint64(b[:8], 0)
	binary.BigEndian.PutUint64(b[8:], g.handles)
	g.block.Encrypt(b, b)
	var s [handleLen]byte
	hex.Encode(s[:], b)
	return string(s[:])
}

// issued reports whether h is a receipt handle this generator returned,
// character for character (lower-case hex only, as issued).
func (g *idGen) issued(h string) bool {
	if len(h) != handleLen {
		return false
	}
	var src [handleLen]byte
	for i := range len(h) {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
		src[i] = c
	}
	b := g.buf[:]
	if _, err := hex.Decode(b, src[:]); err != nil {
		return false
	}
	g.block.Decrypt(b, b)
	n := binary.BigEndian.Uint64(b[8:])
	return binary.BigEndian.Uint64(b[:8]) == 0 && n >= 1 && n <= g.handles
}
