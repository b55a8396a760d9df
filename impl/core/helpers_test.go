package core_test

import (
	"fmt"
	"slices"

	"github.com/soundgate/soundgate/impl/core"
)

// The actions of the contract as functions over Step, the core's only door: the tests
// read like the contract and still go through the one entry point the shell uses.

func open(g *core.Gate, r core.RunID, deadline core.Time) (core.OpenResult, error) {
	rep := g.Step(core.Command{Op: core.OpOpen, Run: r, Deadline: deadline})
	return rep.Open, rep.Err
}

func admit(g *core.Gate, r core.RunID, k core.Key, e uint64, gated bool, now core.Time) (core.AdmitResult, error) {
	rep := g.Step(core.Command{Op: core.OpAdmit, Run: r, Key: k, Epoch: e, Gated: gated, Now: now})
	return rep.Admit, rep.Err
}

func decide(g *core.Gate, r core.RunID, k core.Key, d core.Decision) (core.DecideResult, error) {
	rep := g.Step(core.Command{Op: core.OpDecide, Run: r, Key: k, Decision: d})
	return rep.Decide, rep.Err
}

func complete(g *core.Gate, r core.RunID, k core.Key, o core.Outcome, result string) (core.CompleteResult, error) {
	rep := g.Step(core.Command{Op: core.OpComplete, Run: r, Key: k, Outcome: o, Result: result})
	return rep.Complete, rep.Err
}

func cancel(g *core.Gate, r core.RunID) (core.RunView, error) {
	rep := g.Step(core.Command{Op: core.OpCancel, Run: r})
	return rep.Run, rep.Err
}

func fence(g *core.Gate, r core.RunID) (core.RunView, error) {
	rep := g.Step(core.Command{Op: core.OpFence, Run: r})
	return rep.Run, rep.Err
}

// timeout is the Timeout action; it reports whether r changed.
func timeout(g *core.Gate, r core.RunID) (bool, error) {
	rep := g.Step(core.Command{Op: core.OpTimeout, Run: r})
	return rep.Persist, rep.Err
}

// timeoutDue is what a shell's clock does at now: Timeout of every active run whose
// deadline is at or before now, earliest first.
func timeoutDue(g *core.Gate, now core.Time) []core.RunID {
	var out []core.RunID
	for {
		at, r, ok := g.NextDeadline()
		if !ok || at > now {
			return out
		}
		if changed, err := timeout(g, r); err != nil || !changed || slices.Contains(out, r) {
			panic(fmt.Sprintf("timeoutDue: run %s is due at %d but did not time out (err %v)", r, at, err))
		}
		out = append(out, r)
	}
}
