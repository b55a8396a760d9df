package core

import (
	"slices"
	"strings"
)

// retiredSet is the exact set of retired run ids: all a retired run costs (its id's
// bytes and four more), so that P3 and the refusal to reopen it survive it. New ids
// collect in a small map; a full map becomes a sorted block, and blocks of like size
// merge (as a binary counter does) up to retiredBlockMax ids, so that each id is
// copied O(log n) times, no merge copies more than two such blocks, and a lookup
// searches O(log n + n/retiredBlockMax) blocks. Blocks never change once made: a cut
// keeps the list it saw and encodes it with no lock held.
type retiredSet struct {
	recent map[RunID]struct{}
	blocks []*retiredBlock // full blocks first, then sizes decreasing strictly
	n      int
}

// retiredRecentMax is how many ids wait in the map before they become a block.
const retiredRecentMax = 1024

// retiredBlockMax is the size from which a block merges no more: the most a merge
// copies, and so the most memory it holds twice for a while (a variable for tests).
var retiredBlockMax = 1 << 17

// retiredBlock is a sorted list of ids packed in one string: id i is
// data[offs[i]:offs[i+1]].
type retiredBlock struct {
	data string
	offs []uint32
}

func (b *retiredBlock) len() int          { return len(b.offs) - 1 }
func (b *retiredBlock) at(i int) RunID    { return RunID(b.data[b.offs[i]:b.offs[i+1]]) }
func (b *retiredBlock) has(id RunID) bool { _, ok := b.search(id); return ok }

func (b *retiredBlock) search(id RunID) (int, bool) {
	lo, hi := 0, b.len()
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.at(m) < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < b.len() && b.at(lo) == id
}

// packBlock makes a block of sorted, distinct ids.
func packBlock(ids []RunID) *retiredBlock {
	var data strings.Builder
	offs := make([]uint32, 0, len(ids)+1)
	offs = append(offs, 0)
	for _, id := range ids {
		data.WriteString(string(id))
		offs = append(offs, uint32(data.Len()))
	}
	return &retiredBlock{data: data.String(), offs: offs}
}

func (s *retiredSet) len() int { return s.n }

func (s *retiredSet) has(id RunID) bool {
	if _, ok := s.recent[id]; ok {
		return true
	}
	for _, b := range s.blocks {
		if b.has(id) {
			return true
		}
	}
	return false
}

// add adds id, which is not in s.
func (s *retiredSet) add(id RunID) {
	if s.recent == nil {
		s.recent = map[RunID]struct{}{}
	}
	s.recent[id] = struct{}{}
	s.n++
	if len(s.recent) >= retiredRecentMax {
		s.seal()
	}
}

// seal turns the map into a block, and merges blocks of like size.
func (s *retiredSet) seal() {
	if len(s.recent) == 0 {
		return
	}
	ids := make([]RunID, 0, len(s.recent))
	for id := range s.recent {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	clear(s.recent)
	s.blocks = append(s.blocks, packBlock(ids))
	for n := len(s.blocks); n >= 2 && s.blocks[n-1].len() >= s.blocks[n-2].len() && s.blocks[n-2].len() < retiredBlockMax; n = len(s.blocks) {
		merged := mergeBlocks(s.blocks[n-2], s.blocks[n-1])
		s.blocks = append(s.blocks[:n-2], merged)
	}
}

func mergeBlocks(a, b *retiredBlock) *retiredBlock {
	ids := make([]RunID, 0, a.len()+b.len())
	i, j := 0, 0
	for i < a.len() || j < b.len() {
		if j == b.len() || (i < a.len() && a.at(i) < b.at(j)) {
			ids = append(ids, a.at(i))
			i++
		} else {
			ids = append(ids, b.at(j))
			j++
		}
	}
	return packBlock(ids)
}

// frozen seals s and returns its blocks, which hold every id and never change.
func (s *retiredSet) frozen() []*retiredBlock {
	s.seal()
	return slices.Clone(s.blocks) // a merge writes into s.blocks
}

// retiredEntryBytes is what an id waiting in the map costs beyond its bytes, roughly.
const retiredEntryBytes = 48

// bytes returns the bytes the set holds: each block's ids and offsets, and each id
// in the map with its entry's share.
func (s *retiredSet) bytes() int {
	n := 0
	for _, b := range s.blocks {
		n += len(b.data) + 4*len(b.offs)
	}
	for id := range s.recent {
		n += len(id) + retiredEntryBytes
	}
	return n
}
