package smt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// small is a module whose IndInv ends in the conjunct under test (%s), on line 9.
const small = `---- MODULE T ----
EXTENDS Naturals, FiniteSets
CONSTANTS S, N
ASSUME N \in Nat
VARIABLES x, f
TypeOK == x \in 0..N /\ f \in [S -> BOOLEAN]
Init == x = 0 /\ f = [s \in S |-> FALSE]
Next == \E s \in S : x' = x + 1 /\ f' = [f EXCEPT ![s] = TRUE]
Inv == TypeOK /\ %s
====
`

func smallOptions() Options {
	return Options{Init: "Init", Next: "Next", IndInv: "Inv", TypeOK: "TypeOK", Props: []string{"Inv"}}
}

// stepText is the text of the obligation Next's action => the tested conjunct'.
func stepText(t *testing.T, conj string) (string, error) {
	t.Helper()
	s, err := Translate("T.tla", fmt.Sprintf(small, conj), smallOptions())
	if err != nil {
		return "", err
	}
	obs, err := s.Obligations()
	if err != nil {
		return "", err
	}
	for _, o := range obs {
		if o.Name == "Next_1__Inv_2" {
			return o.Text, nil
		}
	}
	t.Fatalf("no obligation Next_1__Inv_2")
	return "", nil
}

func TestTranslateConstructs(t *testing.T) {
	cases := []struct {
		conj string
		want []string // in the negated conclusion
	}{
		{`x <= N`, []string{"(assert (not (<= |x'| N)))"}},
		{`x + 1 > 0 - x`, []string{"(> (+ |x'| 1) (- 0 |x'|))"}},
		{`\A s \in S : f[s] => x > 0`, []string{"(forall ((x!", " S)) (=> (select |f'| x!"}},
		{`\E s \in S : f[s]`, []string{"(exists ((x!", " S)) (select |f'| x!"}},
		{`{s \in S : f[s]} = {}`, []string{"(= (select |f'| x!", ") false)"}},
		{`f = [s \in S |-> TRUE]`, []string{"(= |f'| ((as const (Array S Bool)) true))"}},
		{`x \in {1, 2}`, []string{"(or (= |x'| 1) (= |x'| 2))"}},
		{`IF x = 0 THEN f = f ELSE TRUE`, []string{"(ite (= |x'| 0) (= |f'| |f'|) true)"}},
		{`[a |-> x, b |-> "u"].b = "u"`, []string{"; negated conclusion: Inv_2'\n(assert false)"}}, // a field of a record literal, strings compared as literals
		{`"u" # "v"`, []string{"; negated conclusion: Inv_2'\n(assert false)"}},
		// the action itself: the EXCEPT is a store, the \E a skolem constant
		{`TRUE`, []string{"(declare-const Next_1!s S)", "(= |f'| (store f Next_1!s true))", "(= |x'| (+ x 1))"}},
	}
	for _, c := range cases {
		text, err := stepText(t, c.conj)
		if err != nil {
			t.Errorf("%s: %v", c.conj, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the obligation lacks %q:\n%s", c.conj, w, text)
			}
		}
		if !strings.HasSuffix(text, "(check-sat)\n") {
			t.Errorf("%s: the obligation does not end in (check-sat)", c.conj)
		}
	}
}

func TestTranslateRefusesWithPosition(t *testing.T) {
	cases := []struct {
		conj, at, msg string
	}{
		{`CHOOSE s \in S : f[s]`, `CHOOSE`, "CHOOSE"},
		{`Cardinality({s \in S : f[s]}) = 1`, `Cardinality`, "the operator Cardinality"},
		{`[n \in 1..N |-> 0] = [n \in 1..N |-> 0]`, `..`, "domain is not a CONSTANT set of model values"},
		{`<<x, x>> = <<x, x>>`, `<<`, "a tuple"},
		{`x % 2 = 0`, `%`, "the operator %"},
		{`{x + 1 : s \in S} = {}`, `{x`, "a set map"},
		{`x = "u"`, `= "u"`, "= between a Int and a STRING"},
		{`CASE x = 0 -> TRUE [] x = 1 -> FALSE`, `CASE`, "CASE without OTHER"},
	}
	for _, c := range cases {
		_, err := stepText(t, c.conj)
		var rf *Refusal
		if !errors.As(err, &rf) {
			t.Errorf("%s: not refused: %v", c.conj, err)
			continue
		}
		line := fmt.Sprintf("Inv == TypeOK /\\ %s", c.conj)
		wantCol := strings.Index(line, c.at) + 1
		if rf.Pos.Line != 9 || rf.Pos.Col != wantCol || !strings.Contains(rf.Msg, c.msg) {
			t.Errorf("%s: refused as %v, want T.tla:9:%d and %q", c.conj, err, wantCol, c.msg)
		}
		if !strings.HasPrefix(err.Error(), fmt.Sprintf("T.tla:9:%d: ", wantCol)) {
			t.Errorf("%s: the refusal %q does not start with file:line:col", c.conj, err)
		}
	}
}

// An action that leaves a variable's next value open is refused: the SMT variable's
// type would restrict what TLA+ leaves free.
func TestTranslateRefusesUnassigned(t *testing.T) {
	src := strings.Replace(fmt.Sprintf(small, "TRUE"), ` /\ f' = [f EXCEPT ![s] = TRUE]`, "", 1)
	_, err := Translate("T.tla", src, smallOptions())
	if err == nil || !strings.Contains(err.Error(), "does not determine f'") || !strings.HasPrefix(err.Error(), "T.tla:8:") {
		t.Fatalf("got %v, want a refusal at T.tla:8 naming f'", err)
	}
}

// solvers returns z3 and cvc5, or skips; under CI a missing solver fails the test.
func solvers(t *testing.T) []Solver {
	ss, err := FindSolvers(KnownSolvers)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %v", err)
		}
		t.Skipf("%v (CI unset: skipped; run ci/smt/install.sh)", err)
	}
	return ss
}

// A few obligations of the real spec through both solvers: proofs unsat, and the
// broken Fence variant sat with a counterexample tlacheck replays.
func TestSolversOnSoundGate(t *testing.T) {
	ss := solvers(t)
	_, obs := soundGate(t)
	src, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want := map[string]bool{"Init__PendingExact": true, "Fence__PendingExact": true, "IndInv__P3": true, "Open__RunShape": true}
	for _, o := range obs {
		if !want[o.Name] {
			continue
		}
		delete(want, o.Name)
		f := filepath.Join(dir, o.Name+".smt2")
		if err := os.WriteFile(f, []byte(o.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sv := range ss {
			if a := sv.Run(f, false, 60*time.Second); a.Result != "unsat" {
				t.Errorf("%s: %s answered %s %s", o.Name, sv.Name, a.Result, a.Detail)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("obligations not generated: %v", want)
	}
	cfg := RunConfig{Solvers: ss, Workers: 2, Timeout: 60 * time.Second, MaxSize: 1, Options: DefaultOptions()}
	bsrc, err := os.ReadFile("../../spec/tla/broken/BrokenStructureFenceKeepsPending.tla")
	if err != nil {
		t.Fatal(err)
	}
	res := cfg.satCheck("fence", "BrokenStructureFenceKeepsPending.tla", string(bsrc), DefaultOptions(), func(s *Spec) (*Obligation, error) {
		return s.StepObligation("Fence", "PendingExact", "sat")
	}, dir)
	if !res.ok || !strings.Contains(res.witness, "pending    (r1 :> {k1})") {
		t.Errorf("the broken Fence variant was not caught with its counterexample: %+v", res)
	}
	// The same check on the correct spec must find no counterexample.
	res = cfg.satCheck("fence-ok", "SoundGate.tla", string(src), DefaultOptions(), func(s *Spec) (*Obligation, error) {
		return s.StepObligation("Fence", "PendingExact", "sat")
	}, dir)
	if res.ok {
		t.Errorf("a counterexample on the correct spec: %+v", res)
	}
}

// Every variant of SoundGate.tla in spec/tla/broken has a line in the table, and every
// line a variant; the variants of other specs (WAL.tla's) are not the table's.
func TestBrokenTableCoversTheFolder(t *testing.T) {
	files, err := Variants("../../spec/tla/broken", "../../spec/tla/SoundGate.tla")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := filepath.Glob("../../spec/tla/broken/*.tla")
	if len(files) == 0 || len(files) == len(all) {
		t.Fatalf("Variants: %d of the %d files of spec/tla/broken copy SoundGate.tla; want some, and not the WAL's", len(files), len(all))
	}
	inTable := map[string]bool{}
	for _, c := range BrokenCases {
		inTable[c.Variant] = true
	}
	for _, f := range files {
		v := strings.TrimSuffix(filepath.Base(f), ".tla")
		if !inTable[v] {
			t.Errorf("%s is not in BrokenCases", v)
		}
		delete(inTable, v)
	}
	for v := range inTable {
		t.Errorf("BrokenCases names %s, which spec/tla/broken does not hold", v)
	}
}
