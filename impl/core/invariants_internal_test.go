package core

import (
	"errors"
	"testing"
)

// TestInvariantsCatchWhatTheDecoderRefuses: the invariants the snapshot decoder
// already enforces (a stored status, the index of open effects) are checked too, for
// a state the core itself would break.
func TestInvariantsCatchWhatTheDecoderRefuses(t *testing.T) {
	held := Effect{Status: EffectHeld, Epoch: 1, Gated: true}
	cases := []struct {
		name  string
		build func(run *Run)
	}{
		{"a run stored with status none", func(run *Run) { run.Status = RunNone }},
		{"a run stored past timed_out", func(run *Run) { run.Status = RunTimedOut + 1; run.Epoch = 2; clear(run.pending); clear(run.open) }},
		{"an effect stored as absent", func(run *Run) { run.effects["x"] = Effect{} }},
		{"an effect stored past rejected", func(run *Run) { run.effects["x"] = Effect{Status: EffectRejected + 1} }},
		{"a held effect missing from the open index", func(run *Run) { delete(run.open, "k") }},
		{"an admitted effect in the open index", func(run *Run) {
			run.effects["x"] = Effect{Status: EffectAdmitted}
			run.open["x"] = struct{}{}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := New(DefaultLimits())
			run := newRun("r")
			run.Status, run.Epoch = RunActive, 1
			run.effects["k"], run.pending["k"], run.open["k"] = held, struct{}{}, struct{}{}
			g.runs["r"] = run
			if err := g.CheckInvariants(); err != nil {
				t.Fatalf("the valid state is refused: %v", err)
			}
			tc.build(run)
			if err := g.CheckInvariants(); !errors.Is(err, ErrInvariant) {
				t.Fatalf("CheckInvariants = %v, want ErrInvariant", err)
			}
		})
	}
}
