package core

import (
	"errors"
	"strings"
	"testing"
)

// states for the invariant checker, built directly: some are states the snapshot
// decoder would refuse, the others need several effects in one run.

var (
	heldGated    = Effect{Status: EffectHeld, Epoch: 1, Gated: true}
	heldApproved = Effect{Status: EffectHeld, Epoch: 1, Gated: true, Approved: true}
	held         = Effect{Status: EffectHeld, Epoch: 1}
	released     = Effect{Status: EffectReleased, Epoch: 1}
)

// gateWith returns a gate with the limits l and one run "r" at status s and epoch e,
// holding the effects given (pending: the keys whose approval is open).
func gateWith(l Limits, s RunStatus, e uint64, effects map[Key]Effect, pending ...Key) *Gate {
	g := New(l)
	run := newRun("r")
	run.Status, run.Epoch = s, e
	for k, eff := range effects {
		run.effects[k] = eff
		if eff.Status.live() {
			run.open[k] = struct{}{}
		}
		if eff.Status == EffectAdmitted {
			run.admitted++
		}
	}
	for _, k := range pending {
		run.pending[k] = struct{}{}
	}
	g.addRun(run)
	if len(pending) > 0 {
		g.asking[run.ID] = run
	}
	return g
}

func limits(f func(*Limits)) Limits { l := DefaultLimits(); f(&l); return l }

// TestInvariantsAcceptValidStates: states at the edge of what is valid: every limit
// reached exactly, an approved gated effect held behind another approval, a released
// effect and a run with no effect.
func TestInvariantsAcceptValidStates(t *testing.T) {
	d := DefaultLimits()
	for name, g := range map[string]*Gate{
		"runs at RunsMax": gateWith(limits(func(l *Limits) { l.RunsMax = 1 }), RunActive, 1, nil),
		"effects at KeysPerRunMax": gateWith(limits(func(l *Limits) { l.KeysPerRunMax = 2 }), RunActive, 1,
			map[Key]Effect{"g": heldGated, "k": held}, "g"),
		"approvals at PendingPerRunMax": gateWith(limits(func(l *Limits) { l.PendingPerRunMax = 1 }), RunActive, 1,
			map[Key]Effect{"g": heldGated}, "g"),
		"an approved gated effect held behind another approval": gateWith(d, RunActive, 1,
			map[Key]Effect{"a": heldApproved, "b": heldGated}, "b"),
		"a released effect":                       gateWith(d, RunActive, 2, map[Key]Effect{"k": {Status: EffectReleased, Epoch: 2}}),
		"an active run at epoch 1 with no effect": gateWith(d, RunActive, 1, nil),
		"a cancelled run that admitted":           gateWith(d, RunCancelled, 2, map[Key]Effect{"k": {Status: EffectAdmitted}}),
	} {
		if err := g.CheckInvariants(); err != nil {
			t.Errorf("%s: refused: %v", name, err)
		}
	}
}

// TestInvariantsCatchBrokenRuns: each state breaks one invariant, or one limit, and
// CheckInvariants names it, including what the snapshot decoder already refuses.
func TestInvariantsCatchBrokenRuns(t *testing.T) {
	d := DefaultLimits()
	for name, g := range map[string]*Gate{
		"a run stored with status none":      gateWith(d, RunNone, 1, nil),
		"a run stored past timed_out":        gateWith(d, RunTimedOut+1, 2, nil),
		"an active run at epoch 0":           gateWith(d, RunActive, 0, nil),
		"a final run with a released effect": gateWith(d, RunCancelled, 2, map[Key]Effect{"k": {Status: EffectReleased, Epoch: 2}}),
		"runs over RunsMax":                  gateWith(limits(func(l *Limits) { l.RunsMax = 0 }), RunActive, 1, nil),
		"effects over KeysPerRunMax": gateWith(limits(func(l *Limits) { l.KeysPerRunMax = 1 }), RunActive, 1,
			map[Key]Effect{"g": heldGated, "k": held}, "g"),
		"approvals over PendingPerRunMax": gateWith(limits(func(l *Limits) { l.PendingPerRunMax = 0 }), RunActive, 1,
			map[Key]Effect{"g": heldGated}, "g"),
		"an effect stored as absent":       gateWith(d, RunActive, 1, map[Key]Effect{"x": {}}),
		"an effect stored past rejected":   gateWith(d, RunActive, 1, map[Key]Effect{"x": {Status: EffectRejected + 1}}),
		"a pending key held but not gated": gateWith(d, RunActive, 1, map[Key]Effect{"k": held}, "k"),
		"an undecided gated held effect not pending, another one pending": gateWith(d, RunActive, 1,
			map[Key]Effect{"a": heldGated, "b": heldGated}, "b"),
		"an admitted effect that keeps its epoch": gateWith(d, RunActive, 1, map[Key]Effect{"k": {Status: EffectAdmitted, Epoch: 1}}),
		"an admitted effect that keeps its gate":  gateWith(d, RunActive, 1, map[Key]Effect{"k": {Status: EffectAdmitted, Gated: true}}),
		"a released effect of another epoch":      gateWith(d, RunActive, 2, map[Key]Effect{"k": released}),
	} {
		if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
			t.Errorf("%s: CheckInvariants = %v, want ErrInvariant", name, err)
		}
	}
	// The order must hold every run once, at its index.
	g := gateWith(d, RunActive, 1, nil)
	g.order[0].index = 1
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run at the wrong index: %v", err)
	}
	g = gateWith(d, RunActive, 1, nil)
	g.order = append(g.order, newRun("r"))
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run in the order twice: %v", err)
	}
	g = gateWith(d, RunActive, 1, nil)
	g.order = append(g.order, newRun("r2"))
	g.order[1].index = 1
	g.runs["r2"] = newRun("r2")
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run in the order that is not the known one: %v", err)
	}
	// No known run is retired; a run retired during a cut (unlinked) is, listed or
	// up to the watermark.
	g = gateWith(d, RunActive, 1, nil)
	g.retired.add("r")
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a known run listed as retired: %v", err)
	}
	unlinked := func(upto RunID) *Gate {
		g := gateWith(d, RunActive, 1, nil)
		x := newRun("x")
		x.index = 1
		g.order, g.unlinked, g.upto = append(g.order, x), []*Run{x}, upto
		return g
	}
	if err := unlinked("").CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run unlinked but not retired: %v", err)
	}
	if err := unlinked("x").CheckInvariants(); err != nil {
		t.Errorf("a run unlinked up to the watermark: %v", err)
	}
	// The index of open effects must match the effects, both ways.
	g = gateWith(d, RunActive, 1, map[Key]Effect{"g": heldGated}, "g")
	delete(g.runs["r"].open, "g")
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a held effect missing from the open index: %v", err)
	}
	g = gateWith(d, RunActive, 1, map[Key]Effect{"k": {Status: EffectAdmitted}})
	g.runs["r"].open["k"] = struct{}{}
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("an admitted effect in the open index: %v", err)
	}
}

// TestInvariantsCatchAStaleInbox: the inbox lists exactly the runs the gate holds
// that have an approval pending: a run listed that the gate does not hold, or one
// listed with none pending, or one with one pending that is not listed, is refused.
func TestInvariantsCatchAStaleInbox(t *testing.T) {
	pendingGate := func() *Gate { return gateWith(DefaultLimits(), RunActive, 1, map[Key]Effect{"g": heldGated}, "g") }
	g := pendingGate()
	if err := g.CheckInvariants(); err != nil {
		t.Fatalf("the fixture itself: %v", err)
	}
	stale := newRun("gone")
	stale.pending["g"] = struct{}{}
	g.asking["gone"] = stale
	err := g.CheckInvariants()
	if !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), `run "gone" is in the inbox with 1 approvals pending, known false`) {
		t.Errorf("a run the gate does not hold, in the inbox: %v", err)
	}
	g = pendingGate()
	delete(g.asking, "r")
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run with an approval pending, not in the inbox: %v", err)
	}
	g = gateWith(DefaultLimits(), RunActive, 1, nil)
	g.asking["r"] = g.runs["r"]
	if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
		t.Errorf("a run with no approval pending, in the inbox: %v", err)
	}
}
