package harness

import (
	"context"
	"strings"
)

// Approval is what one B1-B3 case asks of the framework's workflow.
type Approval struct {
	Parallel bool   // the gated call and its sibling are in one plan; a control runs them in sequence
	Decision string // the human's decision (DecisionFor the case's property)
	Prepare  bool   // the gated call commits "prepare" before its pause (the B3 probe, where ApprovalWords.Prepare says so)
	Replay   bool   // after the resume, the state saved at the pause is resumed a second time
}

// ApprovalRun builds the run of a B1-B3 case.
type ApprovalRun func(a Approval) func(context.Context, Env) error

// ApprovalWords name, in a probe's About, what a framework's B1-B3 cases run.
type ApprovalWords struct {
	Parallel string // the plan of a probe: the gated call and its sibling at once
	Sequence string // the plan of a control: the gated call, then its sibling
	Resume   string // how the approval resumes the run
	Reject   string // what the rejection does to the run, if the framework says more than "reject"
	Prepare  string // what the gated call commits before its pause in the B3 probe; empty: it commits nothing
	Replay   string // how the state saved at the pause is resumed a second time
	NoReplay string // when not empty, there is no replay-after-crash case, and this says why
}

// ApprovalProbes are the B1-B3 probes of a framework: each property's probe
// (parallel plan) and control (the plan in sequence), and for B3 the replay
// after a crash, in the order the results list them.
func ApprovalProbes(w ApprovalWords, run ApprovalRun) []Probe {
	cases := []struct {
		property, name string
		a              Approval
	}{
		{"B1", "probe", Approval{Parallel: true}},
		{"B1", "control", Approval{}},
		{"B2", "probe", Approval{Parallel: true}},
		{"B2", "control", Approval{}},
		{"B3", "probe", Approval{Parallel: true, Prepare: w.Prepare != ""}},
		{"B3", "replay-after-crash", Approval{Parallel: true, Replay: true}},
		{"B3", "control", Approval{}},
	}
	var ps []Probe
	for _, c := range cases {
		if c.a.Replay && w.NoReplay != "" {
			continue
		}
		p := Probe{Property: c.property, Case: c.name}
		c.a.Decision = DecisionFor(p)
		p.About, p.Run = w.about(c.a), run(c.a)
		ps = append(ps, p)
	}
	return ps
}

// about is the About of case a: its plan, what commits before the pause, the
// decision and what follows it.
func (w ApprovalWords) about(a Approval) string {
	parts := []string{w.Sequence}
	if a.Parallel {
		parts[0] = w.Parallel
	}
	if a.Prepare {
		parts = append(parts, w.Prepare)
	}
	parts = append(parts, a.Decision)
	switch {
	case a.Decision == "reject":
		if w.Reject != "" {
			parts = append(parts, w.Reject)
		}
	case a.Replay:
		parts = append(parts, w.Replay)
	default:
		parts = append(parts, w.Resume)
	}
	return strings.Join(parts, "; ")
}
