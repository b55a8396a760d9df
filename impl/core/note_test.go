package core_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
)

// Tests of what an approval says (note.go) and of the inbox (inbox.go): the notes
// are kept and bounded, and they change no decision.

// TestNoteRefusals: each bad note is invalid_argument, naming its field, and changes
// nothing; the good ones at their bounds are accepted.
func TestNoteRefusals(t *testing.T) {
	gated := func(f func(*core.Command)) core.Command {
		c := core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true, Now: 5}
		f(&c)
		return c
	}
	reject := func(f func(*core.Command)) core.Command {
		c := core.Command{Op: core.OpDecide, Run: "r", Key: "p", Decision: core.Reject}
		f(&c)
		return c
	}
	long := strings.Repeat("é", core.DescriptionBytesMax/2) // 512 bytes
	bad := []struct {
		name, field string
		c           core.Command
	}{
		{"description over 512 bytes", "description", gated(func(c *core.Command) { c.Description = long + "x" })},
		{"description not UTF-8", "description", gated(func(c *core.Command) { c.Description = "ab\xffcd" })},
		{"description cut in a rune", "description", gated(func(c *core.Command) { c.Description = "é"[:1] })},
		{"description with ESC", "description", gated(func(c *core.Command) { c.Description = "\x1b[31mred" })},
		{"description with NUL", "description", gated(func(c *core.Command) { c.Description = "a\x00b" })},
		{"description with CR", "description", gated(func(c *core.Command) { c.Description = "line\rover" })},
		{"description with DEL", "description", gated(func(c *core.Command) { c.Description = "a\x7f" })},
		{"description with a C1 control", "description", gated(func(c *core.Command) { c.Description = "a\u0085b" })},
		{"digest upper case", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = strings.ToUpper(digest) })},
		{"digest too short", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = digest[:len(digest)-1] })},
		{"digest too long", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = digest + "0" })},
		{"digest of another algorithm", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = "md5:" + digest[7:39] })},
		{"digest with no algorithm", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = digest[7:] })},
		{"digest not hex", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = digest[:70] + "g" })},
		{"digest with a space", "args_digest", gated(func(c *core.Command) { c.ArgsDigest = "sha256: " + digest[8:] })},
		{"reason over 512 bytes", "reason", reject(func(c *core.Command) { c.Reason = long + "!" })},
		{"reason with a control", "reason", reject(func(c *core.Command) { c.Reason = "no\x07" })},
		{"reason on an admit", "reason", gated(func(c *core.Command) { c.Reason = "why" })},
		{"description on a decide", "description", reject(func(c *core.Command) { c.Description = "what" })},
		{"digest on a decide", "args_digest", reject(func(c *core.Command) { c.ArgsDigest = digest })},
		{"description on an open", "description", core.Command{Op: core.OpOpen, Run: "n", Description: "x"}},
		{"reason on an open", "reason", core.Command{Op: core.OpOpen, Run: "n", Reason: "x"}},
		{"reason on a complete", "reason", core.Command{Op: core.OpComplete, Run: "r", Key: "a", Outcome: core.OutcomeOK, Reason: "x"}},
		{"digest on a status", "args_digest", core.Command{Op: core.OpStatus, Run: "r", ArgsDigest: digest}},
		{"description on a cancel", "description", core.Command{Op: core.OpCancel, Run: "r", Description: "x"}},
		{"by on an admit", "by", gated(func(c *core.Command) { c.By = "alice" })},
		{"by on a complete", "by", core.Command{Op: core.OpComplete, Run: "r", Key: "a", Outcome: core.OutcomeOK, By: "alice"}},
		{"by over 128 bytes", "by", reject(func(c *core.Command) { c.By = strings.Repeat("b", core.ByBytesMax+1) })},
		{"by with a tab", "by", reject(func(c *core.Command) { c.By = "al\tice" })},
		{"by beginning with a line feed", "by", reject(func(c *core.Command) { c.By = "\nalice" })},
		{"by of 129 bytes", "by", reject(func(c *core.Command) { c.By = strings.Repeat("b", 129) })},
		{"by with a line feed", "by", reject(func(c *core.Command) { c.By = "al\nice" })},
		{"by with ESC", "by", core.Command{Op: core.OpCancel, Run: "r", By: "\x1b[2J"}},
		{"by not UTF-8", "by", core.Command{Op: core.OpFence, Run: "r", By: "a\xff"}},
	}
	g := runWith(t, func(g *core.Gate) {
		must(admit(g, "r", "a", 1, false, 0))
		must(admit(g, "r", "p", 1, true, 0))
	})
	before := must(g.MarshalBinary())
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			rep := g.Step(tc.c)
			require.ErrorIs(t, rep.Err, core.ErrInvalid)
			require.ErrorContains(t, rep.Err, tc.field+":")
			require.False(t, rep.Persist)
			require.Equal(t, before, must(g.MarshalBinary()), "a refused note changed the state")
		})
	}
	good := []struct {
		name string
		c    core.Command
	}{
		{"description of 512 bytes, tab and line feed", gated(func(c *core.Command) { c.Description = long[:510] + "\t\n" })},
		{"description with U+FFFD and a bidi mark", gated(func(c *core.Command) { c.Description = "\ufffd\u202e\u200b" })},
		{"sha512 digest", gated(func(c *core.Command) { c.ArgsDigest = "sha512:" + strings.Repeat("ab", 64) })},
		{"reason of 512 bytes", reject(func(c *core.Command) { c.Reason = long })},
		{"by of 128 bytes on a decide", reject(func(c *core.Command) { c.By = strings.Repeat("é", 64) })},
		{"reason and by on a cancel", core.Command{Op: core.OpCancel, Run: "r", Reason: "runaway", By: "ops"}},
		{"reason and by on a fence", core.Command{Op: core.OpFence, Run: "r", Reason: "new attempt", By: "ops"}},
	}
	for _, tc := range good {
		g := runWith(t, func(g *core.Gate) { must(admit(g, "r", "p", 1, true, 0)) })
		require.NoError(t, g.Step(tc.c).Err, tc.name)
		require.NoError(t, g.CheckInvariants(), tc.name)
	}
}

// TestNoteKept: the note of a gated admit is kept with its approval and with the
// effect afterwards (approved, admitted, completed, rejected) and the decided key
// gets the reason; a sibling rejected with it keeps its own note, an ungated one has
// none; asking again changes no note; a fence drops the effect and its note.
func TestNoteKept(t *testing.T) {
	note := func(g *core.Gate, k core.Key) *core.Note {
		t.Helper()
		_, e, err := g.Status("r", k)
		require.NoError(t, err)
		return e.Note
	}
	g := runWith(t, func(*core.Gate) {})
	step := func(c core.Command) core.Reply {
		t.Helper()
		c.Run = "r"
		rep := g.Step(c)
		require.NoError(t, rep.Err)
		return rep
	}
	step(core.Command{Op: core.OpAdmit, Key: "wire", Epoch: 1, Gated: true, Now: 100, Description: "wire 5 EUR", ArgsDigest: digest})
	require.Equal(t, &core.Note{Since: 100, Description: "wire 5 EUR", ArgsDigest: digest}, note(g, "wire"))
	step(core.Command{Op: core.OpAdmit, Key: "wire", Epoch: 1, Gated: true, Now: 200, Description: "another"})
	require.Equal(t, &core.Note{Since: 100, Description: "wire 5 EUR", ArgsDigest: digest}, note(g, "wire"), "asking again changes nothing")
	step(core.Command{Op: core.OpAdmit, Key: "sibling", Epoch: 1, Description: "not gated"})
	require.Nil(t, note(g, "sibling"), "an admit that opens no approval keeps no note")
	step(core.Command{Op: core.OpDecide, Key: "wire", Decision: core.Approve, Reason: "looks right"})
	require.Equal(t, &core.Note{Since: 100, Description: "wire 5 EUR", ArgsDigest: digest, Reason: "looks right"}, note(g, "wire"))
	rep := step(core.Command{Op: core.OpDecide, Key: "wire", Decision: core.Approve, Reason: "again"})
	require.True(t, rep.Decide.Repeat)
	require.Equal(t, "looks right", note(g, "wire").Reason, "a repeat keeps the first reason")
	step(core.Command{Op: core.OpAdmit, Key: "wire", Epoch: 1})
	step(core.Command{Op: core.OpComplete, Key: "wire", Outcome: core.OutcomeOK, Result: "done"})
	require.Equal(t, "looks right", note(g, "wire").Reason, "kept once admitted and completed")

	step(core.Command{Op: core.OpAdmit, Key: "a", Epoch: 1, Gated: true, Now: 300, Description: "A"})
	step(core.Command{Op: core.OpAdmit, Key: "b", Epoch: 1, Gated: true, Now: 301, Description: "B"})
	step(core.Command{Op: core.OpAdmit, Key: "c", Epoch: 1, Now: 302})
	step(core.Command{Op: core.OpDecide, Key: "a", Decision: core.Reject, Reason: "no"})
	require.Equal(t, &core.Note{Since: 300, Description: "A", Reason: "no"}, note(g, "a"))
	require.Equal(t, &core.Note{Since: 301, Description: "B"}, note(g, "b"), "a sibling keeps its own note, without the reason")
	require.Nil(t, note(g, "c"))
	for _, k := range []core.Key{"a", "b", "c"} {
		_, e, _ := g.Status("r", k)
		require.Equal(t, core.EffectRejected, e.Status, "%s", k)
	}

	step(core.Command{Op: core.OpAdmit, Key: "f", Epoch: 1, Gated: true, Now: 400, Description: "F"})
	step(core.Command{Op: core.OpFence})
	require.Nil(t, note(g, "f"), "fenced: absent, and its note with it")
	step(core.Command{Op: core.OpAdmit, Key: "f", Epoch: 2, Gated: true, Now: 500})
	require.Equal(t, &core.Note{Since: 500}, note(g, "f"), "asked again: a new approval, a new note")
	require.NoError(t, g.CheckInvariants())

	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(must(g.MarshalBinary())))
	for _, k := range []core.Key{"wire", "a", "b", "c", "f", "sibling"} {
		require.Equal(t, note(g, k), note(h, k), "a snapshot keeps %s's note", k)
	}
	require.Equal(t, g.StateBytes(), h.StateBytes())
}

// TestNoteStateFull: a note is state: a gated admit whose note would pass the budget
// is state_full, and so is a decision whose reason would; the same decision without
// a reason adds nothing and goes.
func TestNoteStateFull(t *testing.T) {
	l := core.DefaultLimits()
	l.StateBytesMax = (1 + runCost) + (1 + effectCost) + noteCost + 3 // run r, gated p with "abc"
	g := core.New(l)
	must(open(g, "r", 0))
	before := must(g.MarshalBinary())
	rep := g.Step(core.Command{Op: core.OpAdmit, Run: "r", Key: "p", Epoch: 1, Gated: true, Description: "abcd"})
	require.ErrorIs(t, rep.Err, core.ErrStateFull)
	require.Equal(t, before, must(g.MarshalBinary()))
	require.NoError(t, g.Step(core.Command{Op: core.OpAdmit, Run: "r", Key: "p", Epoch: 1, Gated: true, Description: "abc"}).Err)
	require.Equal(t, l.StateBytesMax, g.StateBytes())
	before = must(g.MarshalBinary())
	rep = g.Step(core.Command{Op: core.OpDecide, Run: "r", Key: "p", Decision: core.Approve, Reason: "x"})
	require.ErrorIs(t, rep.Err, core.ErrStateFull)
	require.Equal(t, before, must(g.MarshalBinary()))
	require.NoError(t, g.Step(core.Command{Op: core.OpDecide, Run: "r", Key: "p", Decision: core.Approve}).Err)
	require.NoError(t, g.CheckInvariants())
}

// TestNoteOfARestoredApproval: an approval restored from a snapshot of an older
// build has no note; a decision with a reason gives it one, counted in the budget.
func TestNoteOfARestoredApproval(t *testing.T) {
	v2 := []byte{2, 1, 0, 1, 'r', 1, 1, 0, 1, 1, 'k', 1, 1, 0, 0, 1, 1, 0}
	g := core.New(core.DefaultLimits())
	require.NoError(t, g.UnmarshalBinary(v2))
	before := g.StateBytes()
	stepOK(t, g, core.Command{Op: core.OpDecide, Run: "r", Key: "k", Decision: core.Reject, Reason: "late"})
	_, e, err := g.Status("r", "k")
	require.NoError(t, err)
	require.Equal(t, &core.Note{Reason: "late"}, e.Note)
	require.Equal(t, before+noteCost+4, g.StateBytes())
	require.NoError(t, g.CheckInvariants())
}

// noteless returns effects without their notes.
func noteless(effects []core.EffectView) []core.EffectView {
	for i := range effects {
		effects[i].Note = nil
	}
	return effects
}

// stepOK steps g with c, which must not be refused.
func stepOK(t *testing.T, g *core.Gate, c core.Command) core.Reply {
	t.Helper()
	rep := g.Step(c)
	require.NoError(t, rep.Err, "%+v", c)
	return rep
}

// withNotes returns cmds with a note on every admit, decide, cancel and fence: a
// description, a digest, a reason or who asked, drawn from rng (some with none).
func withNotes(rng *rand.Rand, cmds []core.Command) []core.Command {
	out := slices.Clone(cmds)
	for i := range out {
		switch c := &out[i]; c.Op {
		case core.OpAdmit:
			if rng.IntN(4) > 0 {
				c.Description = fmt.Sprintf("effect %s of %s\nstep %d", c.Key, c.Run, i)
			}
			if rng.IntN(2) == 0 {
				c.ArgsDigest = digest
			}
		case core.OpDecide, core.OpCancel, core.OpFence:
			if rng.IntN(4) > 0 {
				c.Reason = fmt.Sprintf("because %d", i)
			}
			if rng.IntN(2) == 0 {
				c.By = fmt.Sprintf("token-%d", rng.IntN(3))
			}
		}
	}
	return out
}

// TestNotesChangeNoDecision: the same random histories with and without notes get
// the same replies, step by step, and end in the same state but for the notes
// (model == core holds for either; conformance drives the core with notes).
func TestNotesChangeNoDecision(t *testing.T) {
	randomHistories(200, 11, 200, func(seed uint64, plain *core.Gate, cmds []core.Command) {
		noted := core.New(core.DefaultLimits())
		rng := rand.New(rand.NewPCG(seed, 12))
		notes := withNotes(rng, cmds)
		for i := range cmds {
			cmds[i].Description, cmds[i].ArgsDigest, cmds[i].Reason, cmds[i].By = "", "", "", ""
		}
		for i, c := range notes {
			want, got := plain.Step(cmds[i]), noted.Step(c)
			if want.Err != nil || got.Err != nil {
				require.Equal(t, want.Err, got.Err, "seed %d, step %d", seed, i)
				continue
			}
			want.Effect.Note, got.Effect.Note = nil, nil
			require.Equal(t, want, got, "seed %d, step %d: %+v", seed, i, c)
		}
		for _, id := range plain.RunIDs() {
			require.Equal(t, noteless(plain.Effects(id)), noteless(noted.Effects(id)), "seed %d, run %s", seed, id)
		}
		require.Equal(t, plain.RunIDs(), noted.RunIDs())
		require.NoError(t, noted.CheckInvariants())
	})
}

// TestInboxOrder: the inbox lists every pending approval oldest first (the Now of the
// admit that opened it), then by run, then by key, whatever the order of the runs; an
// approval that closes (approved, rejected, cancelled, fenced, timed out) leaves it.
func TestInboxOrder(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, r := range []core.RunID{"b", "a", "c", "d", "t"} {
		deadline := core.Time(0)
		if r == "t" {
			deadline = 1000
		}
		must(open(g, r, deadline))
	}
	for _, a := range []struct {
		r   core.RunID
		k   core.Key
		now core.Time
	}{{"b", "z", 30}, {"a", "y", 30}, {"a", "x", 30}, {"c", "w", 10}, {"b", "v", 20}, {"d", "u", 40}, {"t", "s", 5}} {
		rep := g.Step(core.Command{Op: core.OpAdmit, Run: a.r, Key: a.k, Epoch: 1, Gated: true, Now: a.now, Description: "d-" + string(a.k)})
		require.NoError(t, rep.Err)
		require.Equal(t, core.AnswerHeld, rep.Admit.Answer)
	}
	// a sibling held behind them is no approval of its own
	must(admit(g, "a", "sibling", 1, false, 31))
	inbox := func() []string {
		list, more := g.Inbox(core.InboxQuery{Limit: 100})
		require.False(t, more)
		var out []string
		for _, a := range list {
			require.Equal(t, "d-"+string(a.Key), a.Description)
			out = append(out, fmt.Sprintf("%d %s %s", a.Since, a.Run, a.Key))
		}
		return out
	}
	require.Equal(t, []string{"5 t s", "10 c w", "20 b v", "30 a x", "30 a y", "30 b z", "40 d u"}, inbox())
	steps := []struct {
		name string
		c    core.Command
		want []string
	}{
		{"approve one of run a", core.Command{Op: core.OpDecide, Run: "a", Key: "x", Decision: core.Approve}, []string{"5 t s", "10 c w", "20 b v", "30 a y", "30 b z", "40 d u"}},
		{"reject run b's v closes z too", core.Command{Op: core.OpDecide, Run: "b", Key: "v", Decision: core.Reject}, []string{"5 t s", "10 c w", "30 a y", "40 d u"}},
		{"cancel c", core.Command{Op: core.OpCancel, Run: "c"}, []string{"5 t s", "30 a y", "40 d u"}},
		{"fence d", core.Command{Op: core.OpFence, Run: "d"}, []string{"5 t s", "30 a y"}},
		{"an admit past t's deadline times it out", core.Command{Op: core.OpAdmit, Run: "t", Key: "late", Epoch: 1, Now: 1000}, []string{"30 a y"}},
		{"approve the last", core.Command{Op: core.OpDecide, Run: "a", Key: "y", Decision: core.Approve}, nil},
	}
	for _, s := range steps {
		require.NoError(t, g.Step(s.c).Err, s.name)
		require.Equal(t, s.want, inbox(), s.name)
		require.NoError(t, g.CheckInvariants(), s.name)
	}
	must(admit(g, "d", "again", 2, true, 50))
	_, err := timeout(g, "d")
	require.NoError(t, err)
	require.Nil(t, inbox(), "the timeout of a run closes its approvals")
}

// TestInboxScopeAndPages: a scope keeps its runs' approvals only; pages of any size,
// each after the last of the one before, list every approval once, in order, with
// more set on every page but the last, and the approvals decided or opened between
// two pages do not disturb the others.
func TestInboxScopeAndPages(t *testing.T) {
	g := core.New(core.DefaultLimits())
	var all []core.InboxPos
	for r := 0; r < 5; r++ {
		id := core.RunID(fmt.Sprintf("team-%c-%d", "ab"[r%2], r))
		must(open(g, id, 0))
		for k := 0; k < 7; k++ {
			key := core.Key(fmt.Sprintf("k%d", k))
			now := core.Time((k*13 + r*5) % 17)
			stepOK(t, g, core.Command{Op: core.OpAdmit, Run: id, Key: key, Epoch: 1, Gated: true, Now: now})
			all = append(all, core.InboxPos{Since: now, Run: id, Key: key})
		}
	}
	slices.SortFunc(all, core.InboxPos.Compare)
	teamA := func(r core.RunID) bool { return strings.HasPrefix(string(r), "team-a-") }
	scoped := slices.DeleteFunc(slices.Clone(all), func(p core.InboxPos) bool { return !teamA(p.Run) })
	require.Len(t, scoped, 21)
	for _, tc := range []struct {
		name  string
		scope func(core.RunID) bool
		want  []core.InboxPos
	}{{"every run", nil, all}, {"team a", teamA, scoped}} {
		for _, limit := range []int{1, 2, 5, 34, 35, 36, 100} {
			var got []core.InboxPos
			var after *core.InboxPos
			pages := 0
			for {
				list, more := g.Inbox(core.InboxQuery{Scope: tc.scope, After: after, Limit: limit})
				pages++
				require.LessOrEqual(t, len(list), limit)
				for _, a := range list {
					got = append(got, a.Pos())
				}
				if !more {
					break
				}
				require.Len(t, list, limit, "%s, limit %d: a page with more is full", tc.name, limit)
				last := list[len(list)-1].Pos()
				after = &last
			}
			require.Equal(t, tc.want, got, "%s, limit %d", tc.name, limit)
			require.Equal(t, max(1, (len(tc.want)+limit-1)/limit), pages, "%s, limit %d", tc.name, limit)
		}
	}
	list, more := g.Inbox(core.InboxQuery{Limit: 0})
	require.Len(t, list, 1, "a limit below 1 is 1")
	require.True(t, more)

	// Between two pages: the first approval after the page is approved, and one is
	// opened before the cursor: the next page goes on after the cursor.
	first, more := g.Inbox(core.InboxQuery{Limit: 10})
	require.True(t, more)
	last := first[9].Pos()
	stepOK(t, g, core.Command{Op: core.OpDecide, Run: all[10].Run, Key: all[10].Key, Decision: core.Approve})
	must(open(g, "team-b-late", 0))
	stepOK(t, g, core.Command{Op: core.OpAdmit, Run: "team-b-late", Key: "early", Epoch: 1, Gated: true, Now: -1})
	next, _ := g.Inbox(core.InboxQuery{After: &last, Limit: 10})
	require.Equal(t, all[11], next[0].Pos())
}

// TestPendingIn: a run's pending approvals, in the inbox's order with their notes,
// are those the inbox lists of it; a run with none, an unknown run and a held
// sibling list nothing.
func TestPendingIn(t *testing.T) {
	g := core.New(core.DefaultLimits())
	for _, r := range []core.RunID{"a", "b", "quiet"} {
		must(open(g, r, 0))
	}
	for _, a := range []struct {
		r   core.RunID
		k   core.Key
		now core.Time
	}{{"a", "z", 30}, {"a", "y", 30}, {"b", "x", 5}, {"a", "w", 40}, {"a", "v", 10}} {
		stepOK(t, g, core.Command{Op: core.OpAdmit, Run: a.r, Key: a.k, Epoch: 1, Gated: true, Now: a.now, Description: "d-" + string(a.k)})
	}
	must(admit(g, "a", "sibling", 1, false, 50))
	shown := func(list []core.Approval) []string {
		var out []string
		for _, a := range list {
			out = append(out, fmt.Sprintf("%d %s %s %s", a.Since, a.Run, a.Key, a.Description))
		}
		return out
	}
	require.Equal(t, []string{"10 a v d-v", "30 a y d-y", "30 a z d-z", "40 a w d-w"}, shown(g.PendingIn("a")))
	require.Equal(t, []string{"5 b x d-x"}, shown(g.PendingIn("b")))
	require.Empty(t, g.PendingIn("quiet"))
	require.Empty(t, g.PendingIn("unknown"))
	list, _ := g.Inbox(core.InboxQuery{Scope: func(r core.RunID) bool { return r == "a" }, Limit: 100})
	require.Equal(t, list, g.PendingIn("a"), "what the inbox lists of the run")
	stepOK(t, g, core.Command{Op: core.OpDecide, Run: "b", Key: "x", Decision: core.Approve})
	require.Empty(t, g.PendingIn("b"), "decided")
}

// TestApprovalOfAndDue: ApprovalOf reads one key's approval with its note, pending
// or decided, and nothing for a key or a run the gate does not hold; Due says
// whether an admit at a time would time its run out first.
func TestApprovalOfAndDue(t *testing.T) {
	g := core.New(core.DefaultLimits())
	must(open(g, "a", 100))
	must(open(g, "b", 0))
	stepOK(t, g, core.Command{Op: core.OpAdmit, Run: "a", Key: "k", Epoch: 1, Gated: true, Now: 7, Description: "pay"})
	a, ok := g.ApprovalOf("a", "k")
	require.True(t, ok)
	require.Equal(t, core.Approval{Run: "a", Key: "k", Note: core.Note{Since: 7, Description: "pay"}}, a)
	stepOK(t, g, core.Command{Op: core.OpDecide, Run: "a", Key: "k", Decision: core.Approve, Reason: "fine"})
	a, ok = g.ApprovalOf("a", "k")
	require.True(t, ok, "a decided effect keeps its note")
	require.Equal(t, core.Note{Since: 7, Description: "pay", Reason: "fine"}, a.Note)
	for _, tc := range []struct{ run, key string }{{"a", "other"}, {"nobody", "k"}} {
		_, ok := g.ApprovalOf(core.RunID(tc.run), core.Key(tc.key))
		require.False(t, ok, "%s/%s", tc.run, tc.key)
	}
	for _, tc := range []struct {
		run  string
		now  core.Time
		want bool
	}{{"a", 99, false}, {"a", 100, true}, {"a", 5000, true}, {"b", 5000, false}, {"nobody", 5000, false}} {
		require.Equal(t, tc.want, g.Due(core.RunID(tc.run), tc.now), "%s at %d", tc.run, tc.now)
	}
	must(timeout(g, "a"))
	require.False(t, g.Due("a", 5000), "a timed-out run is not due again")
}

// TestCommandNoteIsVersion3: a command with a note is written as version 3, its
// three strings after now; one without keeps version 1's bytes, so that a log
// written before notes replays as it did. A version 3 record with no note, or with
// one on an op that has none, is malformed.
func TestCommandNoteIsVersion3(t *testing.T) {
	c := core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1, Gated: true, Now: 7, Description: "ab", ArgsDigest: digest}
	want := append(append([]byte{3, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 2, 'a', 'b', byte(len(digest))}, digest...), 0)
	require.Equal(t, want, core.AppendCommand(nil, c))
	require.Equal(t, c, must(core.DecodeCommand(want)))
	d := core.Command{Op: core.OpDecide, Run: "r", Key: "k", Decision: core.Reject, Now: 8, Reason: "no"}
	wantD := []byte{3, 3, 1, 'r', 1, 'k', 0, 0, 2, 0, 0, 0, 8, 0, 0, 2, 'n', 'o'}
	require.Equal(t, wantD, core.AppendCommand(nil, d))
	require.Equal(t, d, must(core.DecodeCommand(wantD)))
	for _, one := range []core.Command{
		{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1, Description: "only"},
		{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1, ArgsDigest: digest},
	} {
		b := core.AppendCommand(nil, one)
		require.Equal(t, byte(3), b[0], "%+v: a note of one text is version 3", one)
		require.Equal(t, one, must(core.DecodeCommand(b)))
	}
	c.Description, c.ArgsDigest = "", ""
	v1 := []byte{1, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7}
	require.Equal(t, v1, core.AppendCommand(nil, c), "no note: version 1")
	for _, version := range []byte{0, 4, 5} {
		_, err := core.DecodeCommand(append([]byte{version}, v1[1:]...))
		require.ErrorIs(t, err, core.ErrCodec, "version %d", version)
	}
	for name, bad := range map[string][]byte{
		"no note":                   {3, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 0, 0, 0},
		"a description on a cancel": {3, 5, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 1, 'x', 0, 0},
		"a reason with a control":   {3, 3, 1, 'r', 1, 'k', 0, 0, 2, 0, 0, 0, 8, 0, 0, 1, 7},
		"a digest that is none":     {3, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 0, 1, 'd', 0},
		"a note on a retire":        {3, 9, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 7, 1, 'x', 0, 0},
		"a string cut short":        {3, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 2, 'a'},
		"the reason missing":        {3, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 1, 'a', 0},
		"a trailing byte":           append(append([]byte(nil), want...), 0),
		"version 4":                 append([]byte{4}, want[1:]...),
	} {
		_, err := core.DecodeCommand(bad)
		require.ErrorIs(t, err, core.ErrCodec, name)
	}
}

// TestCommandByIsVersion4: a command that says who asked is written as version 4,
// version 3's strings then by; a version 4 record without a by, or with one on an
// op that has none, is malformed.
func TestCommandByIsVersion4(t *testing.T) {
	for _, tc := range []struct {
		c    core.Command
		want []byte
	}{
		{core.Command{Op: core.OpDecide, Run: "r", Key: "k", Decision: core.Approve, Now: 8, By: "al"},
			[]byte{4, 3, 1, 'r', 1, 'k', 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 2, 'a', 'l'}},
		{core.Command{Op: core.OpCancel, Run: "r", Now: 9, Reason: "no", By: "op"},
			[]byte{4, 5, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 2, 'n', 'o', 2, 'o', 'p'}},
		{core.Command{Op: core.OpFence, Run: "r", Now: 9, By: "op"},
			[]byte{4, 6, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2, 'o', 'p'}},
	} {
		require.Equal(t, tc.want, core.AppendCommand(nil, tc.c), "%+v", tc.c)
		require.Equal(t, tc.c, must(core.DecodeCommand(tc.want)))
	}
	for name, bad := range map[string][]byte{
		"no by":            {4, 6, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0},
		"a by on an admit": {4, 2, 1, 'r', 1, 'k', 1, 1, 0, 0, 0, 0, 7, 0, 0, 0, 2, 'o', 'p'},
		"a by with a tab":  {4, 6, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2, 'o', '\t'},
		"the by cut short": {4, 6, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 2, 'o'},
	} {
		_, err := core.DecodeCommand(bad)
		require.ErrorIs(t, err, core.ErrCodec, name)
	}
}

// TestLogOfAnOlderBuildReplays: records as a build before notes wrote them (version
// 1 and 2, byte for byte) replay to the state they made then: the approval they
// opened pending since the admit's time, with no texts, in the inbox.
func TestLogOfAnOlderBuildReplays(t *testing.T) {
	records := [][]byte{
		{1, 1, 1, 'r', 0, 0, 0, 0, 0, 0, 0, 0xe8, 0x07},      // open r (now 1000)
		{1, 2, 1, 'r', 1, 'g', 1, 1, 0, 0, 0, 0, 0xe9, 0x07}, // admit r g epoch 1 gated (now 1001)
		{1, 2, 1, 'r', 1, 'h', 1, 1, 0, 0, 0, 0, 0xea, 0x07}, // admit r h gated (now 1002)
		{1, 3, 1, 'r', 1, 'g', 0, 0, 1, 0, 0, 0, 0xeb, 0x07}, // decide r g approve
		{1, 1, 1, 'o', 0, 0, 0, 0, 0, 0, 0, 0xec, 0x07},      // open o
		{1, 5, 1, 'o', 0, 0, 0, 0, 0, 0, 0, 0xed, 0x07},      // cancel o
		{2, 9, 1, 'o', 0, 0, 0, 0, 0, 0, 0, 0xee, 0x07, 1},   // retire o, the watermark
	}
	g := core.New(core.Unbounded())
	for i, rec := range records {
		c, err := core.DecodeCommand(rec)
		require.NoError(t, err, "record %d", i)
		require.True(t, g.Step(c).Persist, "record %d changed nothing", i)
	}
	require.NoError(t, g.CheckInvariants())
	list, more := g.Inbox(core.InboxQuery{Limit: 10})
	require.False(t, more)
	require.Equal(t, []core.Approval{{Run: "r", Key: "h", Note: core.Note{Since: 1002}}}, list)
	_, e, err := g.Status("r", "g")
	require.NoError(t, err)
	require.True(t, e.Approved)
	require.Equal(t, &core.Note{Since: 1001}, e.Note)
}

// TestSnapshotNotesRefused: a version 4 snapshot whose note is malformed (a flag
// other than 0 and 1, a text that no command could carry) is refused.
func TestSnapshotNotesRefused(t *testing.T) {
	g := runWith(t, func(g *core.Gate) {
		stepOK(t, g, core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1, Gated: true, Now: 9, Description: "d", ArgsDigest: digest})
	})
	snap := must(g.MarshalBinary())
	tail := []byte{1, 9, 1, 'd', byte(len(digest))}
	tail = append(append(tail, digest...), 0)
	require.Equal(t, tail, snap[len(snap)-len(tail):], "the note ends the snapshot")
	at := len(snap) - len(tail) // the note's flag
	patch := func(off int, v byte) []byte {
		b := append([]byte(nil), snap...)
		b[off] = v
		return b
	}
	for name, bad := range map[string][]byte{
		"flag 2":                {2},
		"a control in the text": patch(at+3, 0x1b),
		"a digest not hex":      patch(at+5, 'X'),
		"cut in the note":       snap[:len(snap)-2],
		"flag without a note":   snap[:at+1],
	} {
		if len(bad) == 1 {
			bad = patch(at, bad[0])
		}
		require.ErrorIs(t, core.New(core.DefaultLimits()).UnmarshalBinary(bad), core.ErrCodec, name)
	}
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	require.Equal(t, snap, must(h.MarshalBinary()))
	list, _ := h.Inbox(core.InboxQuery{Limit: 1})
	require.Equal(t, []core.Approval{{Run: "r", Key: "k", Note: core.Note{Since: 9, Description: "d", ArgsDigest: digest}}}, list)

	// an effect with no note ends with the flag 0: any other byte is malformed
	plain := must(runWith(t, func(g *core.Gate) { must(admit(g, "r", "a", 1, false, 0)) }).MarshalBinary())
	require.Equal(t, byte(0), plain[len(plain)-1])
	for _, flag := range []byte{2, 0xff} {
		bad := append(append([]byte(nil), plain[:len(plain)-1]...), flag)
		require.ErrorIs(t, core.New(core.DefaultLimits()).UnmarshalBinary(bad), core.ErrCodec, "flag %d", flag)
	}
}

// TestRestoreReplacesTheInbox: a gate that restores a snapshot lists the snapshot's
// approvals, none of those it held before.
func TestRestoreReplacesTheInbox(t *testing.T) {
	g := runWith(t, func(g *core.Gate) { must(admit(g, "r", "old", 1, true, 0)) })
	empty := must(runWith(t, func(*core.Gate) {}).MarshalBinary())
	require.NoError(t, g.UnmarshalBinary(empty))
	list, more := g.Inbox(core.InboxQuery{Limit: 10})
	require.Empty(t, list)
	require.False(t, more)
	require.NoError(t, g.CheckInvariants())
	require.NoError(t, g.UnmarshalBinary(must(runWith(t, func(g *core.Gate) { must(admit(g, "r", "new", 1, true, 3)) }).MarshalBinary())))
	list, _ = g.Inbox(core.InboxQuery{Limit: 10})
	require.Equal(t, []core.Approval{{Run: "r", Key: "new", Note: core.Note{Since: 3}}}, list)
}

// TestPendingOfCountsApprovals: Pending counts the approvals pending in every run,
// PendingOf in one (0 for a run the gate does not hold).
func TestPendingOfCountsApprovals(t *testing.T) {
	g := core.New(core.DefaultLimits())
	require.Equal(t, 0, g.Pending())
	for _, r := range []core.RunID{"a", "b"} {
		must(open(g, r, 0))
	}
	for _, k := range []core.Key{"x", "y"} {
		must(admit(g, "a", k, 1, true, 0))
	}
	must(admit(g, "b", "z", 1, true, 0))
	must(admit(g, "b", "sibling", 1, false, 0))
	require.Equal(t, 3, g.Pending())
	require.Equal(t, 2, g.PendingOf("a"))
	require.Equal(t, 1, g.PendingOf("b"))
	require.Equal(t, 0, g.PendingOf("none"))
	must(decide(g, "a", "x", core.Approve))
	require.Equal(t, 2, g.Pending())
	require.Equal(t, 1, g.PendingOf("a"))
}
