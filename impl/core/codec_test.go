package core_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// TestReplayRebuildsState: replaying the persisted commands (what the log keeps) gives
// the same state and the same answers; a snapshot round-trips exactly.
func TestReplayRebuildsState(t *testing.T) {
	randomHistories(50, 0, 300, func(seed uint64, g *core.Gate, cmds []core.Command) {
		var log [][]byte
		for _, c := range cmds {
			if rep := g.Step(c); rep.Persist {
				log = append(log, core.AppendCommand(nil, c))
			}
		}
		h := core.New(core.DefaultLimits())
		for _, rec := range log {
			c, err := core.DecodeCommand(rec)
			require.NoError(t, err)
			require.True(t, h.Step(c).Persist, "seed %d: a logged command did not change the replayed state", seed)
		}
		want, _ := g.MarshalBinary()
		got, _ := h.MarshalBinary()
		require.Equal(t, want, got, "seed %d: replay diverged", seed)

		s := core.New(core.DefaultLimits())
		require.NoError(t, s.UnmarshalBinary(want))
		again, _ := s.MarshalBinary()
		require.Equal(t, want, again, "seed %d: snapshot round trip", seed)
		ng, rg, okg := g.NextDeadline()
		ns, rs, oks := s.NextDeadline()
		require.Equal(t, okg, oks)
		require.Equal(t, ng, ns)
		require.Equal(t, rg, rs)
	})
}

func TestCodecRejectsGarbage(t *testing.T) {
	good := core.AppendCommand(nil, core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1})
	for i := range good {
		_, err := core.DecodeCommand(good[:i])
		require.ErrorIs(t, err, core.ErrCodec, "prefix of %d bytes", i)
	}
	_, err := core.DecodeCommand(append(good, 0))
	require.ErrorIs(t, err, core.ErrCodec)
	g := core.New(core.DefaultLimits())
	require.ErrorIs(t, g.UnmarshalBinary([]byte{9, 9, 9}), core.ErrCodec)
}

// TestCommandEncodingLayout: the log keeps commands in this encoding, so a gate must
// read the records an older build of the same version wrote. The bytes follow the
// diagram in codec.go; the op numbers are part of the format.
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
		core.OpComplete: 4, core.OpCancel: 5, core.OpFence: 6, core.OpTimeout: 7, core.OpRetire: 9} {
		require.Equal(t, want, core.AppendCommand(nil, core.Command{Op: op})[1], "op %s", op)
	}
}

// TestCommandUptoIsVersion2: a Retire with Upto is written as version 2, its flag one
// byte after now; anything else keeps version 1's bytes. A version 2 record whose flag
// is not set, or on another op, is malformed.
func TestCommandUptoIsVersion2(t *testing.T) {
	c := core.Command{Op: core.OpRetire, Run: "r", Now: 7, Upto: true}
	want := []byte{2, 9, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 1}
	require.Equal(t, want, core.AppendCommand(nil, c))
	got, err := core.DecodeCommand(want)
	require.NoError(t, err)
	require.Equal(t, c, got)
	c.Upto = false
	require.Equal(t, append([]byte{1}, want[1:len(want)-1]...), core.AppendCommand(nil, c))
	for name, bad := range map[string][]byte{
		"flag not set":     {2, 9, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 0},
		"flag on an admit": {2, 2, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 1},
		"no flag":          {2, 9, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7},
		"version 3":        {3, 9, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 1},
	} {
		_, err := core.DecodeCommand(bad)
		require.ErrorIs(t, err, core.ErrCodec, name)
	}
}

// TestDecodeCommandRefusesNonActions: a log record whose op is not one of the eight
// actions (0, status, or anything above retire) is malformed: Status is read-only and never
// logged, and replaying an unknown op would be a guess.
func TestDecodeCommandRefusesNonActions(t *testing.T) {
	for _, op := range []core.Op{0, core.OpStatus, core.OpRetire + 1, 255} {
		_, err := core.DecodeCommand(core.AppendCommand(nil, core.Command{Op: op, Run: "r"}))
		require.ErrorIs(t, err, core.ErrCodec, "op %d", op)
	}
	for _, op := range []core.Op{core.OpOpen, core.OpAdmit, core.OpDecide, core.OpComplete, core.OpCancel, core.OpFence, core.OpTimeout, core.OpRetire} {
		_, err := core.DecodeCommand(core.AppendCommand(nil, core.Command{Op: op, Run: "r"}))
		require.NoError(t, err, "op %s", op)
	}
}

// TestDecodeRefusesStringPastEnd: a string whose length runs past the end of the
// record is malformed, even when the bytes after it would still parse as the fields
// that follow (here: a result of length 3 with two bytes left, which read as deadline
// 0 and now 0 if the length were ignored).
func TestDecodeRefusesStringPastEnd(t *testing.T) {
	good := core.AppendCommand(nil, core.Command{Op: core.OpComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK})
	// version, op, run, key, epoch, gated, decision, outcome, result length, deadline, now
	require.Equal(t, []byte{1, 4, 1, 'r', 1, 'k', 0, 0, 0, 1, 0, 0, 0}, good)
	bad := append([]byte(nil), good...)
	bad[10] = 3
	_, err := core.DecodeCommand(bad)
	require.ErrorIs(t, err, core.ErrCodec)
}

// snapshotOneEffect is the snapshot of a gate with run "r" (active, epoch 1, no
// deadline) holding gated effect "k" (held, pending approval, epoch 1). The layout is
// MarshalBinary's: every integer a uvarint, every string a uvarint length + bytes.
var snapshotOneEffect = []byte{
	2,      // snapshot version
	1,      // runs
	0,      // retired ids
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

// snapshotOneEffectV4 is the same state as this build writes it (version 4): the
// watermark always there (empty), and the effect's note at its end, since 0 (the
// admit's Now), no texts.
var snapshotOneEffectV4 = []byte{
	4,      // snapshot version
	1,      // runs
	0,      // watermark: none
	0,      // retired ids
	1, 'r', // run id
	1,      // run status: active
	1,      // epoch
	0,      // deadline: none
	1,      // effects
	1, 'k', // key
	1,       // effect status: held
	1, 0, 0, // gated, approved, outcome
	1,       // pending
	1,       // effect epoch
	0,       // result: empty
	1,       // a note
	0,       // since
	0, 0, 0, // description, args digest, reason: empty
}

// Offsets into snapshotOneEffect (version 2, which this build reads and no longer
// writes): the run's status and epoch, and the effect's fields
// from its status on, one byte each.
const (
	offRunStatus    = 5
	offRunEpoch     = offRunStatus + 1
	offEffectStatus = 11
	offGated        = offEffectStatus + 1
	offApproved     = offGated + 1
	offOutcome      = offApproved + 1
	offPending      = offOutcome + 1
	offEffEpoch     = offPending + 1
	offResult       = offEffEpoch + 1
)

// TestSnapshotRejectsCorruption: a snapshot that does not describe a valid state is
// refused with ErrCodec and leaves the gate as it was ("On error g is left
// unchanged"; the rules: bad input gets a typed error and changes no state). A
// restored gate with a run in status `none` or an effect stored as `absent` would
// break the contract's invariants silently.
func TestSnapshotRejectsCorruption(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "r", 0)
	require.NoError(t, err)
	res, err := admit(g, "r", "k", 1, true, 0)
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, snapshotOneEffectV4, snap, "the snapshot layout changed: update this test")

	patch := func(off int, v byte) []byte {
		b := append([]byte(nil), snapshotOneEffect...)
		b[off] = v
		return b
	}
	run := snapshotOneEffect[3:]
	dup := append([]byte{2, 2, 0}, append(append([]byte(nil), run...), run...)...)
	// run "r" listed as a run and as retired; retired ids unsorted; repeated; empty
	both := append([]byte{2, 1, 1, 1, 'r'}, run...)
	unsorted := append([]byte{2, 1, 2, 1, 'z', 1, 'y'}, run...)
	repeated := append([]byte{2, 1, 2, 1, 'y', 1, 'y'}, run...)
	empty := append([]byte{2, 1, 1, 0}, run...)
	cases := []struct {
		name string
		b    []byte
	}{
		{"version 3", patch(0, 3)},
		{"version 0", patch(0, 0)},
		{"a run both live and retired", both},
		{"retired ids unsorted", unsorted},
		{"a retired id repeated", repeated},
		{"an empty retired id", empty},
		{"more retired ids than bytes", patch(2, 100)},
		{"run status none", patch(offRunStatus, byte(core.RunNone))},
		{"run status past timed_out", patch(offRunStatus, byte(core.RunTimedOut)+1)},
		{"effect status absent", patch(offEffectStatus, byte(core.EffectAbsent))},
		{"effect status past rejected", patch(offEffectStatus, byte(core.EffectRejected)+1)},
		{"trailing byte", append(append([]byte(nil), snapshotOneEffect...), 0)},
		{"run listed twice", dup},
		{"more runs than bytes", patch(1, 100)},
		{"more effects than bytes", patch(8, 100)},
		{"more effects than bytes, and nothing after the count", patch(8, 100)[:9]},
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
	_, err = open(target, "other", 5)
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

// TestSnapshotRestoreBehavesLikeOriginal: a gate restored from a snapshot must answer
// every later command exactly as the gate it was taken from (the log replays from a
// snapshot on recovery, so a restored gate that forgot a pending approval would admit
// an effect the contract holds: Admit step 9). MarshalBinary does not encode the
// derived sets (open effects, the deadline heap), so a round trip of the bytes alone
// cannot see them lost; the continuation does.
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
				require.Equal(t, timeoutDue(g, now), timeoutDue(h, now), "seed %d: Expire(%d)", seed, now)
			}
		}
		a, _ := g.MarshalBinary()
		b, _ := h.MarshalBinary()
		require.Equal(t, a, b, "seed %d: states diverged after the snapshot", seed)
	}
}

// TestSnapshotKeepsApprovals: a snapshot keeps each effect's approval state (gated,
// approved, pending), because Decide depends on it: a reject rejects every held effect
// except the gated ones already approved (Decide step 3), and a decision on a key
// whose approval is not pending is not_pending. A restored gate must decide exactly
// as the original.
func TestSnapshotKeepsApprovals(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, err := open(g, "r", 0)
	require.NoError(t, err)
	for _, k := range []core.Key{"a", "b"} {
		res, err := admit(g, "r", k, 1, true, 0)
		require.NoError(t, err)
		require.Equal(t, core.AnswerHeld, res.Answer)
	}
	_, err = decide(g, "r", "a", core.Approve) // a: approved, still held behind b
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
	want, err := decide(g, "r", "b", core.Reject)
	require.NoError(t, err)
	require.Equal(t, []core.Key{"b"}, want.Rejected)
	require.Equal(t, []core.Key{"a"}, want.Released, "the approved gated effect survives the reject")
	got, err := decide(h, "r", "b", core.Reject)
	require.NoError(t, err, "the restored gate lost b's pending approval")
	require.Equal(t, want, got)
}

// TestSnapshotOfLargeRuns: a snapshot of runs with thousands of effects round-trips
// and lists each run's keys in order. The random histories above keep few keys per
// run, and MarshalBinary sizes its buffer from the effect count: a wrong estimate
// there (a negative capacity panics) showed only on large runs.
func TestSnapshotOfLargeRuns(t *testing.T) {
	g := core.New(core.Limits{RunsMax: 8, KeysPerRunMax: 1 << 14, PendingPerRunMax: 1 << 14, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64, StateBytesMax: 1 << 40})
	for r := 0; r < 3; r++ {
		id := core.RunID("run-" + strconv.Itoa(r))
		open(g, id, 0)
		for k := 0; k < 3000; k++ {
			res, _ := admit(g, id, core.Key("key-"+strconv.Itoa(k)), 1, k%7 == 0, 0)
			require.NotEqual(t, core.AnswerDenied, res.Answer)
		}
	}
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	again, err := h.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, snap, again, "a large snapshot does not round-trip")
	require.Greater(t, len(h.Effects("run-1")), 2000)
	require.Equal(t, g.Effects("run-1"), h.Effects("run-1"))
	entries := g.Len()
	for _, id := range g.RunIDs() {
		entries += len(g.Effects(id))
	}
	require.Equal(t, entries, g.Entries(), "Entries counts runs and effects")
	require.Equal(t, entries, h.Entries())
	require.Equal(t, 0, core.New(core.DefaultLimits()).Entries())
}
