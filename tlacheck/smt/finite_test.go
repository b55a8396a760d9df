package smt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	indstepCfg  = "../../spec/tla/SoundGate_indstep.cfg"
	brokenFence = "../../spec/tla/broken/BrokenStructureFenceKeepsPending.tla"
)

// finiteOf translates file in finite mode on the instance of SoundGate_indstep.cfg
// and returns the spec, its proof obligations, the instance and tlacheck's source
// (with IndInit, the spec's, when the file has none).
func finiteOf(t *testing.T, file string) (*Spec, []*Obligation, *finiteInstance, string) {
	t.Helper()
	specSrc, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(indstepCfg)
	if err != nil {
		t.Fatal(err)
	}
	base, err := Translate(file, string(src), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	in, err := instanceOf(string(cfg), base)
	if err != nil {
		t.Fatal(err)
	}
	if in.name != "Runs=1,Keys=2,MaxEpoch=2" {
		t.Fatalf("the instance of SoundGate_indstep.cfg is %s", in.name)
	}
	o := DefaultOptions()
	o.Finite, o.Fixed = in.sizes, in.fixed
	s, err := Translate(file, string(src), o)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Obligations()
	if err != nil {
		t.Fatal(err)
	}
	var obs []*Obligation
	for _, x := range all {
		if x.Expect == "unsat" {
			obs = append(obs, x)
		}
	}
	tla := string(src)
	if defText(tla, "IndInit") == "" {
		if tla, err = withDef(tla, defText(string(specSrc), "IndInit")); err != nil {
			t.Fatal(err)
		}
	}
	return s, obs, in, tla
}

// The bounded side: on the spec every obligation holds on the instance; on the
// broken Fence variant exactly the obligation its defect breaks fails.
func TestBoundedVerdicts(t *testing.T) {
	s, obs, in, tla := finiteOf(t, specFile)
	v, fig, err := s.bounded(tla, in, "IndInit", obs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if !v[o.Name].holds {
			t.Errorf("%s fails on the spec at %s:\n%s", o.Name, in.name, o.Describe(v[o.Name].w))
		}
	}
	// make verify-tla-inductive: 523 states satisfy IndInit /\ IndInv, 7946 successors.
	if fig.initStates != 1 || fig.indStates != 523 || fig.successors != 7946 {
		t.Errorf("figures %+v", fig)
	}

	s, obs, in, tla = finiteOf(t, brokenFence)
	v, _, err = s.bounded(tla, in, "IndInit", obs)
	if err != nil {
		t.Fatal(err)
	}
	var failing []string
	for _, o := range obs {
		if !v[o.Name].holds {
			failing = append(failing, o.Name)
		}
	}
	if strings.Join(failing, ",") != "Fence__PendingExact" {
		t.Errorf("failing on the broken Fence variant: %v", failing)
	}
}

// The generator is copied into a variant older than it, before the closing line.
func TestWithDef(t *testing.T) {
	src := "---- MODULE M ----\nA == 1\nB ==\n  /\\ 2\n\n  /\\ 3\nC == 4\n====\n"
	if got := defText(src, "B"); got != "B ==\n  /\\ 2\n\n  /\\ 3\n" {
		t.Errorf("defText: %q", got)
	}
	if got := defText(src, "D"); got != "" {
		t.Errorf("defText of a missing name: %q", got)
	}
	got, err := withDef(src, "D == 5\n")
	if err != nil || !strings.HasSuffix(got, "C == 4\n\nD == 5\n====\n") {
		t.Errorf("withDef: %q %v", got, err)
	}
}

// The SMT side on the broken Fence variant: its script with tlacheck's counterexample
// pinned is sat, the correct spec's script with the same pins is unsat (the pins
// decide the script: not vacuous), and the Open obligations of the spec together
// are unsat.
func TestFiniteScripts(t *testing.T) {
	ss := solvers(t)
	var z3 Solver
	for _, s := range ss {
		if s.Name == "z3" {
			z3 = s
		}
	}
	dir := t.TempDir()
	run := func(name, text string) string {
		f := filepath.Join(dir, name+".smt2")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return z3.Run(f, true, 60*time.Second).Result
	}
	bs, bobs, in, tla := finiteOf(t, brokenFence)
	v, _, err := bs.bounded(tla, in, "IndInit", bobs)
	if err != nil {
		t.Fatal(err)
	}
	w := v["Fence__PendingExact"].w
	var bo, so *Obligation
	for _, o := range bobs {
		if o.Name == "Fence__PendingExact" {
			bo = o
		}
	}
	text, err := bo.pinned(w)
	if err != nil {
		t.Fatal(err)
	}
	if got := run("broken", text); got != "sat" {
		t.Errorf("the broken variant's script with its counterexample pinned: %s", got)
	}
	s, obs, _, _ := finiteOf(t, specFile)
	var open []*Obligation
	for _, o := range obs {
		if o.Name == "Fence__PendingExact" {
			so = o
		}
		if o.Group == "step" && o.Action.Name == "Open" {
			open = append(open, o)
		}
	}
	text, err = so.pinned(w)
	if err != nil {
		t.Fatal(err)
	}
	if got := run("spec", text); got != "unsat" {
		t.Errorf("the spec's script with the broken variant's counterexample pinned: %s", got)
	}
	together, err := s.combined(open)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(together.Text, "negated conclusion: (TypeOK /\\ RunShape") {
		t.Errorf("the combined script's conclusion:\n%.2000s", together.Text)
	}
	if got := run("open", together.Text); got != "unsat" {
		t.Errorf("the Open obligations together: %s", got)
	}
}
