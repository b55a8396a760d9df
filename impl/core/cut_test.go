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
// (gated admits, approvals, rejections, releases, completions, cancels, fences,
// timeouts and retirements) is frequent while a cut is taken.
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
		if rng.IntN(2) == 0 {
			c.Description, c.ArgsDigest = fmt.Sprint("what ", now), digest
		}
	case p < 62:
		c.Op, c.Decision = core.OpDecide, core.Decision(1+rng.IntN(2))
		if len(v.Pending) > 0 {
			c.Key = v.Pending[rng.IntN(len(v.Pending))]
		}
		if rng.IntN(2) == 0 {
			c.Reason = fmt.Sprint("why ", now) // a new note: the cut keeps the one it saw
		}
	case p < 80:
		c.Op, c.Outcome, c.Result = core.OpComplete, core.Outcome(1+rng.IntN(2)), fmt.Sprint(rng.IntN(2))
	case p < 84:
		c.Op = core.OpCancel
	case p < 90:
		c.Op = core.OpFence
	case p < 94:
		c.Op = core.OpTimeout
	case p < 96:
		c.Op = core.OpRetire
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
		buf := appendHeader(cut)
		for takes := 0; ; takes++ {
			require.LessOrEqual(t, takes, entries, "seed %d: more pieces than entries", seed)
			for range rng.IntN(30) {
				step()
			}
			if !cut.Take(rng.IntN(6)) {
				break
			}
			for calls, more := 0, true; more; calls++ {
				require.Less(t, calls, appendCallsMax, "seed %d: AppendTaken makes no progress", seed)
				buf, more = cut.AppendTaken(buf, rng.IntN(4))
				for range rng.IntN(3) {
					step()
				}
			}
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

// TestCutTakes: Take copies about budget entries (at least one): whole runs while
// they fit; a run that does not fit from the next Take on, alone and a slice at a
// time; nothing once the cut is taken or ended.
func TestCutTakes(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for r := 0; r < 7; r++ { // run-0 to run-3 hold 1+3 entries, run-4 to run-6 one
		id := core.RunID(fmt.Sprint("run-", r))
		_, err := open(g, id, 0)
		require.NoError(t, err)
		for k := 0; r < 4 && k < 3; k++ {
			_, err := admit(g, id, core.Key(fmt.Sprint("k", k)), 1, false, 0)
			require.NoError(t, err)
		}
	}
	cut := g.BeginCut()
	for _, step := range []struct {
		budget, entries int
		why             string
	}{
		{0, 1, "budget 0 takes one entry: the head of run-0, which does not fit"},
		{4, 4, "the rest of run-0 (a Take copies nothing but a slice)"},
		{5, 8, "run-1 fits; run-2 does not fit what is left and waits for the next Take"},
		{2, 10, "run-2's head and one effect"},
		{3, 12, "the rest of run-2"},
		{6, 18, "run-3, run-4 and run-5 fill a budget of 6 exactly"},
		{1, 19, "run-6"},
	} {
		require.True(t, cut.Take(step.budget), step.why)
		require.Equal(t, step.entries, cut.Entries(), step.why)
	}
	require.False(t, cut.Take(100), "every run is taken")
	require.Equal(t, 19, cut.Entries())
	cut.End()

	cut = g.BeginCut()
	require.True(t, cut.Take(2))
	cut.End()
	require.False(t, cut.Take(100), "an ended cut takes nothing")
	require.Equal(t, 2, cut.Entries(), "run-0's head and one effect")
}

// TestCutCopiesALargeRunInSlices: a run copied a slice at a time is the run as it
// was when the cut began, whatever changes between the slices: keys changed before
// and after their slice, deleted by a fence and made again, and new keys. Which keys
// a slice meets first follows the map's order, so the test takes the cut many times.
func TestCutCopiesALargeRunInSlices(t *testing.T) {
	for range 50 {
		cutLargeRunInSlices(t)
	}
}

// TestCutEndsInASlice: a cut ended while it copies a run in slices takes nothing
// more, and the gate begins another that copies the run from its start.
func TestCutEndsInASlice(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "big", 0)
	require.NoError(t, err)
	for k := 0; k < 10; k++ {
		_, err := admit(g, "big", core.Key(fmt.Sprint("k", k)), 1, false, 0)
		require.NoError(t, err)
	}
	cut := g.BeginCut()
	require.True(t, cut.Take(4))
	require.Equal(t, 4, cut.Entries())
	cut.End()
	require.False(t, cut.Take(4))
	cut = g.BeginCut()
	buf := appendHeader(cut)
	for cut.Take(4) {
		buf = appendTaken(t, cut, buf)
	}
	cut.End()
	require.Equal(t, 11, cut.Entries(), "the run's head and its 10 effects")
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(buf))
	require.Len(t, h.Effects("big"), 10)
}

func cutLargeRunInSlices(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "big", 0)
	require.NoError(t, err)
	for k := 0; k < 40; k++ { // k20 waits for approval: k21 to k39 are held with it
		_, err := admit(g, "big", core.Key(fmt.Sprint("k", k)), 1, k == 20, 0)
		require.NoError(t, err)
	}
	want, err := g.MarshalBinary()
	require.NoError(t, err)
	cut := g.BeginCut()
	buf := appendHeader(cut)
	changes := []func(){
		func() { _, err = complete(g, "big", "k1", core.OutcomeOK, "r") },
		func() { _, err = fence(g, "big") }, // deletes k20 to k39, copied or not
		func() {
			for k := 20; k < 40 && err == nil; k++ {
				_, err = admit(g, "big", core.Key(fmt.Sprint("k", k)), 2, false, 0)
			}
		},
		func() { _, err = admit(g, "big", "new", 2, false, 0) },
		func() { _, err = complete(g, "big", "k2", core.OutcomeFailed, "") },
		func() { _, err = admit(g, "big", "k30", 2, true, 0) },
	}
	for i := 0; cut.Take(7); i++ {
		require.Equal(t, min(41, 7*(i+1)), cut.Entries(), "a Take copies its budget")
		if i < len(changes) {
			changes[i]()
			require.NoError(t, err, "change %d", i)
		}
		buf = appendTaken(t, cut, buf)
	}
	cut.End()
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(buf))
	require.NoError(t, h.CheckInvariants())
	got, err := h.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, 41, cut.Entries())
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
	buf := appendHeader(cut)
	_, err := admit(g, "b", "k1", 1, false, 0)
	require.NoError(t, err)
	_, err = admit(g, "b", "k2", 1, false, 0)
	require.NoError(t, err)
	require.True(t, cut.Take(1))
	_, err = cancel(g, "a")
	require.NoError(t, err)
	_, err = admit(g, "a", "late", 2, false, 0)
	require.NoError(t, err)
	buf = appendTaken(t, cut, buf)
	_, err = open(g, "c", 0)
	require.NoError(t, err)
	require.True(t, cut.Take(100))
	buf = appendTaken(t, cut, buf)
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

// TestCutAppendsInBudgets: AppendTaken appends budget entries at a time (at least
// one), a run's head counting as one, and says when the piece is encoded; a piece
// encoded in budgets is the piece encoded at once.
func TestCutAppendsInBudgets(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, id := range []core.RunID{"a", "b"} {
		_, err := open(g, id, 0)
		require.NoError(t, err)
		for k := 0; k < 3; k++ {
			_, err := admit(g, id, core.Key(fmt.Sprint("k", k)), 1, false, 0)
			require.NoError(t, err)
		}
	}
	whole, err := g.MarshalBinary()
	require.NoError(t, err)
	for _, budget := range []int{0, 1, 2, 3, 4, 7, 8, 100} {
		cut := g.BeginCut()
		require.True(t, cut.Take(100))
		buf := appendHeader(cut)
		calls := 0
		for more := true; more; calls++ {
			require.Less(t, calls, appendCallsMax, "budget %d: AppendTaken makes no progress", budget)
			buf, more = cut.AppendTaken(buf, budget)
		}
		require.Equal(t, (8+max(budget, 1)-1)/max(budget, 1), calls, "budget %d: 2 heads and 6 effects", budget)
		buf, more := cut.AppendTaken(buf, budget)
		require.False(t, more, "budget %d: the piece is encoded", budget)
		require.False(t, cut.Take(100))
		cut.End()
		h := core.New(core.DefaultLimits())
		require.NoError(t, h.UnmarshalBinary(buf), "budget %d", budget)
		got, err := h.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, whole, got, "budget %d", budget)
	}
}

// appendCallsMax bounds the AppendTaken calls of one piece in these tests: a piece
// that is never done fails the test instead of hanging it.
const appendCallsMax = 10_000

// appendTaken encodes the whole piece Take copied last.
func appendTaken(t *testing.T, cut *core.Cut, buf []byte) []byte {
	for calls, more := 0, true; more; calls++ {
		require.Less(t, calls, appendCallsMax, "AppendTaken makes no progress")
		buf, more = cut.AppendTaken(buf, 3)
	}
	return buf
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

// appendHeader is a cut's header and every retired id, a few at a time, as the node
// writes them.
func appendHeader(cut *core.Cut) []byte {
	buf := cut.AppendHeader(nil)
	for more := true; more; {
		buf, more = cut.AppendRetired(buf, 7)
	}
	return buf
}
