package harness

import (
	"context"
	"testing"
)

// TestApprovalProbes checks the B1-B3 cases, their order, their wording and
// what each asks of the framework's run.
func TestApprovalProbes(t *testing.T) {
	var asked []Approval
	run := func(a Approval) func(context.Context, Env) error {
		asked = append(asked, a)
		return func(context.Context, Env) error { return nil }
	}
	w := ApprovalWords{Parallel: "P", Sequence: "S", Resume: "resumed", Reject: "stops", Prepare: "prepares", Replay: "replayed"}
	type want struct {
		property, cas, about string
		a                    Approval
	}
	check := func(t *testing.T, ps []Probe, wants []want) {
		t.Helper()
		if len(ps) != len(wants) || len(asked) != len(wants) {
			t.Fatalf("%d probes, %d runs built, want %d", len(ps), len(asked), len(wants))
		}
		for i, w := range wants {
			if p := ps[i]; p.Property != w.property || p.Case != w.cas || p.About != w.about || p.Run == nil || asked[i] != w.a {
				t.Errorf("probe %d = %s %s %q (run %+v), want %s %s %q (run %+v)", i, p.Property, p.Case, p.About, asked[i], w.property, w.cas, w.about, w.a)
			}
		}
	}
	check(t, ApprovalProbes(w, run), []want{
		{"B1", "probe", "P; approve; resumed", Approval{Parallel: true, Decision: "approve"}},
		{"B1", "control", "S; approve; resumed", Approval{Decision: "approve"}},
		{"B2", "probe", "P; reject; stops", Approval{Parallel: true, Decision: "reject"}},
		{"B2", "control", "S; reject; stops", Approval{Decision: "reject"}},
		{"B3", "probe", "P; prepares; approve; resumed", Approval{Parallel: true, Decision: "approve", Prepare: true}},
		{"B3", "replay-after-crash", "P; approve; replayed", Approval{Parallel: true, Decision: "approve", Replay: true}},
		{"B3", "control", "S; approve; resumed", Approval{Decision: "approve"}},
	})

	// no Reject, no Prepare, no replay: the rejection says no more, the B3
	// probe commits nothing before its pause and there is no replay case
	asked = nil
	w = ApprovalWords{Parallel: "P", Sequence: "S", Resume: "resumed", NoReplay: "why not"}
	check(t, ApprovalProbes(w, run), []want{
		{"B1", "probe", "P; approve; resumed", Approval{Parallel: true, Decision: "approve"}},
		{"B1", "control", "S; approve; resumed", Approval{Decision: "approve"}},
		{"B2", "probe", "P; reject", Approval{Parallel: true, Decision: "reject"}},
		{"B2", "control", "S; reject", Approval{Decision: "reject"}},
		{"B3", "probe", "P; approve; resumed", Approval{Parallel: true, Decision: "approve"}},
		{"B3", "control", "S; approve; resumed", Approval{Decision: "approve"}},
	})
}
