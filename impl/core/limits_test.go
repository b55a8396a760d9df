package core_test

import (
	"math"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// TestSetLimits: limits the state already exceeds are refused and change nothing, one
// case per count; limits the state meets exactly are taken and bound what comes next.
func TestSetLimits(t *testing.T) {
	build := func() *core.Gate {
		g := core.New(core.DefaultLimits())
		for _, c := range []core.Command{
			{Op: core.OpOpen, Run: "a"}, {Op: core.OpOpen, Run: "b"}, {Op: core.OpCancel, Run: "t"},
			{Op: core.OpAdmit, Run: "a", Key: "k1", Epoch: 1}, {Op: core.OpAdmit, Run: "a", Key: "k2", Epoch: 1, Gated: true},
			{Op: core.OpAdmit, Run: "b", Key: "k3", Epoch: 1, Gated: true},
			{Op: core.OpCancel, Run: "r"}, {Op: core.OpRetire, Run: "r"},
		} {
			require.NoError(t, g.Step(c).Err, "%v", c)
		}
		return g
	}
	exact := func(g *core.Gate) core.Limits {
		l := core.DefaultLimits()
		l.RunsMax, l.RetiredMax, l.KeysPerRunMax, l.PendingPerRunMax, l.StateBytesMax = 3, 1, 2, 1, g.StateBytes()
		return l
	}
	for _, tc := range []struct {
		name  string
		lower func(*core.Limits)
		want  string
	}{
		{"runs", func(l *core.Limits) { l.RunsMax-- }, "3 runs, over the limit of 2"},
		{"retired runs", func(l *core.Limits) { l.RetiredMax-- }, "1 retired runs, over the limit of 0"},
		{"state bytes", func(l *core.Limits) { l.StateBytesMax-- }, "state bytes, over the limit of"},
		{"effects of a run", func(l *core.Limits) { l.KeysPerRunMax-- }, `2 effects in run "a", over the limit of 1`},
		{"open approvals of a run", func(l *core.Limits) { l.PendingPerRunMax-- }, `1 open approvals in run "a", over the limit of 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := build()
			before := must(g.MarshalBinary())
			l := exact(g)
			tc.lower(&l)
			err := g.SetLimits(l)
			require.ErrorIs(t, err, core.ErrOverLimits)
			require.ErrorContains(t, err, tc.want)
			require.Equal(t, core.DefaultLimits(), g.Limits(), "limits unchanged")
			require.Equal(t, before, must(g.MarshalBinary()), "state unchanged")
		})
	}
	t.Run("met exactly", func(t *testing.T) {
		g := build()
		l := exact(g)
		l.KeyBytesMax = 1 // lower than keys the state holds: bounds what comes next only
		require.NoError(t, g.SetLimits(l))
		require.Equal(t, l, g.Limits())
		require.NoError(t, g.CheckInvariants())
		require.ErrorIs(t, g.Step(core.Command{Op: core.OpOpen, Run: "c"}).Err, core.ErrTooManyRuns)
		require.ErrorIs(t, g.Step(core.Command{Op: core.OpAdmit, Run: "b", Key: "k", Epoch: 1}).Err, core.ErrStateFull)
		require.ErrorIs(t, g.Step(core.Command{Op: core.OpAdmit, Run: "a", Key: "k1", Epoch: 1}).Err, core.ErrKeyTooLong)
	})
	t.Run("unbounded takes any state", func(t *testing.T) {
		g := build()
		require.NoError(t, g.SetLimits(core.Unbounded()))
		require.NoError(t, g.CheckInvariants())
		u := core.Unbounded()
		for _, l := range []int{u.RunsMax, u.RetiredMax, u.KeysPerRunMax, u.PendingPerRunMax, u.RunBytesMax, u.KeyBytesMax, u.ResultBytesMax} {
			require.Equal(t, math.MaxInt, l, "the largest an int holds")
		}
		require.Equal(t, int64(math.MaxInt64), u.StateBytesMax)
	})
}
