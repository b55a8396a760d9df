package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// nextCommand returns a random command that is likely to change g: over 8 runs and 6
// keys, at the run's epoch, deciding its pending keys, so that every kind of change
// (gated admits, approvals, rejections, releases, completions, cancels, fences and
// timeouts) is frequent while a cut is taken.
func nextCommand(g *core.Gate, rng *rand.Rand, now core.Time) core.Command {
	run := core.RunID(fmt.Sprint("r", rng.IntN(8)))
	c := core.Command{Run: run, Key: core.Key(fmt.Sprint("k", rng.IntN(6))), Now: now}
	v, _, err := g.Status(run, "")
	if err != nil || rng.IntN(20) == 0 {
		c.Op = core.OpOpen
		if rng.IntN(3) == 0 {
			c.Deadline = now + core.Time(1+rng.IntN(200))
		}
		return c
	}
	c.Epoch = v.Epoch
	switch p := rng.IntN(100); {
	case p < 40:
		c.Op, c.Gated = core.OpAdmit, rng.IntN(3) == 0
		if rng.IntN(10) == 0 {
			c.Epoch = uint64(1 + rng.IntN(3))
		}
	case p < 62:
		c.Op, c.Decision = core.OpDecide, core.Decision(1+rng.IntN(2))
		if len(v.Pending) > 0 {
			c.Key = v.Pending[rng.IntN(len(v.Pending))]
		}
	case p < 80:
		c.Op, c.Outcome, c.Result = core.OpComplete, core.Outcome(1+rng.IntN(2)), fmt.Sprint(rng.IntN(2))
	case p < 84:
		c.Op = core.OpCancel
	case p < 90:
		c.Op = core.OpFence
	case p < 94:
		c.Op = core.OpTimeout
	default:
		c.Op = core.OpStatus
	}
	return c
}

// TestCutIsTheStateAtItsBeginning: whatever steps come between BeginCut, the Takes and
// End, the cut decodes to the state at BeginCut, and counts its entries; a gate
// restored from a snapshot too.
func TestCutIsTheStateAtItsBeginning(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		g := core.New(core.DefaultLimits())
		now := core.Time(0)
		step := func() {
			now++
			g.Step(nextCommand(g, rng, now))
		}
		for range rng.IntN(300) {
			step()
		}
		want, err := g.MarshalBinary()
		require.NoError(t, err)
		if seed%2 == 0 {
			// A gate restored from a snapshot cuts like the one that wrote it.
			g = core.New(core.DefaultLimits())
			require.NoError(t, g.UnmarshalBinary(want))
			require.NoError(t, g.CheckInvariants(), "seed %d: restored", seed)
		}
		entries := g.Entries()

		cut := g.BeginCut()
		buf := cut.AppendHeader(nil)
		for takes := 0; ; takes++ {
			require.LessOrEqual(t, takes, g.Len(), "seed %d: more pieces than runs", seed)
			for range rng.IntN(30) {
				step()
			}
			if !cut.Take(rng.IntN(6)) {
				break
			}
			buf = cut.AppendTaken(buf)
		}
		for range 100 {
			step()
		}
		cut.End()

		h := core.New(core.DefaultLimits())
		require.NoError(t, h.UnmarshalBinary(buf), "seed %d", seed)
		require.NoError(t, h.CheckInvariants(), "seed %d: restored from the cut", seed)
		got, err := h.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, want, got, "seed %d: the cut is not the state at BeginCut", seed)
		require.Equal(t, entries, cut.Entries(), "seed %d: entries", seed)
	}
}

// TestCutTakes: Take copies at least one run whatever its budget, about budget
// entries, and nothing once the cut is taken or ended.
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
	require.True(t, cut.Take(0))
	require.Equal(t, 4, cut.Entries(), "budget 0 still takes a run (of 1+3 entries)")
	require.True(t, cut.Take(4))
	require.Equal(t, 8, cut.Entries(), "a run of 1+3 entries fills a budget of 4")
	require.True(t, cut.Take(5))
	require.Equal(t, 16, cut.Entries(), "a budget of 5 takes a second run")
	require.False(t, cut.Take(100), "every run is taken")
	require.Equal(t, 16, cut.Entries())
	cut.End()

	cut = g.BeginCut()
	require.True(t, cut.Take(1))
	cut.End()
	require.False(t, cut.Take(100), "an ended cut takes nothing")
	require.Equal(t, 4, cut.Entries())
}

// TestCutCopiesOnWrite: a run changed before Take reaches it is taken as it was; a run
// taken already is not copied again; a run made during the cut is not in it; a piece
// stays as it was taken while the gate changes, until the next Take.
func TestCutCopiesOnWrite(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, id := range []core.RunID{"a", "b"} {
		_, err := open(g, id, 0)
		require.NoError(t, err)
	}
	cut := g.BeginCut()
	buf := cut.AppendHeader(nil)
	_, err := admit(g, "b", "k1", 1, false, 0)
	require.NoError(t, err)
	_, err = admit(g, "b", "k2", 1, false, 0)
	require.NoError(t, err)
	require.True(t, cut.Take(1))
	_, err = cancel(g, "a")
	require.NoError(t, err)
	_, err = admit(g, "a", "late", 2, false, 0)
	require.NoError(t, err)
	buf = cut.AppendTaken(buf)
	_, err = open(g, "c", 0)
	require.NoError(t, err)
	require.True(t, cut.Take(100))
	buf = cut.AppendTaken(buf)
	require.False(t, cut.Take(100), "the run made during the cut is not in it")
	cut.End()

	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(buf))
	require.Equal(t, []core.RunID{"a", "b"}, h.RunIDs())
	a, _, err := h.Status("a", "")
	require.NoError(t, err)
	require.Equal(t, core.RunActive, a.Status, "a's cancel came after the cut began")
	require.Empty(t, h.Effects("a"))
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
