package core_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
)

// TestInvariantsHoldOnEveryHistory: CheckInvariants finds nothing after any random
// history of commands (with the invariants tag, Step also checks after every one).
func TestInvariantsHoldOnEveryHistory(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		g := core.New(core.DefaultLimits())
		for i, c := range randomCommands(rng, 200) {
			g.Step(c)
			if i%20 == 19 {
				require.NoError(t, g.CheckInvariants(), "seed %d, after command %d", seed, i)
			}
		}
		timeoutDue(g, 1<<40)
		require.NoError(t, g.CheckInvariants(), "seed %d, all deadlines passed", seed)
	}
}

// TestInvariantsCatchBrokenStates: each state below breaks one invariant of the spec
// (the snapshot decoder checks the encoding, not the invariants), and CheckInvariants
// names it.
func TestInvariantsCatchBrokenStates(t *testing.T) {
	const (
		offRunEpoch  = 5
		offGated     = 11
		offApproved  = 12
		offOutcome   = 13
		offPending   = 14
		offEffEpoch  = 15
		cancelled    = byte(core.RunCancelled)
		admitted     = byte(core.EffectAdmitted)
		rejected     = byte(core.EffectRejected)
		released     = byte(core.EffectReleased)
		outcomeOK    = byte(core.OutcomeOK)
		noPending    = 0
		approvedFlag = 1
	)
	good := core.New(core.DefaultLimits())
	require.NoError(t, good.UnmarshalBinary(snapshotOneEffect))
	require.NoError(t, good.CheckInvariants(), "the fixture itself is a valid state")
	cases := []struct {
		name    string
		patches map[int]byte
	}{
		{"PendingExact: an undecided gated held effect not pending", map[int]byte{offPending: noPending}},
		{"PendingExact: a pending key already approved", map[int]byte{offApproved: approvedFlag}},
		{"PendingExact: a pending key that is admitted", map[int]byte{offEffectStatus: admitted, offEffEpoch: 0, offGated: 0}},
		{"CurrentEpoch: a held effect of another epoch", map[int]byte{offEffEpoch: 2}},
		{"RunShape: a final run at epoch 1", map[int]byte{offRunStatus: cancelled}},
		{"RunShape: a final run with a pending approval", map[int]byte{offRunStatus: cancelled, offRunEpoch: 2}},
		{"EffectShape: an outcome before completion", map[int]byte{offOutcome: outcomeOK}},
		{"EffectShape: a rejected effect keeps its epoch", map[int]byte{offEffectStatus: rejected, offPending: noPending}},
		{"EffectShape: a released gated effect without approval", map[int]byte{offEffectStatus: released, offPending: noPending}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), snapshotOneEffect...)
			for off, v := range tc.patches {
				b[off] = v
			}
			g := core.New(core.DefaultLimits())
			require.NoError(t, g.UnmarshalBinary(b), "the decoder refused the state: the case tests nothing")
			require.ErrorIs(t, g.CheckInvariants(), core.ErrInvariant)
		})
	}
}
