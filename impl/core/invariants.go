package core

import (
	"errors"
	"fmt"
)

// The core's invariants: the spec's structural invariants and the inductive
// invariant's shape conjuncts (spec/tla/SoundGate.tla: Structure, RunShape,
// EffectShape), stated over the core's own representation. CheckInvariants checks
// them on demand (the node does after replaying the log); a build with the tag
// `invariants` (make test) also checks the run a command touched after every Step,
// and that no (run, key) is admitted twice, and panics on a violation
// (invariants_on.go): a broken invariant is a bug of the core, never a refusal.

// ErrInvariant reports a state that breaks one of the core's invariants.
var ErrInvariant = errors.New("soundgate/core: invariant broken")

// CheckInvariants checks every run of the gate and the gate's limits; nil when all hold.
func (g *Gate) CheckInvariants() error {
	if len(g.runs) > g.limits.RunsMax {
		return invariantf("%d runs, limit %d", len(g.runs), g.limits.RunsMax)
	}
	if err := g.checkOrder(); err != nil {
		return err
	}
	if n := countBytes(g.runs); n != g.bytes {
		return invariantf("the state's budget counts %d bytes, the state holds %d", g.bytes, n)
	}
	for _, id := range g.RunIDs() {
		if err := g.checkRunInvariants(g.runs[id]); err != nil {
			return err
		}
	}
	for id, run := range g.asking {
		if g.runs[id] != run || len(run.pending) == 0 {
			return invariantf("run %q is in the inbox with %d approvals pending, known %t", id, len(run.pending), g.runs[id] == run)
		}
	}
	return nil
}

// checkOrder: g.order holds every run once, each at its index, which is what a cut
// takes and what tells it a run made after it began, and, during a cut, the runs
// retired since it began. No known run is retired.
func (g *Gate) checkOrder() error {
	if len(g.order) != len(g.runs)+len(g.unlinked) {
		return invariantf("%d runs in order, %d known, %d retired during a cut", len(g.order), len(g.runs), len(g.unlinked))
	}
	for i, run := range g.order {
		known := g.runs[run.ID] == run
		if run.index != i || known && g.retired.has(run.ID) || !known && !g.isRetired(run.ID) {
			return invariantf("run %q at %d of the order has index %d, known %t", run.ID, i, run.index, known)
		}
	}
	if g.retired.len() > g.limits.RetiredMax {
		return invariantf("%d retired runs, limit %d", g.retired.len(), g.limits.RetiredMax)
	}
	return nil
}

func invariantf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvariant}, args...)...)
}

// checkRunInvariants checks one run. It costs one step per effect of the run.
func (g *Gate) checkRunInvariants(run *Run) error {
	if err := g.checkRunShape(run); err != nil {
		return fmt.Errorf("run %q: %w", run.ID, err)
	}
	for k, eff := range run.effects {
		if err := checkEffect(run, k, eff); err != nil {
			return fmt.Errorf("run %q, key %q: %w", run.ID, k, err)
		}
	}
	return nil
}

// checkRunShape: RunShape and the run's limits; open and pending hold exactly the
// keys the effects say (PendingExact, and open = the held and released effects, with
// checkEffect).
func (g *Gate) checkRunShape(run *Run) error {
	switch {
	case run.Status == RunActive && run.Epoch < 1:
		return invariantf("active at epoch %d", run.Epoch)
	case run.Status.Final() && run.Epoch < 2:
		return invariantf("%s at epoch %d", run.Status, run.Epoch)
	case run.Status != RunActive && !run.Status.Final():
		return invariantf("stored with status %s", run.Status)
	case run.Status.Final() && len(run.open) > 0: // pending ⊆ open: the loops below check it
		return invariantf("%s with %d held or released effects", run.Status, len(run.open))
	case len(run.effects) > g.limits.KeysPerRunMax:
		return invariantf("%d effects, limit %d", len(run.effects), g.limits.KeysPerRunMax)
	case len(run.pending) > g.limits.PendingPerRunMax:
		return invariantf("%d pending approvals, limit %d", len(run.pending), g.limits.PendingPerRunMax)
	}
	if _, listed := g.asking[run.ID]; listed != (len(run.pending) > 0) {
		return invariantf("%d approvals pending, in the inbox %t", len(run.pending), listed)
	}
	for k := range run.open {
		if !run.effects[k].Status.live() {
			return invariantf("key %q is open but %s", k, run.effects[k].Status)
		}
	}
	for k := range run.pending {
		if e := run.effects[k]; e.Status != EffectHeld || !e.Gated || e.Approved {
			return invariantf("key %q is pending but %+v", k, e)
		}
	}
	admitted := 0
	for _, e := range run.effects {
		if e.Status == EffectAdmitted {
			admitted++
		}
	}
	if admitted != run.admitted {
		return invariantf("%d effects admitted and not completed, counted %d", admitted, run.admitted)
	}
	return nil
}

// checkEffect: EffectShape, NoOrphanHold and CurrentEpoch for effect k of run.
func checkEffect(run *Run, k Key, e Effect) error {
	_, open := run.open[k]
	_, pending := run.pending[k]
	live := e.Status.live()
	switch {
	case e.Status == EffectAbsent || e.Status > EffectRejected:
		return invariantf("stored with status %d", e.Status)
	case live != open:
		return invariantf("%s, open=%t", e.Status, open)
	case e.Status == EffectHeld && e.Gated && !e.Approved && !pending:
		return invariantf("an undecided gated held effect is not pending")
	case e.Status == EffectHeld && len(run.pending) == 0:
		return invariantf("held with no pending approval (NoOrphanHold)")
	case live && e.Epoch != run.Epoch:
		return invariantf("%s at epoch %d, run at %d (CurrentEpoch)", e.Status, e.Epoch, run.Epoch)
	case !live && (e.Epoch != 0 || e.Gated):
		return invariantf("%s keeps epoch %d, gated=%t", e.Status, e.Epoch, e.Gated)
	case e.Status == EffectRejected && e.Approved:
		return invariantf("rejected but approved")
	case live && e.Approved && !e.Gated:
		return invariantf("approved but not gated")
	case e.Status == EffectReleased && e.Gated && !e.Approved:
		return invariantf("a released gated effect without its approval")
	case (e.Outcome != OutcomeNone) != (e.Status == EffectCompleted):
		return invariantf("%s with outcome %q", e.Status, e.Outcome)
	case e.Result != "" && e.Status != EffectCompleted:
		return invariantf("%s with a result", e.Status)
	case live && e.Note != nil && !e.Gated:
		return invariantf("%s with a note but not gated", e.Status)
	case pending && e.Note != nil && e.Note.Reason != "":
		return invariantf("pending with a decision's reason")
	}
	if err := e.Note.check(); err != nil {
		return invariantf("a note that does not pass: %v", err)
	}
	return nil
}

func (s EffectStatus) live() bool { return s == EffectHeld || s == EffectReleased }
