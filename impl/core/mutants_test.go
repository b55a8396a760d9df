package core_test

// Tests written from the mutation score (docs/mutation.md, `make mutation`): each one
// checks a behaviour the contract or the core's documentation requires and that no
// other test pinned down, and names the surviving mutants it kills. A mutant id is
// stable (file:Func:operator:hash); `go run ./cmd/mutate -only ID ./impl/core/`
// re-runs one.

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
)

// TestSnapshotRestoreBehavesLikeOriginal: a gate restored from a snapshot must answer
// every later command exactly as the gate it was taken from (the log replays from a
// snapshot on recovery, so a restored gate that forgot a pending approval would admit
// an effect the contract holds: Admit step 9). MarshalBinary does not encode the
// derived sets (open effects, the deadline heap), so a round trip of the bytes alone
// cannot see them lost; the continuation does.
//
// Kills: impl/core/codec.go:Gate.UnmarshalBinary map-write mutants (run.pending and
// run.open not restored) and the early-return and deadline-heap mutants of
// UnmarshalBinary.
func TestSnapshotRestoreBehavesLikeOriginal(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		g := core.New(core.DefaultLimits())
		const n = 60
		for _, c := range randomCommands(rng, n) {
			g.Step(c)
		}
		snap, err := g.MarshalBinary()
		require.NoError(t, err)
		h := core.New(core.DefaultLimits())
		require.NoError(t, h.UnmarshalBinary(snap), "seed %d", seed)
		for i, c := range randomCommands(rng, n) {
			c.Now += n
			if c.Op == core.OpOpen && c.Deadline > 0 {
				c.Deadline += n
			}
			want, got := g.Step(c), h.Step(c)
			require.Equal(t, want, got, "seed %d, command %d after the snapshot: %+v", seed, i, c)
			if i%10 == 9 {
				now := core.Time(n + i)
				require.Equal(t, g.Expire(now), h.Expire(now), "seed %d: Expire(%d)", seed, now)
			}
		}
		a, _ := g.MarshalBinary()
		b, _ := h.MarshalBinary()
		require.Equal(t, a, b, "seed %d: states diverged after the snapshot", seed)
	}
}

// snapshotOneEffect is the snapshot of a gate with run "r" (active, epoch 1, no
// deadline) holding gated effect "k" (held, pending approval, epoch 1). The layout is
// MarshalBinary's: every integer a uvarint, every string a uvarint length + bytes.
var snapshotOneEffect = []byte{
	1,      // snapshot version
	1,      // runs
	1, 'r', // run id
	1,      // run status: active
	1,      // epoch
	0,      // deadline: none
	1,      // effects
	1, 'k', // key
	1,       // effect status: held
	1, 0, 0, // gated, approved, outcome
	1, // pending
	1, // effect epoch
	0, // result: empty
}

// Offsets into snapshotOneEffect.
const (
	offRunStatus    = 4
	offEffectStatus = 10
)

// TestSnapshotRejectsCorruption: a snapshot that does not describe a valid state is
// refused with ErrCodec and leaves the gate as it was ("On error g is left
// unchanged"; the rules: bad input gets a typed error and changes no state). A
// restored gate with a run in status `none` or an effect stored as `absent` would
// break the contract's invariants silently.
//
// Kills: the surviving boundary, negate-cond, boolean and constant mutants of the
// status checks and the duplicate-run check in impl/core/codec.go:Gate.UnmarshalBinary.
func TestSnapshotRejectsCorruption(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := g.Open("r", 0)
	require.NoError(t, err)
	res, err := g.Admit("r", "k", 1, true, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, snapshotOneEffect, snap, "the snapshot layout changed: update this test")

	patch := func(off int, v byte) []byte {
		b := append([]byte(nil), snapshotOneEffect...)
		b[off] = v
		return b
	}
	run := snapshotOneEffect[2:]
	dup := append([]byte{1, 2}, append(append([]byte(nil), run...), run...)...)
	cases := []struct {
		name string
		b    []byte
	}{
		{"version 2", patch(0, 2)},
		{"run status none", patch(offRunStatus, byte(core.RunNone))},
		{"run status past timed_out", patch(offRunStatus, byte(core.RunTimedOut)+1)},
		{"effect status absent", patch(offEffectStatus, byte(core.EffectAbsent))},
		{"effect status past rejected", patch(offEffectStatus, byte(core.EffectRejected)+1)},
		{"trailing byte", append(append([]byte(nil), snapshotOneEffect...), 0)},
		{"run listed twice", dup},
		{"more runs than bytes", patch(1, 100)},
		{"more effects than bytes", patch(7, 100)},
	}
	for i := range snapshotOneEffect {
		cases = append(cases, struct {
			name string
			b    []byte
		}{"truncated to " + string(rune('0'+i/10)) + string(rune('0'+i%10)) + " bytes", snapshotOneEffect[:i]})
	}
	// The valid boundary values are accepted: every run status from active to
	// timed_out and every effect status from held to rejected.
	for s := core.RunActive; s <= core.RunTimedOut; s++ {
		require.NoError(t, core.New(core.DefaultLimits()).UnmarshalBinary(patch(offRunStatus, byte(s))), "run status %s", s)
	}
	for s := core.EffectHeld; s <= core.EffectRejected; s++ {
		require.NoError(t, core.New(core.DefaultLimits()).UnmarshalBinary(patch(offEffectStatus, byte(s))), "effect status %s", s)
	}

	target := core.New(core.DefaultLimits())
	_, err = target.Open("other", 5)
	require.NoError(t, err)
	before, _ := target.MarshalBinary()
	for _, c := range cases {
		err := target.UnmarshalBinary(c.b)
		require.ErrorIs(t, err, core.ErrCodec, c.name)
		after, _ := target.MarshalBinary()
		require.Equal(t, before, after, "%s: a refused snapshot changed the gate", c.name)
		at, r, ok := target.NextDeadline()
		require.True(t, ok, c.name)
		require.Equal(t, core.Time(5), at, c.name)
		require.Equal(t, core.RunID("other"), r, c.name)
	}
}

// TestCommandEncodingLayout: the log keeps commands in this encoding, so a gate must
// read the records an older build of the same version wrote. The bytes follow the
// diagram in codec.go; the op numbers are part of the format.
//
// Kills: impl/core/codec.go:_:constant:69f6b4a8 (commandVersion 1 -> 2, which a round
// trip cannot see) and impl/core/step.go:_:constant:ac6dbdfa (OpOpen = iota + 2
// renumbers every op on disk).
func TestCommandEncodingLayout(t *testing.T) {
	c := core.Command{Op: core.OpComplete, Run: "r1", Key: "k", Epoch: 3, Gated: true,
		Decision: core.Reject, Outcome: core.OutcomeFailed, Result: "ab", Deadline: 5, Now: 300}
	want := []byte{
		1,           // version
		4,           // op: open=1 admit=2 decide=3 complete=4 cancel=5 fence=6 timeout=7
		2, 'r', '1', // run
		1, 'k', // key
		3,           // epoch
		1,           // gated
		2,           // decision: approve=1 reject=2
		2,           // outcome: ok=1 failed=2
		2, 'a', 'b', // result
		5,          // deadline
		0xac, 0x02, // now = 300 as a uvarint
	}
	require.Equal(t, want, core.AppendCommand(nil, c))
	got, err := core.DecodeCommand(want)
	require.NoError(t, err)
	require.Equal(t, c, got)
	for op, want := range map[core.Op]byte{core.OpOpen: 1, core.OpAdmit: 2, core.OpDecide: 3,
		core.OpComplete: 4, core.OpCancel: 5, core.OpFence: 6, core.OpTimeout: 7} {
		require.Equal(t, want, core.AppendCommand(nil, core.Command{Op: op})[1], "op %s", op)
	}
}

// TestDecodeCommandRefusesNonActions: a log record whose op is not one of the seven
// actions (0, status, or anything above) is malformed: Status is read-only and never
// logged, and replaying an unknown op would be a guess.
//
// Kills: impl/core/codec.go:DecodeCommand:boolean:c0efe1d5 (the op range check
// weakened to c.Op < OpOpen && c.Op > OpTimeout, which accepts every op).
func TestDecodeCommandRefusesNonActions(t *testing.T) {
	for _, op := range []core.Op{0, core.OpStatus, core.OpTimeout + 2, 255} {
		_, err := core.DecodeCommand(core.AppendCommand(nil, core.Command{Op: op, Run: "r"}))
		require.ErrorIs(t, err, core.ErrCodec, "op %d", op)
	}
	for op := core.OpOpen; op <= core.OpTimeout; op++ {
		_, err := core.DecodeCommand(core.AppendCommand(nil, core.Command{Op: op, Run: "r"}))
		require.NoError(t, err, "op %s", op)
	}
}

// TestDecodeRefusesStringPastEnd: a string whose length runs past the end of the
// record is malformed, even when the bytes after it would still parse as the fields
// that follow (here: a result of length 3 with two bytes left, which read as deadline
// 0 and now 0 if the length were ignored).
//
// Kills: impl/core/codec.go:decoder.string:remove-stmt:668d1a11 (the error flag not
// set, so the record decodes with an empty result).
func TestDecodeRefusesStringPastEnd(t *testing.T) {
	good := core.AppendCommand(nil, core.Command{Op: core.OpComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK})
	// version, op, run, key, epoch, gated, decision, outcome, result length, deadline, now
	require.Equal(t, []byte{1, 4, 1, 'r', 1, 'k', 0, 0, 0, 1, 0, 0, 0}, good)
	bad := append([]byte(nil), good...)
	bad[10] = 3
	_, err := core.DecodeCommand(bad)
	require.ErrorIs(t, err, core.ErrCodec)
}

// TestLimitBoundaries: a limit is the largest accepted size ("RunBytesMax: bytes of a
// run id"): a value of exactly the limit is accepted, one byte more is the typed
// error. docs/protocol.md fixes the run, key and result limits at 1..128, 1..256 and
// 0..16,384 bytes and says they are the gate's defaults.
//
// Kills: impl/core/gate.go:Gate.checkRun:boundary:dd43303c,
// Gate.checkKey:boundary:42999d18, Gate.Status:boundary:4ecedf11 and
// Gate.Complete:boundary:45b5612f (> turned into >=, which refuses a value of exactly
// the limit), and the DefaultLimits constants for those three limits.
func TestLimitBoundaries(t *testing.T) {
	d := core.DefaultLimits()
	require.Equal(t, 128, d.RunBytesMax, "docs/protocol.md: run is 1..128 bytes")
	require.Equal(t, 256, d.KeyBytesMax, "docs/protocol.md: key is 1..256 bytes")
	require.Equal(t, 16384, d.ResultBytesMax, "docs/protocol.md: result is 0..16,384 bytes")

	g := core.New(core.Limits{RunsMax: 4, KeysPerRunMax: 4, PendingPerRunMax: 4, RunBytesMax: 4, KeyBytesMax: 3, ResultBytesMax: 2})
	_, err := g.Open("abcde", 0)
	require.ErrorIs(t, err, core.ErrRunTooLong)
	_, err = g.Open("abcd", 0)
	require.NoError(t, err, "a run id of exactly RunBytesMax bytes")

	_, err = g.Admit("abcd", "wxyz", 1, false, 0)
	require.ErrorIs(t, err, core.ErrKeyTooLong)
	_, _, err = g.Status("abcd", "wxyz")
	require.ErrorIs(t, err, core.ErrKeyTooLong)
	res, err := g.Admit("abcd", "xyz", 1, false, 0)
	require.NoError(t, err, "a key of exactly KeyBytesMax bytes")
	require.Equal(t, core.AnswerAdmit, res.Answer)
	_, ev, err := g.Status("abcd", "xyz")
	require.NoError(t, err)
	require.Equal(t, core.EffectAdmitted, ev.Status)

	_, err = g.Complete("abcd", "xyz", core.OutcomeOK, "abc")
	require.ErrorIs(t, err, core.ErrResultTooLong)
	_, err = g.Complete("abcd", "xyz", core.OutcomeOK, "ab")
	require.NoError(t, err, "a result of exactly ResultBytesMax bytes")
}

// TestDeadlineOne: a deadline is any positive time on the gate's clock (0 means none),
// so a deadline of 1 is a deadline: the run times out at 1 (Admit step 2, "at or past
// the deadline"), Expire(1) times it out, and a snapshot keeps it.
//
// Kills: impl/core/gate.go:Gate.Open:constant:918ff277 and Gate.Admit:constant:9fe55ac2
// (deadline > 0 turned into > 1), impl/core/codec.go:Gate.UnmarshalBinary:constant:6c5c9105
// and Gate.UnmarshalBinary:negate-cond:82367981 and slice-write:429029f6 (the restored
// deadline heap), and impl/core/gate.go:Gate.Expire:boundary:92546b4e (at > now turned
// into at >= now, which leaves a run whose deadline is exactly now active).
func TestDeadlineOne(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := g.Open("r", 1)
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
	require.Empty(t, h.Expire(0), "nothing is due before the deadline")
	require.Equal(t, []core.RunID{"r"}, h.Expire(1), "a run times out at its deadline")

	res, err := g.Admit("r", "k", 1, false, 1)
	require.NoError(t, err)
	require.Equal(t, core.AnswerDenied, res.Answer)
	require.Equal(t, core.ReasonTimedOut, res.Reason)
}

// TestExpireOrder: Expire times runs out earliest deadline first, and a gate restored
// from a snapshot does so in the same order as the gate it was taken from, ties
// included (the core is deterministic: the same commands give the same answers, and
// recovery goes through a snapshot).
//
// Kills: the surviving mutants of impl/core/gate.go:deadlineHeap.Less and of the sort
// in impl/core/codec.go:Gate.UnmarshalBinary that break deadline order or tie order,
// among them Gate.UnmarshalBinary:negate-cond:530b5fb9 (a restored heap that is not
// a heap), which before this test only the durable conformance mode failed on.
func TestExpireOrder(t *testing.T) {
	g := core.New(core.DefaultLimits())
	deadlines := []struct {
		r  core.RunID
		at core.Time
	}{{"e", 20}, {"c", 10}, {"a", 30}, {"d", 20}, {"b", 20}, {"f", 5}, {"g", 40}}
	for _, d := range deadlines {
		_, err := g.Open(d.r, d.at)
		require.NoError(t, err)
	}
	_, err := g.Cancel("g") // a final run has no deadline left
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
			for _, r := range gate.Expire(now) {
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
		_, err := g3.Open(r, core.Time((i*7919)%13+1))
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
		_, err := g3.Timeout(r)
		require.NoError(t, err)
		_, err = h3.Timeout(r)
		require.NoError(t, err)
	}
	// Within one Expire call, ties too come out in one order on both gates.
	g2, h2 := core.New(core.DefaultLimits()), core.New(core.DefaultLimits())
	for _, d := range deadlines {
		_, err := g2.Open(d.r, 7)
		require.NoError(t, err)
	}
	snap, _ = g2.MarshalBinary()
	require.NoError(t, h2.UnmarshalBinary(snap))
	require.Equal(t, g2.Expire(7), h2.Expire(7))
}

// TestViewsAndDecisionsAreSorted: RunView.Pending is documented sorted, and so are
// DecideResult.Released and Rejected ("the keys whose status this decision changed,
// sorted"): the server answers and logs them, and a map order would make two runs of
// the same commands answer differently.
//
// Gate.Effects is documented "sorted by key" too (the conformance suite compares it
// with the model).
//
// Kills: impl/core/gate.go:Run.view:remove-call:d3f8a5e1, Gate.Effects:negate-cond
// mutants (a reversed or partial order),
// Gate.Decide:remove-call:69ee521b and c43fd510 (the sorts removed) and
// Gate.Decide:slice-write:99aefc56 and 1abc8895 (a released or rejected key left out).
func TestViewsAndDecisionsAreSorted(t *testing.T) {
	keys := []core.Key{"m", "c", "x", "a", "q", "f", "b", "z"}
	for round := 0; round < 5; round++ { // map order differs between runs of a loop
		g := core.New(core.DefaultLimits())
		_, err := g.Open("r", 0)
		require.NoError(t, err)
		for _, k := range keys[:4] {
			res, err := g.Admit("r", k, 1, true, 0) // gated: each opens an approval
			require.NoError(t, err)
			require.Equal(t, core.AnswerHeld, res.Answer)
		}
		for _, k := range keys[4:] {
			res, err := g.Admit("r", k, 1, false, 0) // held behind the pending approvals
			require.NoError(t, err)
			require.Equal(t, core.AnswerHeld, res.Answer)
		}
		rv, _, err := g.Status("r", "")
		require.NoError(t, err)
		require.Equal(t, []core.Key{"a", "c", "m", "x"}, rv.Pending)
		for _, k := range []core.Key{"x", "c", "m"} {
			res, err := g.Decide("r", k, core.Approve)
			require.NoError(t, err)
			require.Empty(t, res.Released, "released while %v still pending", k)
		}
		res, err := g.Decide("r", "a", core.Approve)
		require.NoError(t, err)
		require.Equal(t, []core.Key{"a", "b", "c", "f", "m", "q", "x", "z"}, res.Released)
		require.Empty(t, res.Rejected)
		var effs []core.Key
		for _, e := range g.Effects("r") {
			effs = append(effs, e.Key)
		}
		require.Equal(t, []core.Key{"a", "b", "c", "f", "m", "q", "x", "z"}, effs, "Effects is sorted by key")

		_, err = g.Open("s", 0)
		require.NoError(t, err)
		for _, k := range []core.Key{"y", "w"} {
			_, err := g.Admit("s", k, 1, true, 0)
			require.NoError(t, err)
		}
		for _, k := range []core.Key{"x", "d", "e"} {
			_, err := g.Admit("s", k, 1, false, 0)
			require.NoError(t, err)
		}
		_, err = g.Decide("s", "w", core.Approve) // w: gated and approved, survives the reject
		require.NoError(t, err)
		res, err = g.Decide("s", "y", core.Reject)
		require.NoError(t, err)
		require.Equal(t, []core.Key{"d", "e", "x", "y"}, res.Rejected)
		require.Equal(t, []core.Key{"w"}, res.Released)
	}
}

// TestRefusedCommandsChangeNothing: a command refused with an error changed nothing,
// so the shell must neither log it nor wake parked admits ("Err ... then nothing
// changed and Persist is false"; Wake only after a change that is durable).
// Timeout through Step reports the run after the action and wakes parked admits once.
//
// Kills: impl/core/step.go:Gate.Step:remove-stmt:f9730531 and constant:756741a6
// (Wake left set on an error), Gate.Step:remove-stmt:d312e05d, negate-cond:9eaa5c5f and
// remove-stmt:b0601b0c (the Timeout branch), and impl/core/gate.go:Gate.Timeout's
// early-return, negate-cond and remove-call survivors and its constant survivors
// 3a941698 and d8b72586 (a refusal reported as a change).
func TestRefusedCommandsChangeNothing(t *testing.T) {
	g := core.New(core.Limits{RunsMax: 1, KeysPerRunMax: 4, PendingPerRunMax: 4, RunBytesMax: 8, KeyBytesMax: 8, ResultBytesMax: 8})
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
	changed, err := g.Timeout("nope")
	require.ErrorIs(t, err, core.ErrUnknownRun)
	require.False(t, changed, "a refused Timeout reported a change")
	changed, err = g.Timeout("")
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
	changed, err = g.Timeout("r")
	require.NoError(t, err)
	require.False(t, changed)
}

// TestFenceNeverForgetsAdmitted: an effect that was released and then admitted is no
// longer held or released, so a Fence (which drops held and released effects to
// absent) must keep it: asking again in the new epoch is a duplicate, never a second
// admit (P3, at most one admit per key).
//
// Kills: impl/core/gate.go:Gate.Admit:map-write:181e6887 (the admitted key left in the
// index of open effects, so the Fence deletes the admitted effect).
func TestFenceNeverForgetsAdmitted(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := g.Open("r", 0)
	require.NoError(t, err)
	_, err = g.Admit("r", "gate", 1, true, 0)
	require.NoError(t, err)
	res, err := g.Admit("r", "k", 1, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	_, err = g.Decide("r", "gate", core.Approve) // releases gate and k
	require.NoError(t, err)
	res, err = g.Admit("r", "k", 1, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer)
	_, err = g.Fence("r")
	require.NoError(t, err)
	res, err = g.Admit("r", "k", 2, false, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerDuplicate, res.Answer, "the admitted effect was forgotten by the fence")
}

// TestNamesAndErrors: the contract's names parse to their values and nothing else
// does (the wire hands decisions and outcomes over as names); a value outside an
// enumeration prints "invalid" instead of crashing; Final is true exactly for
// cancelled and timed_out; a re-created error with the same code matches the
// exported one (the wire carries only the code).
//
// Kills: the survivors of impl/core/types.go:parseEnum, ParseOutcome, enumName and
// RunStatus.Final, and impl/core/errors.go:Error.Is:early-return:ef806587.
func TestNamesAndErrors(t *testing.T) {
	for name, want := range map[string]core.Decision{"approve": core.Approve, "reject": core.Reject} {
		d, ok := core.ParseDecision(name)
		require.True(t, ok, name)
		require.Equal(t, want, d, name)
	}
	for name, want := range map[string]core.Outcome{"ok": core.OutcomeOK, "failed": core.OutcomeFailed} {
		o, ok := core.ParseOutcome(name)
		require.True(t, ok, name)
		require.Equal(t, want, o, name)
	}
	for _, bad := range []string{"", "Approve", "ok ", "none", "admit"} {
		_, ok := core.ParseDecision(bad)
		require.False(t, ok, "%q parsed as a decision", bad)
		_, ok = core.ParseOutcome(bad)
		require.False(t, ok, "%q parsed as an outcome", bad)
	}
	require.Equal(t, "timed_out", core.RunTimedOut.String())
	require.Equal(t, "invalid", core.RunStatus(4).String())
	require.Equal(t, "invalid", core.EffectStatus(6).String())
	require.Equal(t, "invalid", core.Outcome(3).String())
	for s, final := range map[core.RunStatus]bool{core.RunNone: false, core.RunActive: false,
		core.RunCancelled: true, core.RunTimedOut: true} {
		require.Equal(t, final, s.Final(), "%s", s)
	}
	require.ErrorIs(t, &core.Error{Code: "unknown_run"}, core.ErrUnknownRun)
	require.NotErrorIs(t, &core.Error{Code: "bad_epoch"}, core.ErrUnknownRun)
}

// TestSnapshotKeepsApprovals: a snapshot keeps each effect's approval state (gated,
// approved, pending), because Decide depends on it: a reject rejects every held effect
// except the gated ones already approved (Decide step 3), and a decision on a key
// whose approval is not pending is not_pending. A restored gate must decide exactly
// as the original.
//
// Kills: impl/core/codec.go:Gate.UnmarshalBinary:constant:9dede475, 817c416b and
// f34a486a (gated, approved or pending read as false) and
// Gate.UnmarshalBinary:map-write:49b3b6f3 (the pending set not rebuilt). Before this
// test only the durable conformance mode failed on them, and only under load.
func TestSnapshotKeepsApprovals(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := g.Open("r", 0)
	require.NoError(t, err)
	for _, k := range []core.Key{"a", "b"} {
		res, err := g.Admit("r", k, 1, true, 0)
		require.NoError(t, err)
		require.Equal(t, core.AnswerHeld, res.Answer)
	}
	_, err = g.Decide("r", "a", core.Approve) // a: approved, still held behind b
	require.NoError(t, err)
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))

	for _, gate := range []*core.Gate{g, h} {
		rv, a, err := gate.Status("r", "a")
		require.NoError(t, err)
		require.Equal(t, []core.Key{"b"}, rv.Pending)
		require.Equal(t, core.EffectHeld, a.Status)
		require.True(t, a.Gated)
		require.True(t, a.Approved)
		_, b, err := gate.Status("r", "b")
		require.NoError(t, err)
		require.True(t, b.Gated)
		require.False(t, b.Approved)
	}
	want, err := g.Decide("r", "b", core.Reject)
	require.NoError(t, err)
	require.Equal(t, []core.Key{"b"}, want.Rejected)
	require.Equal(t, []core.Key{"a"}, want.Released, "the approved gated effect survives the reject")
	got, err := h.Decide("r", "b", core.Reject)
	require.NoError(t, err, "the restored gate lost b's pending approval")
	require.Equal(t, want, got)
}
