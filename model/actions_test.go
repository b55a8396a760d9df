package model

import (
	"errors"
	"strings"
	"testing"
)

var small = Config{Runs: []string{"r1", "r2"}, Keys: []string{"k1", "k2", "k3"}, MaxEpoch: 3}

// parseOp reads "Admit r1 k1 1 gated", "Decide r1 k1 approve", "Complete r1 k1 ok",
// "Open r1", ... for the scenario tables.
func parseOp(t *testing.T, line string) Op {
	t.Helper()
	f := strings.Fields(line)
	op := Op{Action: f[0], Run: f[1]}
	switch op.Action {
	case ActAdmit:
		op.Key = f[2]
		op.Epoch = int(f[3][0] - '0')
		op.Gated = len(f) > 4 && f[4] == "gated"
	case ActDecide:
		op.Key, op.Decision = f[2], f[3]
	case ActComplete:
		op.Key, op.Outcome = f[2], f[3]
	}
	return op
}

// TestScenarios runs the contract's cases (docs/contract.md) as step / answer tables.
func TestScenarios(t *testing.T) {
	type step struct{ op, want string }
	tests := []struct {
		name  string
		steps []step
	}{
		{"unknown run errors", []step{
			{"Admit r1 k1 1", "error(unknown_run)"},
			{"Decide r1 k1 approve", "error(unknown_run)"},
			{"Complete r1 k1 ok", "error(unknown_run)"},
			{"Fence r1", "error(unknown_run)"},
			{"Timeout r1", "error(unknown_run)"},
			{"Admit r1 k1 0", "error(invalid_argument)"},
		}},
		{"open is idempotent", []step{
			{"Open r1", "active@1"},
			{"Fence r1", "active@2"},
			{"Open r1", "active@2"},
		}},
		{"admit once, then duplicate with outcome", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1", "admit"},
			{"Admit r1 k1 1", "duplicate"},
			{"Complete r1 k1 failed", "ok"},
			{"Admit r1 k1 1 gated", "duplicate(failed)"},
			{"Complete r1 k1 failed", "repeat"},
			{"Complete r1 k1 ok", "error(conflict)"},
			{"Complete r1 k2 ok", "error(not_admitted)"},
		}},
		{"sibling leak is held (P1)", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Admit r1 k2 1", "held"},
			{"Admit r1 k2 1", "held"},
			{"Decide r1 k1 approve", "ok"},
			{"Admit r1 k2 1", "admit"},
			{"Admit r1 k1 1", "admit"},
			{"Decide r1 k1 approve", "repeat"},
		}},
		{"reject covers held siblings (P2)", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Admit r1 k2 1", "held"},
			{"Decide r1 k1 reject", "ok"},
			{"Admit r1 k2 1", "denied(rejected)"},
			{"Admit r1 k1 1", "denied(rejected)"},
			{"Decide r1 k1 reject", "repeat"},
			{"Decide r1 k2 reject", "repeat"},
			{"Decide r1 k1 approve", "error(not_pending)"},
		}},
		{"reject spares an approved gated effect; it is released", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Admit r1 k2 1 gated", "held"},
			{"Decide r1 k1 approve", "ok"},
			{"Admit r1 k1 1", "held"},
			{"Decide r1 k2 reject", "ok"},
			{"Admit r1 k1 1", "admit"},
			{"Admit r1 k2 1", "denied(rejected)"},
		}},
		{"released stays released while a newer approval is pending", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Decide r1 k1 approve", "ok"},
			{"Admit r1 k2 1 gated", "held"},
			{"Admit r1 k1 1", "held"},
			{"Decide r1 k2 approve", "ok"},
			{"Admit r1 k1 1", "admit"},
			{"Admit r1 k2 1", "admit"},
		}},
		{"fence drops held and released, epochs (P4)", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Decide r1 k1 approve", "ok"},
			{"Fence r1", "active@2"},
			{"Admit r1 k1 1", "denied(stale_epoch)"},
			{"Admit r1 k1 3", "error(bad_epoch)"},
			{"Decide r1 k1 approve", "error(not_pending)"},
			{"Admit r1 k1 2", "admit"},
		}},
		{"cancel and timeout are final (P4)", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Cancel r1", "cancelled@2"},
			{"Cancel r1", "cancelled@2"},
			{"Admit r1 k1 2", "denied(cancelled)"},
			{"Admit r1 k1 1", "denied(cancelled)"},
			{"Fence r1", "error(run_final)"},
			{"Timeout r1", "cancelled@2"},
			{"Open r2", "active@1"},
			{"Timeout r2", "timed_out@2"},
			{"Admit r2 k1 2", "denied(timed_out)"},
		}},
		{"the first gated claim wins (docs/spec-notes.md, note 2)", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1 gated", "held"},
			{"Admit r1 k2 1", "held"},
			{"Admit r1 k2 1 gated", "held"},
			{"Decide r1 k2 approve", "error(not_pending)"},
			{"Decide r1 k1 approve", "ok"},
			{"Admit r1 k2 1 gated", "admit"},
		}},
		{"cancel of an unknown run leaves a tombstone", []step{
			{"Cancel r1", "cancelled@2"},
			{"Open r1", "cancelled@2"},
			{"Admit r1 k1 1", "denied(cancelled)"},
		}},
		{"completing is allowed on a final run", []step{
			{"Open r1", "active@1"},
			{"Admit r1 k1 1", "admit"},
			{"Cancel r1", "cancelled@2"},
			{"Complete r1 k1 ok", "ok"},
			{"Admit r1 k1 2", "denied(cancelled)"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Init(small)
			for i, st := range tt.steps {
				op := parseOp(t, st.op)
				a, next, err := Apply(small, s, op)
				if err != nil {
					t.Fatal(err)
				}
				if a.String() != st.want {
					t.Fatalf("step %d %s: answer %s, want %s", i, st.op, a, st.want)
				}
				if a.IsError() && next.Key() != s.Key() {
					t.Fatalf("step %d %s: an error changed the state", i, st.op)
				}
				if err := Check(next); err != nil {
					t.Fatalf("step %d %s: %v", i, st.op, err)
				}
				s = next
			}
		})
	}
}

// TestApplyDomain checks that names outside the config are refused with ErrDomain.
func TestApplyDomain(t *testing.T) {
	s := Init(small)
	for _, op := range []Op{{Action: ActOpen, Run: "zz"}, {Action: ActAdmit, Run: "r1", Key: "zz"}, {Action: "Status", Run: "r1"}} {
		if _, _, err := Apply(small, s, op); !errors.Is(err, ErrDomain) {
			t.Errorf("%+v: err %v, want ErrDomain", op, err)
		}
	}
}

// TestAnswersNeverMutate applies every wide op from a few states and checks that the
// input state is never modified and that errors leave it unchanged.
func TestAnswersNeverMutate(t *testing.T) {
	c := Config{Runs: []string{"r1"}, Keys: []string{"k1", "k2"}, MaxEpoch: 2}
	res, err := Explore(c, Options{KeepGraph: true})
	if err != nil {
		t.Fatal(err)
	}
	// Re-walk the graph from Init, applying every op to every state reached.
	seen := map[string]bool{}
	queue := []State{Init(c)}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		before := s.Key()
		if seen[before] {
			continue
		}
		seen[before] = true
		for _, op := range OpsWide(c) {
			a, next, err := Apply(c, s, op)
			if err != nil {
				t.Fatal(err)
			}
			if s.Key() != before {
				t.Fatalf("%s mutated its input", op.Label())
			}
			if a.IsError() && next.Key() != before {
				t.Fatalf("%s answered %s and changed the state", op.Label(), a)
			}
			if Enabled(c, s, op, a) {
				queue = append(queue, next)
			}
		}
	}
	if len(seen) != res.Distinct {
		t.Errorf("re-walk reached %d states, Explore %d", len(seen), res.Distinct)
	}
}

// TestSymmetryKeepsOneStatePerOrbit checks the canonicalizer: a state and its
// permutations share one key, and distinct orbits have distinct keys.
func TestSymmetryKeepsOneStatePerOrbit(t *testing.T) {
	c := Config{Runs: []string{"r1", "r2"}, Keys: []string{"k1", "k2"}, MaxEpoch: 2, Symmetry: true}
	s := Init(c)
	_, s = Open(s, 0)
	_, s = Admit(s, 0, 0, 1, true)
	cz := newCanonicalizer(c)
	swapped := s.permute([]int{1, 0}, []int{1, 0})
	if swapped.Text(c) == s.Text(c) {
		t.Fatal("the permutation did not change the state's text")
	}
	if cz.key(swapped) != cz.key(s) {
		t.Error("a state and its permutation have different keys")
	}
	_, other := Admit(s, 0, 1, 1, true)
	if cz.key(other) == cz.key(s) {
		t.Error("two states of different orbits share a key")
	}
}

// TestNamedAccessors reads a state by names.
func TestNamedAccessors(t *testing.T) {
	s := Init(small)
	for _, line := range []string{"Open r2", "Admit r2 k3 1 gated", "Admit r2 k1 1"} {
		_, next, err := Apply(small, s, parseOp(t, line))
		if err != nil {
			t.Fatal(err)
		}
		s = next
	}
	if r, ok := s.RunNamed(small, "r2"); !ok || r.Status != RunActive || r.Epoch != 1 {
		t.Errorf("RunNamed(r2) = %+v, %v", r, ok)
	}
	if e, ok := s.EffectNamed(small, "r2", "k1"); !ok || e.Status != EffHeld || e.Gated {
		t.Errorf("EffectNamed(r2, k1) = %+v, %v", e, ok)
	}
	if got := s.PendingNamed(small, "r2"); len(got) != 1 || got[0] != "k3" {
		t.Errorf("PendingNamed(r2) = %v", got)
	}
	if _, ok := s.EffectNamed(small, "r9", "k1"); ok {
		t.Error("EffectNamed of an unknown run succeeded")
	}
}
