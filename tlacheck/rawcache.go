package tlacheck

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// rawCache remembers, in the fingerprint mode with symmetry, the successors already
// keyed, by a 128-bit hash of their encoding as they are (image 0, not canonical):
// most successors repeat a state already reached by another interleaving, and the
// canonical key costs an encoding per allowed image, the hash one encoding of what
// changed. A hit means the state's canonical fingerprint is in the set already, so
// the figures are those of a run without the cache but for a 128-bit collision
// (Result.Collision adds its chance); an entry overwritten by another state is only
// keyed again. The workers share it; each word is read and written atomically, and a
// pair torn by two writers matches no state but by a 128-bit collision.
type rawCache struct {
	words   []uint64 // entry i is words[2i], words[2i+1]; 0, 0 is empty
	mask    uint64
	lookups atomic.Int64
	hits    atomic.Int64
}

// rawCacheShare is the cache's size as a share of the fingerprint set's budget.
const rawCacheShare = 8

func newRawCache(budget int64) *rawCache {
	entries := uint64(1) << (63 - bits.LeadingZeros64(uint64(max(budget/rawCacheShare, 16<<10))/16))
	return &rawCache{words: make([]uint64, 2*entries), mask: entries - 1}
}

// seen reports whether (h1, h2) was put; h2 is odd, so an empty entry never matches.
func (c *rawCache) seen(h1, h2 uint64) bool {
	c.lookups.Add(1)
	i := 2 * (h1 & c.mask)
	if atomic.LoadUint64(&c.words[i]) == h1 && atomic.LoadUint64(&c.words[i+1]) == h2 {
		c.hits.Add(1)
		return true
	}
	return false
}

// put records (h1, h2), in place of whatever held its entry.
func (c *rawCache) put(h1, h2 uint64) {
	i := 2 * (h1 & c.mask)
	atomic.StoreUint64(&c.words[i], h1)
	atomic.StoreUint64(&c.words[i+1], h2)
}

func (c *rawCache) bytes() int64 { return int64(len(c.words)) * 8 }

// collisionChance bounds the chance that a lookup matched an entry of another state,
// generously (a lookup meets one entry, not all): each lookup against each entry,
// 2^-127 (h2's low bit is fixed).
func (c *rawCache) collisionChance() float64 {
	return float64(c.lookups.Load()) * float64(len(c.words)/2) / math.Exp2(127)
}

// rawHash hashes st's encoding as it is (image 0), sharing key's encodings of the
// parent's unchanged values; h2 is forced odd.
func (e *explorer) rawHash(st []Value) (h1, h2 uint64) {
	buf := e.rawBuf[:0]
	for i := range st {
		buf = e.appendImage(buf, st, i, 0)
	}
	e.rawBuf = buf
	return fingerprint(buf), fingerprintSeeded(buf, 0x7a3d1f5b96c2e481) | 1
}
