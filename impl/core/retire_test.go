package core_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// retire is the Retire action; it reports the run and whether r changed.
func retire(g *core.Gate, r core.RunID) (core.RunView, bool, error) {
	rep := g.Step(core.Command{Op: core.OpRetire, Run: r})
	return rep.Run, rep.Persist, rep.Err
}

// runWith opens "r" and brings it to a state by its steps.
func runWith(t *testing.T, steps func(g *core.Gate)) *core.Gate {
	t.Helper()
	g := core.New(core.DefaultLimits())
	_, err := open(g, "r", 0)
	require.NoError(t, err)
	steps(g)
	return g
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestRetireTakesOnlyAFinishedRun: the spec's Finished: a final run (whatever it
// admitted), or an active one whose every effect is completed or rejected. Anything
// else is not_finished and changes nothing.
func TestRetireTakesOnlyAFinishedRun(t *testing.T) {
	cases := []struct {
		name     string
		steps    func(g *core.Gate)
		finished bool
	}{
		{"active, no effect", func(g *core.Gate) {}, true},
		{"active, completed and rejected", func(g *core.Gate) {
			must(admit(g, "r", "a", 1, false, 0))
			must(complete(g, "r", "a", core.OutcomeOK, "x"))
			must(admit(g, "r", "b", 1, true, 0))
			must(decide(g, "r", "b", core.Reject))
		}, true},
		{"cancelled with an admitted effect", func(g *core.Gate) {
			must(admit(g, "r", "a", 1, false, 0))
			must(cancel(g, "r"))
		}, true},
		{"timed out", func(g *core.Gate) { must(timeout(g, "r")) }, true},
		{"active, admitted not completed", func(g *core.Gate) { must(admit(g, "r", "a", 1, false, 0)) }, false},
		{"active, approval pending", func(g *core.Gate) { must(admit(g, "r", "a", 1, true, 0)) }, false},
		{"active, released", func(g *core.Gate) {
			must(admit(g, "r", "a", 1, true, 0))
			must(admit(g, "r", "b", 1, false, 0))
			must(decide(g, "r", "a", core.Approve))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := runWith(t, tc.steps)
			require.Equal(t, tc.finished, g.Finished("r"))
			before := must(g.MarshalBinary())
			v, changed, err := retire(g, "r")
			if !tc.finished {
				require.ErrorIs(t, err, core.ErrNotFinished)
				require.False(t, changed)
				require.Equal(t, before, must(g.MarshalBinary()), "a refused retire changed the state")
				return
			}
			require.NoError(t, err)
			require.True(t, changed)
			require.Equal(t, core.RunView{ID: "r", Status: core.RunRetired}, v)
			require.Equal(t, 0, g.Len())
			runs, _, _ := g.Retired()
			require.Equal(t, 1, runs)
			require.False(t, g.Finished("r"), "a retired run is not finished: it is gone")
			require.NoError(t, g.CheckInvariants())
		})
	}
	require.False(t, core.New(core.DefaultLimits()).Finished("never"))
}

// TestRetireTakesAnIdNeverOpened: the spec's Retire of a run in status none: the id
// is taken for good, listed like a retired run's.
func TestRetireTakesAnIdNeverOpened(t *testing.T) {
	g := core.New(core.DefaultLimits())
	v, changed, err := retire(g, "never")
	require.NoError(t, err)
	require.True(t, changed)
	require.Equal(t, core.RunView{ID: "never", Status: core.RunRetired}, v)
	_, err = open(g, "never", 0)
	require.ErrorIs(t, err, core.ErrRunRetired)
	runs, _, upto := g.Retired()
	require.Equal(t, 1, runs)
	require.Equal(t, core.RunID(""), upto)
	require.NoError(t, g.CheckInvariants())
}

// retireUpto is Retire with the watermark.
func retireUpto(g *core.Gate, r core.RunID) (core.RunView, bool, error) {
	rep := g.Step(core.Command{Op: core.OpRetire, Run: r, Upto: true})
	return rep.Run, rep.Persist, rep.Err
}

// TestRetireUptoMovesTheWatermark: a Retire with Upto lists nothing: every id up to
// the highest so retired that no run holds is retired (never opened ones included),
// while the runs the gate holds below it keep their lives and, once finished and
// retired, leave no trace; the watermark never moves down, and a snapshot keeps it.
func TestRetireUptoMovesTheWatermark(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, id := range []core.RunID{"run-2", "run-4", "run-6"} {
		must(open(g, id, 0))
	}
	must(cancel(g, "run-4"))
	_, changed, err := retireUpto(g, "run-4")
	require.NoError(t, err)
	require.True(t, changed)

	for _, id := range []core.RunID{"run-1", "run-3", "run-4", "run-", "a"} {
		_, err := open(g, id, 0)
		require.ErrorIs(t, err, core.ErrRunRetired, "%s is up to the watermark", id)
		rep := g.Step(core.Command{Op: core.OpAdmit, Run: id, Key: "k", Epoch: 1})
		require.Equal(t, core.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRetired}, rep.Admit, "%s", id)
		v, _, err := g.Status(id, "")
		require.NoError(t, err)
		require.Equal(t, core.RunRetired, v.Status, "%s", id)
	}
	res := must(admit(g, "run-2", "k", 1, false, 0))
	require.Equal(t, core.AnswerAdmit, res.Answer, "a run the gate holds below the watermark lives on")
	_, _, err = retireUpto(g, "run-2")
	require.ErrorIs(t, err, core.ErrNotFinished)
	must(complete(g, "run-2", "k", core.OutcomeOK, "x"))
	_, changed, err = retireUpto(g, "run-2")
	require.NoError(t, err)
	require.True(t, changed)
	runs, bytes, upto := g.Retired()
	require.Equal(t, []any{0, 0, core.RunID("run-4")}, []any{runs, bytes, upto}, "nothing listed, the watermark where it was")
	require.Equal(t, 1, g.Len())
	res = must(admit(g, "run-2", "k", 1, false, 0))
	require.Equal(t, core.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRetired}, res, "no key of it is admitted again (P3)")

	_, err = open(g, "run-5", 0)
	require.NoError(t, err, "above the watermark an id is new")
	_, changed, err = retireUpto(g, "run-3")
	require.NoError(t, err)
	require.False(t, changed, "an id up to the watermark is retired already")
	require.NoError(t, g.CheckInvariants())

	snap := must(g.MarshalBinary())
	require.Equal(t, []byte{4, 2, 5, 'r', 'u', 'n', '-', '4', 0}, snap[:9], "version 4, two runs, the watermark, no listed id")
	v3 := append([]byte{3}, snap[1:]...) // the same bytes: its runs have no effects, so no notes
	require.NoError(t, core.New(core.DefaultLimits()).UnmarshalBinary(v3), "version 3, as an older build wrote it")
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	require.NoError(t, h.CheckInvariants())
	require.Equal(t, snap, must(h.MarshalBinary()))
	_, err = open(h, "run-3", 0)
	require.ErrorIs(t, err, core.ErrRunRetired, "a restored gate keeps the watermark")
	for _, id := range []core.RunID{"run-5", "run-6"} {
		v, _, err := h.Status(id, "")
		require.NoError(t, err)
		require.Equal(t, core.RunActive, v.Status, "%s", id)
	}
}

// TestRetireUptoNeedsNoRoom: the watermark lists nothing, so RetiredMax does not bound
// it; the listed ids and the watermark together refuse what either refuses.
func TestRetireUptoNeedsNoRoom(t *testing.T) {
	l := core.DefaultLimits()
	l.RetiredMax = 1
	g := core.New(l)
	retireAll(t, g, []core.RunID{"m"})
	for _, id := range []core.RunID{"b", "d", "z"} {
		_, changed, err := retireUpto(g, id)
		require.NoError(t, err, "%s", id)
		require.True(t, changed, "%s", id)
	}
	_, _, err := retire(g, "zz")
	require.ErrorIs(t, err, core.ErrTooManyRetired)
	for _, id := range []core.RunID{"a", "m", "y", "z"} {
		_, err := open(g, id, 0)
		require.ErrorIs(t, err, core.ErrRunRetired, "%s", id)
	}
	_, err = open(g, "zz", 0)
	require.NoError(t, err)
	require.NoError(t, g.CheckInvariants())
}

// TestARetiredRunAnswers: every action on a retired run, as the spec answers it:
// admits denied (retired) whatever the key or epoch, so none is admitted again (P3);
// open, decide, complete and fence refused with run_retired; cancel, timeout, status
// and a second retire report it unchanged. None changes the state.
func TestARetiredRunAnswers(t *testing.T) {
	g := runWith(t, func(g *core.Gate) {
		must(admit(g, "r", "a", 1, false, 0))
		must(complete(g, "r", "a", core.OutcomeOK, "x"))
	})
	must(cancel(g, "r"))
	_, _, err := retire(g, "r")
	require.NoError(t, err)
	before := must(g.MarshalBinary())
	retired := core.RunView{ID: "r", Status: core.RunRetired}

	for _, c := range []core.Command{
		{Op: core.OpAdmit, Key: "a", Epoch: 1},
		{Op: core.OpAdmit, Key: "a", Epoch: 3},
		{Op: core.OpAdmit, Key: "new", Epoch: 1, Gated: true},
	} {
		c.Run = "r"
		rep := g.Step(c)
		require.NoError(t, rep.Err)
		require.Equal(t, core.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRetired}, rep.Admit, "%+v", c)
		require.False(t, rep.Persist)
	}
	for _, c := range []core.Command{
		{Op: core.OpOpen},
		{Op: core.OpDecide, Key: "a", Decision: core.Approve},
		{Op: core.OpComplete, Key: "a", Outcome: core.OutcomeOK, Result: "x"},
		{Op: core.OpFence},
	} {
		c.Run = "r"
		rep := g.Step(c)
		require.ErrorIs(t, rep.Err, core.ErrRunRetired, "%s", c.Op)
	}
	for _, op := range []core.Op{core.OpCancel, core.OpTimeout, core.OpStatus, core.OpRetire} {
		rep := g.Step(core.Command{Op: op, Run: "r", Key: "a"})
		require.NoError(t, rep.Err, "%s", op)
		require.Equal(t, retired, rep.Run, "%s", op)
		require.False(t, rep.Persist, "%s", op)
		require.Equal(t, core.Effect{}, rep.Effect.Effect, "%s", op)
	}
	require.Equal(t, before, must(g.MarshalBinary()))
}

// retireAll opens, cancels and retires each id in order.
func retireAll(t *testing.T, g *core.Gate, ids []core.RunID) {
	t.Helper()
	for _, id := range ids {
		must(open(g, id, 0))
		must(cancel(g, id))
		_, changed, err := retire(g, id)
		require.NoError(t, err)
		require.True(t, changed)
	}
}

// TestRetiredIdsSurviveASnapshot: retired ids (more than one block's worth, so that
// blocks form and merge) are kept by a snapshot and its restore; the encoding is the
// same whatever order they were retired in; a restored gate still refuses them.
func TestRetiredIdsSurviveASnapshot(t *testing.T) {
	ids := make([]core.RunID, 5000)
	for i := range ids {
		ids[i] = core.RunID(fmt.Sprintf("run-%05d", i))
	}
	a, b := core.New(core.DefaultLimits()), core.New(core.DefaultLimits())
	retireAll(t, a, ids)
	shuffled := append([]core.RunID(nil), ids...)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	retireAll(t, b, shuffled)
	must(open(a, "live", 0))
	must(open(b, "live", 0))
	snapA, snapB := must(a.MarshalBinary()), must(b.MarshalBinary())
	require.Equal(t, snapA, snapB, "the encoding depends on the order of retirement")

	c := core.New(core.DefaultLimits())
	require.NoError(t, c.UnmarshalBinary(snapA))
	require.NoError(t, c.CheckInvariants())
	require.Equal(t, snapA, must(c.MarshalBinary()))
	runs, bytes, _ := c.Retired()
	require.Equal(t, len(ids), runs)
	require.Equal(t, len(ids)*(len(ids[0])+4)+4, bytes, "a restored set is one block: each id's bytes and offset, and one more offset")
	for _, id := range []core.RunID{ids[0], ids[len(ids)/2], ids[len(ids)-1]} {
		_, err := open(c, id, 0)
		require.ErrorIs(t, err, core.ErrRunRetired, "%s", id)
	}
	_, err := open(c, "run-99999", 0)
	require.NoError(t, err, "an id never retired is refused")
}

// TestCutKeepsARunRetiredDuringIt: a run retired while a cut is taken is in the cut
// as it was at BeginCut, taken before or after its retirement; after End the gate's
// order is whole again and the next snapshot has it retired.
func TestCutKeepsARunRetiredDuringIt(t *testing.T) {
	for _, takeFirst := range []bool{false, true} {
		g := core.New(core.DefaultLimits())
		for i := range 20 {
			id := core.RunID(fmt.Sprint("r", i))
			must(open(g, id, 0))
			must(admit(g, id, "a", 1, false, 0))
			must(complete(g, id, "a", core.OutcomeOK, "result"))
		}
		want := must(g.MarshalBinary())
		cut := g.BeginCut()
		buf := appendHeader(cut)
		if takeFirst {
			require.True(t, cut.Take(100))
			buf = appendTaken(t, cut, buf)
		}
		for i := 0; i < 20; i += 2 {
			_, changed, err := retire(g, core.RunID(fmt.Sprint("r", i)))
			require.NoError(t, err)
			require.True(t, changed)
		}
		require.NoError(t, g.CheckInvariants())
		for cut.Take(3) {
			buf = appendTaken(t, cut, buf)
		}
		cut.End()
		require.NoError(t, g.CheckInvariants())
		require.Equal(t, 10, g.Len())

		restored := core.New(core.DefaultLimits())
		require.NoError(t, restored.UnmarshalBinary(buf))
		require.Equal(t, want, must(restored.MarshalBinary()), "take first %t", takeFirst)

		now := core.New(core.DefaultLimits())
		require.NoError(t, now.UnmarshalBinary(must(g.MarshalBinary())))
		runs, _, _ := now.Retired()
		require.Equal(t, 10, runs)
		require.Equal(t, 10, now.Len())
	}
}

// TestRetiredMaxIsALimit: with Limits.RetiredMax retired, retire is refused and the
// run stays as it was.
func TestRetiredMaxIsALimit(t *testing.T) {
	l := core.DefaultLimits()
	l.RetiredMax = 2
	g := core.New(l)
	retireAll(t, g, []core.RunID{"a", "b"})
	must(open(g, "c", 0))
	require.NoError(t, g.CheckInvariants(), "RetiredMax retired runs are within the limit")
	_, _, err := retire(g, "c")
	require.ErrorIs(t, err, core.ErrTooManyRetired)
	v, _, err := g.Status("c", "")
	require.NoError(t, err)
	require.Equal(t, core.RunActive, v.Status)
}

// TestCutKeepsTheRetiredIdsOfItsBeginning: ids retired during a cut (enough to seal
// and merge blocks) are not in its header, encoded after them.
func TestCutKeepsTheRetiredIdsOfItsBeginning(t *testing.T) {
	ids := func(from, to int) []core.RunID {
		var out []core.RunID
		for i := from; i < to; i++ {
			out = append(out, core.RunID(fmt.Sprintf("id-%05d", i)))
		}
		return out
	}
	g := core.New(core.DefaultLimits())
	retireAll(t, g, ids(0, 3000))
	want := must(g.MarshalBinary())
	cut := g.BeginCut()
	retireAll(t, g, ids(3000, 9000))
	buf := appendHeader(cut)
	for cut.Take(100) {
		buf = appendTaken(t, cut, buf)
	}
	cut.End()
	require.Equal(t, want, buf)
	require.NoError(t, g.CheckInvariants())
}

// TestRetiredMaxDefault is what docs/server.md documents for serve --max-retired.
func TestRetiredMaxDefault(t *testing.T) {
	require.Equal(t, 67108864, core.DefaultLimits().RetiredMax)
}

// TestSnapshotVersionsBeyondAreRefused: a snapshot of a version before 1 or after 4
// is malformed, even when its bytes would read as version 4's.
func TestSnapshotVersionsBeyondAreRefused(t *testing.T) {
	g := core.New(core.DefaultLimits())
	_, _, err := retireUpto(g, "w")
	require.NoError(t, err)
	v4 := must(g.MarshalBinary())
	require.Equal(t, byte(4), v4[0])
	for _, version := range []byte{0, 5} {
		bad := append([]byte{version}, v4[1:]...)
		require.ErrorIs(t, core.New(core.DefaultLimits()).UnmarshalBinary(bad), core.ErrCodec, "version %d", version)
	}
	// version 0 before bytes that read as version 1's, and 5 before bytes that read
	// as version 4's but for the watermark (which only 3 and 4 have)
	run := []byte{1, 'r', 1, 1, 0, 1, 1, 'k', 1, 1, 0, 0, 1, 1, 0}
	v0 := append([]byte{0, 1}, run...)
	v5 := append(append([]byte{5, 1, 0}, run...), 0)
	for name, bad := range map[string][]byte{"version 0": v0, "version 5": v5} {
		require.ErrorIs(t, core.New(core.DefaultLimits()).UnmarshalBinary(bad), core.ErrCodec, name)
	}
}

// TestSnapshotVersion1IsRead: snapshots written before retirement (version 1, no
// retired ids) and before notes (version 2, no watermark, no notes) are still read,
// as the same state: the held effect is pending, with no note, and this build writes
// it as version 4 with none.
func TestSnapshotVersion1IsRead(t *testing.T) {
	run := []byte{1, 'r', 1, 1, 0, 1, 1, 'k', 1, 1, 0, 0, 1, 1, 0} // "r" active at 1, "k" held, gated, pending
	v1 := append([]byte{1, 1}, run...)
	v2 := append([]byte{2, 1, 0}, run...)
	v4 := append(append([]byte{4, 1, 0, 0}, run...), 0)
	for name, old := range map[string][]byte{"version 1": v1, "version 2": v2} {
		h := core.New(core.DefaultLimits())
		require.NoError(t, h.UnmarshalBinary(old), name)
		require.Equal(t, v4, must(h.MarshalBinary()), name)
		rv, e, err := h.Status("r", "k")
		require.NoError(t, err)
		require.Equal(t, []core.Key{"k"}, rv.Pending, name)
		require.Nil(t, e.Note, name)
		list, more := h.Inbox(core.InboxQuery{Limit: 10})
		require.Equal(t, []core.Approval{{Run: "r", Key: "k"}}, list, "%s: in the inbox, since unknown", name)
		require.False(t, more)
	}
}

// TestAppendRetiredKeepsItsBudget: each AppendRetired appends budget ids (at least
// one), the last what is left, and reports whether any is left, one included.
func TestAppendRetiredKeepsItsBudget(t *testing.T) {
	g := core.New(core.DefaultLimits())
	ids := make([]core.RunID, 16)
	for i := range ids {
		ids[i] = core.RunID(fmt.Sprintf("r%02d", i))
	}
	retireAll(t, g, ids)
	cut := g.BeginCut()
	defer cut.End()
	buf := cut.AppendHeader(nil)
	for _, want := range []struct {
		budget, ids int
		more        bool
	}{{0, 1, true}, {7, 7, true}, {7, 7, true}, {7, 1, false}} {
		before := len(buf)
		var more bool
		buf, more = cut.AppendRetired(buf, want.budget)
		require.Equal(t, want.ids*4, len(buf)-before, "each id is a length and 3 bytes")
		require.Equal(t, want.more, more)
	}
}
