package core_test

import (
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

func small() core.Limits {
	return core.Limits{RunsMax: 2, KeysPerRunMax: 2, PendingPerRunMax: 1, RunBytesMax: 4, KeyBytesMax: 4, ResultBytesMax: 3, StateBytesMax: 1 << 40}
}

// TestLimits: every limit is a typed error that changes nothing.
func TestLimits(t *testing.T) {
	cases := []struct {
		name  string
		setup []core.Command
		cmd   core.Command
		want  error
	}{
		{"run id too long", nil, core.Command{Op: core.OpOpen, Run: "toolong"}, core.ErrRunTooLong},
		{"empty run id", nil, core.Command{Op: core.OpOpen}, core.ErrInvalid},
		{"negative deadline", nil, core.Command{Op: core.OpOpen, Run: "r", Deadline: -1}, core.ErrInvalid},
		{"too many runs", []core.Command{{Op: core.OpOpen, Run: "a"}, {Op: core.OpOpen, Run: "b"}},
			core.Command{Op: core.OpOpen, Run: "c"}, core.ErrTooManyRuns},
		{"too many runs by tombstone", []core.Command{{Op: core.OpOpen, Run: "a"}, {Op: core.OpOpen, Run: "b"}},
			core.Command{Op: core.OpCancel, Run: "c"}, core.ErrTooManyRuns},
		{"key too long", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "kkkkk", Epoch: 1}, core.ErrKeyTooLong},
		{"too many keys", []core.Command{{Op: core.OpOpen, Run: "r"},
			{Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1}, {Op: core.OpAdmit, Run: "r", Key: "b", Epoch: 1}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "c", Epoch: 1}, core.ErrTooManyKeys},
		{"too many pending", []core.Command{{Op: core.OpOpen, Run: "r"},
			{Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1, Gated: true}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "b", Epoch: 1, Gated: true}, core.ErrTooManyPending},
		{"result too long", []core.Command{{Op: core.OpOpen, Run: "r"}, {Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1}},
			core.Command{Op: core.OpComplete, Run: "r", Key: "a", Outcome: core.OutcomeOK, Result: "abcd"}, core.ErrResultTooLong},
		{"empty key", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Epoch: 1}, core.ErrInvalid},
		{"epoch zero", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 0}, core.ErrInvalid},
		{"bad decision", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpDecide, Run: "r", Key: "a"}, core.ErrInvalid},
		{"bad outcome", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpComplete, Run: "r", Key: "a"}, core.ErrInvalid},
		{"unknown op", nil, core.Command{Op: 99, Run: "r"}, core.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := core.New(small())
			for _, c := range tc.setup {
				require.NoError(t, g.Step(c).Err)
			}
			before, _ := g.MarshalBinary()
			rep := g.Step(tc.cmd)
			require.ErrorIs(t, rep.Err, tc.want)
			require.False(t, rep.Persist, "a refused command must not ask to be persisted")
			after, _ := g.MarshalBinary()
			require.Equal(t, before, after, "a refused command changed the state")
		})
	}
}

// TestStepFlags: Persist is set exactly when the state changed, Wake when parked admits
// of the run may get another answer.
func TestStepFlags(t *testing.T) {
	g := core.New(core.DefaultLimits())
	steps := []struct {
		cmd           core.Command
		persist, wake bool
	}{
		{core.Command{Op: core.OpOpen, Run: "r", Deadline: 50}, true, false},
		{core.Command{Op: core.OpOpen, Run: "r"}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true}, true, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, true, false},
		{core.Command{Op: core.OpStatus, Run: "r", Key: "s"}, false, false},
		{core.Command{Op: core.OpDecide, Run: "r", Key: "g", Decision: core.Approve}, true, true},
		{core.Command{Op: core.OpDecide, Run: "r", Key: "g", Decision: core.Approve}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, true, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, false, false},
		{core.Command{Op: core.OpComplete, Run: "r", Key: "s", Outcome: core.OutcomeOK}, true, false},
		{core.Command{Op: core.OpComplete, Run: "r", Key: "s", Outcome: core.OutcomeOK}, false, false},
		{core.Command{Op: core.OpFence, Run: "r"}, true, true},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "x", Epoch: 2, Now: 50}, true, true},
		{core.Command{Op: core.OpTimeout, Run: "r"}, false, false},
		{core.Command{Op: core.OpCancel, Run: "r"}, false, false},
		{core.Command{Op: core.OpCancel, Run: "q"}, true, true},
	}
	for i, s := range steps {
		rep := g.Step(s.cmd)
		require.NoError(t, rep.Err, "step %d", i)
		require.Equal(t, s.persist, rep.Persist, "step %d %+v: persist", i, s.cmd)
		require.Equal(t, s.wake, rep.Wake, "step %d %+v: wake", i, s.cmd)
	}
}

// TestRefusedCommandsChangeNothing: a command refused with an error changed nothing,
// so the shell must neither log it nor wake parked admits ("Err ... then nothing
// changed and Persist is false"; Wake only after a change that is durable).
// Timeout through Step reports the run after the action and wakes parked admits once.
func TestRefusedCommandsChangeNothing(t *testing.T) {
	g := core.New(core.Limits{RunsMax: 1, KeysPerRunMax: 4, PendingPerRunMax: 4, RunBytesMax: 8, KeyBytesMax: 8, ResultBytesMax: 8, StateBytesMax: 1 << 40})
	require.False(t, g.Step(core.Command{Op: core.OpOpen, Run: "r"}).Err != nil)
	before, _ := g.MarshalBinary()
	for _, c := range []core.Command{
		{Op: core.OpAdmit, Run: "nope", Key: "k", Epoch: 1},
		{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 2},                   // bad_epoch
		{Op: core.OpDecide, Run: "r", Key: "k", Decision: core.Approve},    // not_pending
		{Op: core.OpComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK}, // not_admitted
		{Op: core.OpCancel, Run: "other"},                                  // too_many_runs (tombstone)
		{Op: core.OpFence, Run: "nope"},                                    // unknown_run
		{Op: core.OpTimeout, Run: "nope"},                                  // unknown_run
		{Op: core.OpTimeout, Run: "far-too-long-run-id"},                   // run_too_long
		{Op: core.OpOpen, Run: "r", Deadline: -1},                          // invalid
		{Op: core.Op(99), Run: "r"},                                        // invalid
	} {
		rep := g.Step(c)
		require.Error(t, rep.Err, "%+v", c)
		require.False(t, rep.Persist, "%+v: a refusal asked to persist", c)
		require.False(t, rep.Wake, "%+v: a refusal asked to wake", c)
		after, _ := g.MarshalBinary()
		require.Equal(t, before, after, "%+v changed the state", c)
	}
	// Timeout "reports whether r changed": never when it refuses.
	changed, err := timeout(g, "nope")
	require.ErrorIs(t, err, core.ErrUnknownRun)
	require.False(t, changed, "a refused Timeout reported a change")
	changed, err = timeout(g, "")
	require.ErrorIs(t, err, core.ErrInvalid)
	require.False(t, changed, "a refused Timeout reported a change")

	rep := g.Step(core.Command{Op: core.OpTimeout, Run: "r"})
	require.NoError(t, rep.Err)
	require.True(t, rep.Persist)
	require.True(t, rep.Wake)
	require.Equal(t, core.RunTimedOut, rep.Run.Status)
	require.Equal(t, uint64(2), rep.Run.Epoch)
	rep = g.Step(core.Command{Op: core.OpTimeout, Run: "r"}) // already final: no change
	require.NoError(t, rep.Err)
	require.False(t, rep.Persist)
	require.False(t, rep.Wake)
	require.Equal(t, core.RunTimedOut, rep.Run.Status)
	changed, err = timeout(g, "r")
	require.NoError(t, err)
	require.False(t, changed)
}

// TestLimitBoundaries: a limit is the largest accepted size ("RunBytesMax: bytes of a
// run id"): a value of exactly the limit is accepted, one byte more is the typed
// error. docs/protocol.md fixes the run, key and result limits at 1..128, 1..256 and
// 0..16,384 bytes and says they are the gate's defaults.
func TestLimitBoundaries(t *testing.T) {
	d := core.DefaultLimits()
	require.Equal(t, 128, d.RunBytesMax, "docs/protocol.md: run is 1..128 bytes")
	require.Equal(t, 256, d.KeyBytesMax, "docs/protocol.md: key is 1..256 bytes")
	require.Equal(t, 16384, d.ResultBytesMax, "docs/protocol.md: result is 0..16,384 bytes")

	g := core.New(core.Limits{RunsMax: 4, KeysPerRunMax: 4, PendingPerRunMax: 4, RunBytesMax: 4, KeyBytesMax: 3, ResultBytesMax: 2, StateBytesMax: 1 << 40})
	_, err := open(g, "abcde", 0)
	require.ErrorIs(t, err, core.ErrRunTooLong)
	_, err = open(g, "abcd", 0)
	require.NoError(t, err, "a run id of exactly RunBytesMax bytes")

	_, err = admit(g, "abcd", "wxyz", 1, false, 0)
	require.ErrorIs(t, err, core.ErrKeyTooLong)
	_, _, err = g.Status("abcd", "wxyz")
	require.ErrorIs(t, err, core.ErrKeyTooLong)
	res, err := admit(g, "abcd", "xyz", 1, false, 0)
	require.NoError(t, err, "a key of exactly KeyBytesMax bytes")
	require.Equal(t, core.AnswerAdmit, res.Answer)
	_, ev, err := g.Status("abcd", "xyz")
	require.NoError(t, err)
	require.Equal(t, core.EffectAdmitted, ev.Status)

	_, err = complete(g, "abcd", "xyz", core.OutcomeOK, "abc")
	require.ErrorIs(t, err, core.ErrResultTooLong)
	_, err = complete(g, "abcd", "xyz", core.OutcomeOK, "ab")
	require.NoError(t, err, "a result of exactly ResultBytesMax bytes")
}

// TestFenceNeverForgetsAdmitted: an effect that was released and then admitted is no
// longer held or released, so a Fence (which drops held and released effects to
// absent) must keep it: asking again in the new epoch is a duplicate, never a second
// admit (P3, at most one admit per key).
func TestFenceNeverForgetsAdmitted(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "r", 0)
	require.NoError(t, err)
	_, err = admit(g, "r", "gate", 1, true, 0)
	require.NoError(t, err)
	res, err := admit(g, "r", "k", 1, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	_, err = decide(g, "r", "gate", core.Approve) // releases gate and k
	require.NoError(t, err)
	res, err = admit(g, "r", "k", 1, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer)
	_, err = fence(g, "r")
	require.NoError(t, err)
	res, err = admit(g, "r", "k", 2, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerDuplicate, res.Answer, "the admitted effect was forgotten by the fence")
}

// TestViewsAndDecisionsAreSorted: RunView.Pending is documented sorted, and so are
// DecideResult.Released and Rejected ("the keys whose status this decision changed,
// sorted"): the server answers and logs them, and a map order would make two runs of
// the same commands answer differently.
//
// Gate.Effects is documented "sorted by key" too (the conformance suite compares it
// with the model).
func TestViewsAndDecisionsAreSorted(t *testing.T) {
	keys := []core.Key{"m", "c", "x", "a", "q", "f", "b", "z"}
	for round := 0; round < 5; round++ { // map order differs between runs of a loop
		g := core.New(core.DefaultLimits())
		_, err := open(g, "r", 0)
		require.NoError(t, err)
		for _, k := range keys[:4] {
			res, err := admit(g, "r", k, 1, true, 0) // gated: each opens an approval
			require.NoError(t, err)
			require.Equal(t, core.AnswerHeld, res.Answer)
		}
		for _, k := range keys[4:] {
			res, err := admit(g, "r", k, 1, false, 0) // held behind the pending approvals
			require.NoError(t, err)
			require.Equal(t, core.AnswerHeld, res.Answer)
		}
		rv, _, err := g.Status("r", "")
		require.NoError(t, err)
		require.Equal(t, []core.Key{"a", "c", "m", "x"}, rv.Pending)
		for _, k := range []core.Key{"x", "c", "m"} {
			res, err := decide(g, "r", k, core.Approve)
			require.NoError(t, err)
			require.Empty(t, res.Released, "released while %v still pending", k)
		}
		res, err := decide(g, "r", "a", core.Approve)
		require.NoError(t, err)
		require.Equal(t, []core.Key{"a", "b", "c", "f", "m", "q", "x", "z"}, res.Released)
		require.Empty(t, res.Rejected)
		var effs []core.Key
		for _, e := range g.Effects("r") {
			effs = append(effs, e.Key)
		}
		require.Equal(t, []core.Key{"a", "b", "c", "f", "m", "q", "x", "z"}, effs, "Effects is sorted by key")

		_, err = open(g, "s", 0)
		require.NoError(t, err)
		for _, k := range []core.Key{"y", "w"} {
			_, err := admit(g, "s", k, 1, true, 0)
			require.NoError(t, err)
		}
		for _, k := range []core.Key{"x", "d", "e"} {
			_, err := admit(g, "s", k, 1, false, 0)
			require.NoError(t, err)
		}
		_, err = decide(g, "s", "w", core.Approve) // w: gated and approved, survives the reject
		require.NoError(t, err)
		res, err = decide(g, "s", "y", core.Reject)
		require.NoError(t, err)
		require.Equal(t, []core.Key{"d", "e", "x", "y"}, res.Rejected)
		require.Equal(t, []core.Key{"w"}, res.Released)
	}
}
