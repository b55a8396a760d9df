//go:build invariants

package core

import "fmt"

// invariantHistory is the invariant tier's record of every (run, key) that was
// answered admit.
type invariantHistory map[RunID]map[Key]struct{}

// assertInvariants checks after a Step, with the tag invariants, that no (run, key)
// was admitted twice and that the run the command touched keeps its invariants.
func (g *Gate) assertInvariants(c Command, rep Reply) {
	if rep.Err == nil && c.Op == OpAdmit && rep.Admit.Answer == AnswerAdmit {
		if g.history == nil {
			g.history = invariantHistory{}
		}
		if _, twice := g.history[c.Run][c.Key]; twice {
			panic(fmt.Sprintf("soundgate/core: invariant broken: (%q, %q) admitted twice (P3)", c.Run, c.Key))
		}
		if g.history[c.Run] == nil {
			g.history[c.Run] = map[Key]struct{}{}
		}
		g.history[c.Run][c.Key] = struct{}{}
	}
	if len(g.runs) > g.limits.RunsMax {
		panic(fmt.Sprintf("soundgate/core: invariant broken: %d runs, limit %d", len(g.runs), g.limits.RunsMax))
	}
	if run, ok := g.runs[c.Run]; ok {
		if err := g.checkRunInvariants(run); err != nil {
			panic(fmt.Sprintf("soundgate/core: after %s %q: %v", c.Op, c.Run, err))
		}
	}
}
