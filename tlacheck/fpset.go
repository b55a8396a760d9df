package tlacheck

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync/atomic"
)

// The fingerprint mode (Options.FingerprintBytes): the seen states are kept as 64-bit
// fingerprints of their canonical encodings, as TLC keeps them, instead of whole; two
// states whose fingerprints collide are taken for one, and the run prints the chance
// of that (Result.Collision).

// fingerprint hashes a state's canonical encoding to 64 bits: each 8-byte word mixed
// by the splitmix64 finalizer into a running hash, the tail and the length last. It
// is fixed (no per-process seed), so that a run's figures are reproducible.
func fingerprint(b []byte) uint64 { return fingerprintSeeded(b, 0) }

// fingerprintSeeded is fingerprint with the seed mixed into its start: another seed,
// another hash (rawCache takes a second, independent 64 bits from it).
func fingerprintSeeded(b []byte, seed uint64) uint64 {
	h := uint64(len(b))*0x9e3779b97f4a7c15 ^ seed
	for len(b) >= 8 {
		h = bits.RotateLeft64(h^mix64(binary.LittleEndian.Uint64(b)), 29)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	h = bits.RotateLeft64(h^mix64(tail^uint64(len(b))<<56), 29)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	return mix64(h)
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// fpSet is a set of fingerprints of fixed size: open addressing with linear probing
// over a power-of-two table that fits the budget, 0 marking a free slot (the
// fingerprint 0 is stored as 1: one more way to collide). It holds at most 3/4 of its
// slots, so that probes stay short; past that the run stops (ErrLimit) rather than
// slow down or outgrow its budget. Workers insert at once: a slot is claimed by
// compare-and-swap, and a slot once set never changes.
type fpSet struct {
	slots []uint64
	mask  uint64
	n     atomic.Int64
	max   int
}

// fpSetMinBytes is the smallest budget: 1,024 slots.
const fpSetMinBytes = 8 << 10

func newFPSet(budget int64) *fpSet {
	n := uint64(1) << (63 - bits.LeadingZeros64(uint64(max(budget, fpSetMinBytes))/8))
	return &fpSet{slots: make([]uint64, n), mask: n - 1, max: int(n / 4 * 3)}
}

// insert adds fp and reports whether it was new; full reports a set that holds its
// most already (fp was not added).
func (s *fpSet) insert(fp uint64) (isNew, full bool) {
	if fp == 0 {
		fp = 1
	}
	for i := fp & s.mask; ; i = (i + 1) & s.mask {
		switch atomic.LoadUint64(&s.slots[i]) {
		case fp:
			return false, false
		case 0:
			if s.n.Add(1) > int64(s.max) { // room is reserved first, so the count is exact
				s.n.Add(-1)
				return false, true
			}
			if !atomic.CompareAndSwapUint64(&s.slots[i], 0, fp) {
				s.n.Add(-1)
				i-- // another worker took the slot: look at it again
				continue
			}
			return true, false
		}
	}
}

// len is how many fingerprints the set holds.
func (s *fpSet) len() int { return int(s.n.Load()) }

// errFull is the error of a run whose set is full.
func (s *fpSet) errFull() error {
	return errAt(ErrLimit, Pos{}, "the fingerprint set is full: %d states in %d bytes (give it more)", s.max, s.bytes())
}

// bytes is the set's memory: its table.
func (s *fpSet) bytes() int64 { return int64(len(s.slots)) * 8 }

// collisionChance is TLC's "calculated (optimistic)" estimate of the probability that
// two of the distinct states a run found share a fingerprint, so that one of them was
// never explored: each of the generated-distinct duplicate lookups could have matched
// any of the distinct fingerprints by chance, distinct*(generated-distinct)/2^64.
func collisionChance(distinct, generated int64) float64 {
	return float64(distinct) * float64(max(generated-distinct, 0)) / math.Exp2(64)
}
