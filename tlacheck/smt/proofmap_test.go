package smt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	specFile  = "../../spec/tla/SoundGate.tla"
	proofFile = "../../spec/tlaps/SoundGateProofs.tla"
)

// soundGate translates the spec and generates its obligations, as tlasmt does.
func soundGate(t *testing.T) (*Spec, []*Obligation) {
	t.Helper()
	src, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Translate("spec/tla/SoundGate.tla", string(src), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	obs, err := s.Obligations()
	if err != nil {
		t.Fatal(err)
	}
	return s, obs
}

// checkProofFile is CheckProof on a file, as tlasmt reads it.
func checkProofFile(t *testing.T, path string, s *Spec, obs []*Obligation) *ProofMap {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return CheckProof("SoundGateProofs.tla", string(src), s, obs)
}

// Every numbered step of the proof text is discharged and every obligation of the
// generator discharges one step.
func TestProofStepsTiedToObligations(t *testing.T) {
	s, obs := soundGate(t)
	m := checkProofFile(t, proofFile, s, obs)
	for _, p := range m.Problems {
		t.Errorf("%s", p)
	}
	t.Log(m.Figure())
	proofs := 0
	for _, o := range obs {
		if o.Expect == "unsat" {
			proofs++
		}
	}
	if m.Obligations != proofs || proofs == 0 || len(m.Unmapped) != 0 {
		t.Errorf("obligations %d of %d generated, %d without a step", m.Obligations, proofs, len(m.Unmapped))
	}
	byObs, stut, cited := m.Count()
	if stut != 1 || cited != 3 || byObs+stut+cited != len(m.Steps) || m.Tied() != len(m.Steps) {
		t.Errorf("steps %d: by obligations %d, stuttering %d, cited %d, tied %d", len(m.Steps), byObs, stut, cited, m.Tied())
	}
	named := 0
	for _, st := range m.Steps {
		named += len(st.Obligations)
	}
	if named != proofs {
		t.Errorf("the steps name %d obligations, the generator has %d", named, proofs)
	}
	// The theorems and the steps of the inductive step, as the text has them.
	if got := strings.Join(m.Theorems, ","); got != "InitIndInv,IndInvSafe,StepIndInv,SpecSafe" {
		t.Errorf("theorems %s", got)
	}
	if got := strings.Join(m.Lemmas, ","); got != "DropShape,HistoryKept" {
		t.Errorf("lemmas %s", got)
	}
}

// Negative controls: a mutated copy of the proof text, written to a temp dir, must
// fail, naming the step (or the obligation) at fault.
func TestProofMapCatchesMutations(t *testing.T) {
	s, obs := soundGate(t)
	orig, err := os.ReadFile(proofFile)
	if err != nil {
		t.Fatal(err)
	}
	text := string(orig)
	cases := []struct {
		name, old, new string
		want           []string // each must be a substring of some problem
	}{
		{"annotation removed", "        \\* smt: Init__RunShape\n", "",
			[]string{"InitIndInv <1>2 (line ", "no obligation discharges it", "obligation Init__RunShape (Init => RunShape) has no step"}},
		{"obligation missing from a list", "Fence__NoOrphanHold, ", "",
			[]string{"StepIndInv <1>6 (line ", "claims NoOrphanHold, which none of the obligations it names concludes", "obligation Fence__NoOrphanHold"}},
		{"an obligation that does not exist", "Open__TypeOK,", "Open__TypeOk,",
			[]string{"StepIndInv <1>1 (line ", "names Open__TypeOk, which is no obligation of the generator"}},
		{"an action step names another action's obligation", "Open__TypeOK,", "Admit__TypeOK,",
			[]string{"StepIndInv <1>1 (line ", "names Admit__TypeOK, an obligation of action Admit, but the step assumes Open",
				"obligation Admit__TypeOK is named by 2 steps"}},
		{"the Init theorem names a step obligation", "\\* smt: Init__TypeOK", "\\* smt: Open__TypeOK",
			[]string{"InitIndInv <1>1 (line ", "names Open__TypeOK, a step obligation", "obligation Init__TypeOK (Init => TypeOK) has no step"}},
		{"the Safety theorem names an Init obligation", "\\* smt: IndInv__TypeOK", "\\* smt: Init__TypeOK",
			[]string{"IndInvSafe <1>1 (line ", "names Init__TypeOK, an init obligation", "obligation IndInv__TypeOK"}},
		{"a claim the obligations do not conclude", "\\* smt: Init__TypeOK\n", "\\* smt: Init__RunShape\n",
			[]string{"InitIndInv <1>1 (line ", "claims TypeOK, which none of the obligations it names concludes",
				"names an obligation concluding RunShape, which its claim \"TypeOK\" does not include"}},
		{"stuttering on a step that is not UNCHANGED vars", "  <1>0. CASE UNCHANGED vars\n", "  <1>0. CASE UNCHANGED histVars\n",
			[]string{"StepIndInv <1>0 (line ", "UNCHANGED histVars leaves runStatus, runEpoch"}},
		{"stuttering marks an action step", "        \\* smt: Cancel__TypeOK, Cancel__RunShape, Cancel__EffectShape, Cancel__HistoryShape,\n        \\*      Cancel__NoOrphanHold, Cancel__PendingExact, Cancel__CurrentEpoch\n", "        \\* smt: stuttering\n",
			[]string{"StepIndInv <1>5 (line ", "is not CASE UNCHANGED v", "obligation Cancel__TypeOK"}},
		{"a step whose parameters are not the action's", "ASSUME NEW r \\in Runs, NEW k \\in Keys, NEW d \\in Decisions, Decide(r, k, d)", "ASSUME NEW r \\in Runs, NEW k \\in Keys, NEW d \\in Outcomes, Decide(r, k, d)",
			[]string{"StepIndInv <1>3 (line ", "declares NEW d \\in Outcomes, but Next draws d from Decisions"}},
		{"a cited theorem with another statement", "  <1>3. IndInv => TypeOK /\\ Safety /\\ Structure\n", "  <1>3. IndInv => Safety\n",
			[]string{"SpecSafe <1>3 (line ", "cites IndInvSafe, which states"}},
		{"an annotation under the proof of a step", "        BY DEF Init, RunShape\n", "        BY DEF Init, RunShape\n        \\* smt: Init__RunShape\n",
			[]string{"SoundGateProofs.tla:55: a \\* smt: annotation that is not on the line after a <1>k step's statement"}},
		{"a new step with no annotation", "  <1> QED\n      BY <1>1, <1>2, <1>3\n", "  <1>4. P1\n        BY <1>2\n  <1> QED\n      BY <1>1, <1>2, <1>3\n",
			[]string{"IndInvSafe <1>4 (line ", "no obligation discharges it"}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		if strings.Count(text, c.old) != 1 {
			t.Fatalf("%s: the proof text holds %q %d times, not once", c.name, c.old, strings.Count(text, c.old))
		}
		path := filepath.Join(dir, "SoundGateProofs.tla")
		if err := os.WriteFile(path, []byte(strings.Replace(text, c.old, c.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		m := checkProofFile(t, path, s, obs)
		if m.OK() {
			t.Errorf("%s: the mutated proof text passed", c.name)
			continue
		}
		all := strings.Join(m.Problems, "\n")
		t.Logf("%s:\n%s", c.name, all)
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no problem says %q; the problems:\n%s", c.name, w, all)
			}
		}
	}
}
