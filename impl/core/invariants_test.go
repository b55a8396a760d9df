package core_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
)

// TestInvariantsHoldOnEveryHistory: CheckInvariants finds nothing after any random
// history of commands (with the invariants tag, Step also checks after every one).
func TestInvariantsHoldOnEveryHistory(t *testing.T) {
	randomHistories(100, 3, 200, func(seed uint64, g *core.Gate, cmds []core.Command) {
		for i, c := range cmds {
			g.Step(c)
			if i%20 == 19 {
				require.NoError(t, g.CheckInvariants(), "seed %d, after command %d", seed, i)
			}
		}
		timeoutDue(g, 1<<40)
		require.NoError(t, g.CheckInvariants(), "seed %d, all deadlines passed", seed)
	})
}

// TestInvariantsCatchBrokenStates: each state below breaks one invariant of the spec
// or one limit (the snapshot decoder checks the encoding, not the invariants), and
// CheckInvariants refuses it.
func TestInvariantsCatchBrokenStates(t *testing.T) {
	var (
		cancelled = byte(core.RunCancelled)
		admitted  = byte(core.EffectAdmitted)
		completed = byte(core.EffectCompleted)
		rejected  = byte(core.EffectRejected)
		released  = byte(core.EffectReleased)
		ok        = byte(core.OutcomeOK)
	)
	good := core.New(core.DefaultLimits())
	require.NoError(t, good.UnmarshalBinary(snapshotOneEffect))
	require.NoError(t, good.CheckInvariants(), "the fixture itself is a valid state")
	// settled is the fixture's effect as it is once admitted: no epoch, not gated, not pending.
	settled := func(status byte) map[int]byte {
		return map[int]byte{offEffectStatus: status, offEffEpoch: 0, offGated: 0, offPending: 0}
	}
	with := func(m map[int]byte, off int, v byte) map[int]byte { m[off] = v; return m }
	limits := func(f func(*core.Limits)) core.Limits { l := core.DefaultLimits(); f(&l); return l }
	cases := []struct {
		name    string
		patches map[int]byte
		result  string // appended as the effect's result
		limits  core.Limits
	}{
		{name: "PendingExact: an undecided gated held effect not pending", patches: map[int]byte{offPending: 0}},
		{name: "PendingExact: a pending key already approved", patches: map[int]byte{offApproved: 1}},
		{name: "PendingExact: a pending key that is admitted", patches: with(settled(admitted), offPending, 1)},
		{name: "NoOrphanHold: a held effect with no pending approval", patches: map[int]byte{offGated: 0, offPending: 0}},
		{name: "CurrentEpoch: a held effect of another epoch", patches: map[int]byte{offEffEpoch: 2}},
		{name: "RunShape: an active run at epoch 0", patches: map[int]byte{offRunEpoch: 0}},
		{name: "RunShape: a final run at epoch 1", patches: map[int]byte{offRunStatus: cancelled}},
		{name: "RunShape: a final run with a pending approval", patches: map[int]byte{offRunStatus: cancelled, offRunEpoch: 2}},
		{name: "EffectShape: an outcome before completion", patches: map[int]byte{offOutcome: ok}},
		{name: "EffectShape: a completed effect without its outcome", patches: settled(completed)},
		{name: "EffectShape: a result before completion", patches: settled(admitted), result: "x"},
		{name: "EffectShape: a rejected effect keeps its epoch", patches: map[int]byte{offEffectStatus: rejected, offPending: 0}},
		{name: "EffectShape: a rejected effect that was approved", patches: with(settled(rejected), offApproved, 1)},
		{name: "EffectShape: an approved effect that is not gated", patches: with(with(settled(released), offEffEpoch, 1), offApproved, 1)},
		{name: "EffectShape: a released gated effect without approval", patches: map[int]byte{offEffectStatus: released, offPending: 0}},
		{name: "limit: more runs than RunsMax", limits: limits(func(l *core.Limits) { l.RunsMax = 0 })},
		{name: "limit: more effects than KeysPerRunMax", limits: limits(func(l *core.Limits) { l.KeysPerRunMax = 0 })},
		{name: "limit: more approvals than PendingPerRunMax", limits: limits(func(l *core.Limits) { l.PendingPerRunMax = 0 })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), snapshotOneEffect...)
			for off, v := range tc.patches {
				b[off] = v
			}
			if tc.result != "" {
				b = append(append(b[:offResult], byte(len(tc.result))), tc.result...)
			}
			l := tc.limits
			if l == (core.Limits{}) {
				l = core.DefaultLimits()
			}
			g := core.New(l)
			require.NoError(t, g.UnmarshalBinary(b), "the decoder refused the state: the case tests nothing")
			require.ErrorIs(t, g.CheckInvariants(), core.ErrInvariant)
		})
	}
}
