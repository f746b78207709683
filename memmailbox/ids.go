package memmailbox

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
)

// idGen makes message IDs and receipt handles for one queue. It is guarded by
// the queue's mutex. Its stream comes from a ChaCha8 generator seeded from
// crypto/rand, so IDs and handles are hard to guess; a counter in every
// receipt handle makes handles unique for certain.
type idGen struct {
	rng     *rand.ChaCha8
	handles uint64
}

func newIDGen() idGen {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (crypto/rand.Read crashes the program instead)
	return idGen{rng: rand.NewChaCha8(seed)}
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

// receiptHandle returns a new receipt handle: a counter, then 128 random bits.
func (g *idGen) receiptHandle() string {
	g.handles++
	var buf [64]byte
	b := strconv.AppendUint(buf[:0], g.handles, 36)
	b = append(b, '.')
	var r [16]byte
	binary.LittleEndian.PutUint64(r[:8], g.rng.Uint64())
	binary.LittleEndian.PutUint64(r[8:], g.rng.Uint64())
	b = hex.AppendEncode(b, r[:])
	return string(b)
}
