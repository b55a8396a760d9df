package core

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkRetiredSet: the set holds exactly want; fewer than retiredRecentMax ids wait
// in the map; each block is sorted with no repeat, and blocks shrink strictly from
// the first to the last (the binary counter that bounds their number) but for full
// ones (retiredBlockMax), which come first; bytes counts exactly what the blocks and
// the map hold.
func checkRetiredSet(t *testing.T, s *retiredSet, want []RunID) {
	t.Helper()
	require.Less(t, len(s.recent), retiredRecentMax)
	n, bytes := len(s.recent), 0
	for id := range s.recent {
		bytes += len(id) + retiredEntryBytes
	}
	for i, b := range s.blocks {
		ids := make([]RunID, b.len())
		for j := range ids {
			ids[j] = b.at(j)
		}
		require.True(t, slices.IsSorted(ids), "block %d unsorted", i)
		require.Equal(t, len(ids), len(slices.Compact(slices.Clone(ids))), "block %d repeats an id", i)
		if i > 0 && s.blocks[i-1].len() < retiredBlockMax {
			require.Greater(t, s.blocks[i-1].len(), b.len(), "blocks %d and %d", i-1, i)
		}
		n += b.len()
		bytes += len(b.data) + 4*len(b.offs)
	}
	require.Equal(t, len(want), n)
	require.Equal(t, len(want), s.len())
	require.Equal(t, bytes, s.bytes())
	for _, id := range want {
		require.True(t, s.has(id), "%s", id)
	}
	require.False(t, s.has("never-retired"))
}

// TestRetiredSetKeepsItsShape: the set's shape holds after every add, with seals in
// between (as each cut's BeginCut does), for ids in random order.
func TestRetiredSetKeepsItsShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var s retiredSet
	var want []RunID
	for i, p := range rng.Perm(5000) {
		id := RunID(fmt.Sprintf("id-%05d", p))
		s.add(id)
		want = append(want, id)
		if i%97 == 0 || i%1000 == 999 {
			checkRetiredSet(t, &s, want)
		}
		if i%1500 == 0 {
			frozen := s.frozen()
			require.Empty(t, s.recent)
			require.Equal(t, s.blocks, frozen)
			checkRetiredSet(t, &s, want)
		}
	}
	checkRetiredSet(t, &s, want)
}

// TestRetiredSetIsABinaryCounter: with no seal from outside, ids wait in the map
// until retiredRecentMax of them become a block, and blocks merge as the bits of a
// binary counter carry: after k full blocks' worth there are popcount(k) blocks, of
// sizes the bits of k times retiredRecentMax.
func TestRetiredSetIsABinaryCounter(t *testing.T) {
	var s retiredSet
	for i := range 9 * retiredRecentMax {
		s.add(RunID(fmt.Sprintf("id-%06d", i)))
		added := i + 1
		require.Equal(t, added%retiredRecentMax, len(s.recent), "after %d ids", added)
		k := added / retiredRecentMax
		require.Equal(t, bits.OnesCount(uint(k)), len(s.blocks), "after %d ids", added)
		rest := k
		for _, b := range s.blocks {
			top := 1 << (bits.Len(uint(rest)) - 1)
			require.Equal(t, top*retiredRecentMax, b.len(), "after %d ids", added)
			rest -= top
		}
	}
}

// TestRetiredBlocksStopAtTheirMost: a block of retiredBlockMax ids merges no more;
// the ids after it count up as before.
func TestRetiredBlocksStopAtTheirMost(t *testing.T) {
	defer func(old int) { retiredBlockMax = old }(retiredBlockMax)
	retiredBlockMax = 4 * retiredRecentMax
	var s retiredSet
	var want []RunID
	for i := range 11 * retiredRecentMax {
		id := RunID(fmt.Sprintf("id-%06d", i))
		s.add(id)
		want = append(want, id)
	}
	sizes := make([]int, len(s.blocks))
	for i, b := range s.blocks {
		sizes[i] = b.len() / retiredRecentMax
	}
	require.Equal(t, []int{4, 4, 2, 1}, sizes)
	checkRetiredSet(t, &s, want)
}
