package core_test

import (
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// The bytes the state's budget counts: a run's id and 256, an effect's key, result
// and 96, and a gated effect's note, its texts and 64 (impl/core/budget.go;
// docs/server.md says so).
const runCost, effectCost, noteCost = 256, 96, 64

// TestStateBytesCounts: StateBytes follows every change: a run, a new effect, a
// result; a fence or cancel drops what was held; retirement drops the run; a restored
// snapshot counts the same.
func TestStateBytesCounts(t *testing.T) {
	g := core.New(core.DefaultLimits())
	want := int64(0)
	step := func(what string, c core.Command, grow int64) {
		t.Helper()
		require.NoError(t, g.Step(c).Err, what)
		want += grow
		require.Equal(t, want, g.StateBytes(), what)
		require.NoError(t, g.CheckInvariants(), what)
	}
	step("open", core.Command{Op: core.OpOpen, Run: "run"}, 3+runCost)
	step("admit a new key", core.Command{Op: core.OpAdmit, Run: "run", Key: "ab", Epoch: 1}, 2+effectCost)
	step("admit it again", core.Command{Op: core.OpAdmit, Run: "run", Key: "ab", Epoch: 1}, 0)
	step("complete with a result", core.Command{Op: core.OpComplete, Run: "run", Key: "ab", Outcome: core.OutcomeOK, Result: "12345"}, 5)
	step("hold a gated key", core.Command{Op: core.OpAdmit, Run: "run", Key: "g", Epoch: 1, Gated: true}, 1+effectCost+noteCost)
	step("fence drops it", core.Command{Op: core.OpFence, Run: "run"}, -(1 + effectCost + noteCost))
	step("hold one with a note", core.Command{Op: core.OpAdmit, Run: "run", Key: "n", Epoch: 2, Gated: true,
		Description: "abc", ArgsDigest: digest}, 1+effectCost+noteCost+3+int64(len(digest)))
	step("ask it again: nothing new", core.Command{Op: core.OpAdmit, Run: "run", Key: "n", Epoch: 2, Gated: true,
		Description: "other"}, 0)
	step("approve with a reason", core.Command{Op: core.OpDecide, Run: "run", Key: "n", Decision: core.Approve, Reason: "ok!"}, 3)
	step("admit keeps the note", core.Command{Op: core.OpAdmit, Run: "run", Key: "n", Epoch: 2}, 0)
	step("complete adds the result", core.Command{Op: core.OpComplete, Run: "run", Key: "n", Outcome: core.OutcomeOK, Result: "r"}, 1)
	step("hold a gated key to reject", core.Command{Op: core.OpAdmit, Run: "run", Key: "j", Epoch: 2, Gated: true}, 1+effectCost+noteCost)
	step("reject with a reason", core.Command{Op: core.OpDecide, Run: "run", Key: "j", Decision: core.Reject, Reason: "no"}, 2)
	step("reject it again: a repeat", core.Command{Op: core.OpDecide, Run: "run", Key: "j", Decision: core.Reject, Reason: "again"}, 0)
	step("a tombstone", core.Command{Op: core.OpCancel, Run: "t"}, 1+runCost)
	snap := must(g.MarshalBinary())
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	require.Equal(t, want, h.StateBytes(), "a restored gate counts the same")
	step("cancel", core.Command{Op: core.OpCancel, Run: "run"}, 0)
	step("retire", core.Command{Op: core.OpRetire, Run: "run"}, -(3 + runCost + 2 + 5 + effectCost +
		1 + effectCost + noteCost + 3 + int64(len(digest)) + 3 + 1 + 1 + effectCost + noteCost + 2))
	require.Equal(t, int64(1+runCost), g.StateBytes())
}

// TestStateBudgetRefuses: at its budget the state grows no more: open, a tombstone, a
// new effect and a result are refused with state_full and change nothing; what adds
// nothing (a replay, a result-less complete, a decision, a cancel) still goes; a
// retirement makes room again.
func TestStateBudgetRefuses(t *testing.T) {
	l := core.DefaultLimits()
	l.StateBytesMax = 2*(1+runCost) + 2*(1+effectCost) + noteCost // runs a and b, effects k and g (gated)
	g := core.New(l)
	must(open(g, "a", 0))
	must(admit(g, "a", "k", 1, false, 0))
	must(admit(g, "a", "h", 1, true, 0)) // held, pending: nothing can be admitted
	must(cancel(g, "a"))                 // drops h
	must(open(g, "b", 0))
	must(admit(g, "b", "g", 1, true, 0))
	require.Equal(t, l.StateBytesMax, g.StateBytes(), "the state is at its budget")

	before := must(g.MarshalBinary())
	for _, c := range []core.Command{
		{Op: core.OpOpen, Run: "c"},
		{Op: core.OpCancel, Run: "c"},
		{Op: core.OpAdmit, Run: "b", Key: "new", Epoch: 1},
		{Op: core.OpComplete, Run: "a", Key: "k", Outcome: core.OutcomeOK, Result: "x"},
	} {
		require.ErrorIs(t, g.Step(c).Err, core.ErrStateFull, "%s %s %s", c.Op, c.Run, c.Key)
		require.Equal(t, before, must(g.MarshalBinary()), "a refusal changed the state")
	}
	for _, c := range []core.Command{
		{Op: core.OpAdmit, Run: "b", Key: "g", Epoch: 1},
		{Op: core.OpComplete, Run: "a", Key: "k", Outcome: core.OutcomeOK},
		{Op: core.OpDecide, Run: "b", Key: "g", Decision: core.Approve},
		{Op: core.OpAdmit, Run: "b", Key: "g", Epoch: 1},
		{Op: core.OpCancel, Run: "b"},
	} {
		require.NoError(t, g.Step(c).Err, "%s %s %s", c.Op, c.Run, c.Key)
	}
	_, _, err := retire(g, "a")
	require.NoError(t, err)
	_, err = open(g, "c", 0)
	require.NoError(t, err, "a retirement makes room")
}

// TestStateBytesMaxDefault is what docs/server.md documents for --max-state-bytes.
func TestStateBytesMaxDefault(t *testing.T) {
	require.Equal(t, int64(1<<30), core.DefaultLimits().StateBytesMax)
}
