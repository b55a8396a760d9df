package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// cutCommands is randomCommands over more runs, so that a cut sees runs made, changed
// and left alone after it began.
func cutCommands(rng *rand.Rand, n int) []core.Command {
	cmds := randomCommands(rng, n)
	for i := range cmds {
		cmds[i].Run = core.RunID(fmt.Sprint("r", rng.IntN(8)))
	}
	return cmds
}

// TestCutIsTheStateAtItsBeginning: whatever steps come between BeginCut, the Takes and
// End, the cut decodes to the state at BeginCut, and counts its entries; a gate
// restored from a snapshot too.
func TestCutIsTheStateAtItsBeginning(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		g := core.New(core.DefaultLimits())
		cmds := cutCommands(rng, 400)
		before := rng.IntN(300)
		for _, c := range cmds[:before] {
			g.Step(c)
		}
		want, err := g.MarshalBinary()
		require.NoError(t, err)
		if seed%2 == 0 {
			// A gate restored from a snapshot cuts like the one that wrote it.
			g = core.New(core.DefaultLimits())
			require.NoError(t, g.UnmarshalBinary(want))
		}
		entries := g.Entries()

		cut := g.BeginCut()
		buf := cut.AppendHeader(nil)
		rest := cmds[before:]
		for {
			for n := rng.IntN(4); n > 0 && len(rest) > 0; n-- {
				g.Step(rest[0])
				rest = rest[1:]
			}
			runs := cut.Take(rng.IntN(6))
			if runs == nil {
				break
			}
			buf = cut.AppendRuns(buf, runs)
		}
		for _, c := range rest {
			g.Step(c)
		}
		cut.End()

		h := core.New(core.DefaultLimits())
		require.NoError(t, h.UnmarshalBinary(buf), "seed %d", seed)
		got, err := h.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d: the cut is not the state at BeginCut", seed)
		require.Equal(t, entries, cut.Entries(), "seed %d: entries", seed)
	}
}

// TestCutTakes: Take returns at least one run whatever its budget, about budget
// entries, and nil once the cut is taken or ended.
func TestCutTakes(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for r := 0; r < 4; r++ {
		id := core.RunID(fmt.Sprint("run-", r))
		_, err := open(g, id, 0)
		require.NoError(t, err)
		for k := 0; k < 3; k++ {
			_, err := admit(g, id, core.Key(fmt.Sprint("k", k)), 1, false, 0)
			require.NoError(t, err)
		}
	}
	cut := g.BeginCut()
	require.Len(t, cut.Take(0), 1, "budget 0 still takes a run")
	require.Len(t, cut.Take(4), 1, "a run of 1+3 entries fills a budget of 4")
	require.Len(t, cut.Take(5), 2)
	require.Nil(t, cut.Take(100), "every run is taken")
	require.Equal(t, 16, cut.Entries())
	cut.End()

	cut = g.BeginCut()
	require.Len(t, cut.Take(1), 1)
	cut.End()
	require.Nil(t, cut.Take(100), "an ended cut takes nothing")
	require.Equal(t, 4, cut.Entries())
}

// TestCutCopiesOnWrite: a run changed before Take reaches it is taken as it was; a run
// taken already is not copied again; a run made during the cut is not in it.
func TestCutCopiesOnWrite(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, id := range []core.RunID{"a", "b"} {
		_, err := open(g, id, 0)
		require.NoError(t, err)
	}
	cut := g.BeginCut()
	_, err := admit(g, "b", "k1", 1, false, 0)
	require.NoError(t, err)
	_, err = admit(g, "b", "k2", 1, false, 0)
	require.NoError(t, err)
	taken := cut.Take(1)
	require.Len(t, taken, 1)
	require.Equal(t, core.RunID("a"), taken[0].ID)
	_, err = cancel(g, "a")
	require.NoError(t, err)
	_, err = open(g, "c", 0)
	require.NoError(t, err)
	taken = append(taken, cut.Take(100)...)
	require.Len(t, taken, 2, "the run made during the cut is not in it")
	require.Nil(t, cut.Take(100))
	cut.End()

	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(cut.AppendRuns(cut.AppendHeader(nil), taken)))
	require.Equal(t, []core.RunID{"a", "b"}, h.RunIDs())
	a, _, err := h.Status("a", "")
	require.NoError(t, err)
	require.Equal(t, core.RunActive, a.Status, "a was taken before its cancel")
	require.Empty(t, h.Effects("b"), "b's admits came after the cut began")
	require.Len(t, g.Effects("b"), 2)
}

// TestCutIsOneAtATime: a second BeginCut, or an UnmarshalBinary, during a cut is a
// bug of the caller; after End the gate begins another.
func TestCutIsOneAtATime(t *testing.T) {
	g := core.New(core.DefaultLimits())
	cut := g.BeginCut()
	require.Panics(t, func() { g.BeginCut() })
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	require.Panics(t, func() { _ = g.UnmarshalBinary(snap) })
	cut.End()
	cut.End()
	require.NoError(t, g.UnmarshalBinary(snap))
	g.BeginCut().End()
}
