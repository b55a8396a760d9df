package core_test

import (
	"fmt"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// TestDeadlineOne: a deadline is any positive time on the gate's clock (0 means none),
// so a deadline of 1 is a deadline: the run times out at 1 (Admit step 2, "at or past
// the deadline"), Expire(1) times it out, and a snapshot keeps it.
func TestDeadlineOne(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "r", 1)
	require.NoError(t, err)
	at, r, ok := g.NextDeadline()
	require.True(t, ok)
	require.Equal(t, core.Time(1), at)
	require.Equal(t, core.RunID("r"), r)

	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	at, r, ok = h.NextDeadline()
	require.True(t, ok, "the restored gate lost the deadline")
	require.Equal(t, core.Time(1), at)
	require.Equal(t, core.RunID("r"), r)
	require.Empty(t, timeoutDue(h, 0), "nothing is due before the deadline")
	require.Equal(t, []core.RunID{"r"}, timeoutDue(h, 1), "a run times out at its deadline")

	res, err := admit(g, "r", "k", 1, false, 1)
	require.NoError(t, err)
	require.Equal(t, core.AnswerDenied, res.Answer)
	require.Equal(t, core.ReasonTimedOut, res.Reason)
}

// TestExpireOrder: Expire times runs out earliest deadline first, and a gate restored
// from a snapshot does so in the same order as the gate it was taken from, ties
// included (the core is deterministic: the same commands give the same answers, and
// recovery goes through a snapshot).
func TestExpireOrder(t *testing.T) {
	g := core.New(core.DefaultLimits())
	deadlines := []struct {
		r  core.RunID
		at core.Time
	}{{"e", 20}, {"c", 10}, {"a", 30}, {"d", 20}, {"b", 20}, {"f", 5}, {"g", 40}}
	for _, d := range deadlines {
		_, err := open(g, d.r, d.at)
		require.NoError(t, err)
	}
	_, err := cancel(g, "g") // a final run has no deadline left
	require.NoError(t, err)
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))

	var first []core.RunID
	for _, gate := range []*core.Gate{g, h} {
		var order []core.RunID
		last := core.Time(0)
		for now := core.Time(0); now <= 50; now += 5 {
			for _, r := range timeoutDue(gate, now) {
				rv, _, err := gate.Status(r, "")
				require.NoError(t, err)
				require.Equal(t, core.RunTimedOut, rv.Status)
				require.LessOrEqual(t, rv.Deadline, now, "%s expired before its deadline", r)
				require.GreaterOrEqual(t, rv.Deadline, last, "%s expired after a later deadline", r)
				last = rv.Deadline
				order = append(order, r)
			}
		}
		require.Len(t, order, 6)
		if first == nil {
			first = order
		}
		require.Equal(t, first, order, "the restored gate expires in another order")
	}
	// Many runs whose id order disagrees with their deadline order, with ties: after a
	// restore, NextDeadline must still name the earliest deadline every time (the
	// restored heap is valid), in the same order as the original.
	g3, h3 := core.New(core.DefaultLimits()), core.New(core.DefaultLimits())
	for i := 0; i < 40; i++ {
		r := core.RunID(fmt.Sprintf("r%02d", i))
		_, err := open(g3, r, core.Time((i*7919)%13+1))
		require.NoError(t, err)
	}
	snap, _ = g3.MarshalBinary()
	require.NoError(t, h3.UnmarshalBinary(snap))
	last := core.Time(0)
	for i := 0; i < 40; i++ {
		at, r, ok := g3.NextDeadline()
		hat, hr, hok := h3.NextDeadline()
		require.True(t, ok)
		require.Equal(t, []any{at, r, ok}, []any{hat, hr, hok}, "step %d: the restored gate disagrees", i)
		require.GreaterOrEqual(t, at, last, "step %d: a later deadline came first", i)
		last = at
		_, err := timeout(g3, r)
		require.NoError(t, err)
		_, err = timeout(h3, r)
		require.NoError(t, err)
	}
	// Within one Expire call, ties too come out in one order on both gates.
	g2, h2 := core.New(core.DefaultLimits()), core.New(core.DefaultLimits())
	for _, d := range deadlines {
		_, err := open(g2, d.r, 7)
		require.NoError(t, err)
	}
	snap, _ = g2.MarshalBinary()
	require.NoError(t, h2.UnmarshalBinary(snap))
	require.Equal(t, timeoutDue(g2, 7), timeoutDue(h2, 7))
}
