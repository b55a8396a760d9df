package drift

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/tlacheck"
)

// TestStandingRulesHoldHere: the repository's own directives name the spec's actions
// with current pins, and every action has a model and a core implementation. A spec
// change that leaves pins stale fails here, in make test.
func TestStandingRulesHoldHere(t *testing.T) {
	ops, err := LoadSpec("../..")
	require.NoError(t, err)
	ds, err := ScanDirectives("../..")
	require.NoError(t, err)
	require.Len(t, ds, 2*len(ops.Actions), "one directive per action in model/ and in impl/core")
	require.Empty(t, Standing(ops, ds))
}

const miniSpec = `---- MODULE M ----
VARIABLES x
Guard == x < 3
Inc == Guard /\ x' = x + 1
Dec == x > 0 /\ x' = x - 1
Next == Inc \/ Dec
====
`

func miniOps(t *testing.T, src string) *tlacheck.Operators {
	t.Helper()
	ops, err := tlacheck.ParseOperators(src)
	require.NoError(t, err)
	return ops
}

// TestFileDirectives: what counts as a directive, and what is refused.
func TestFileDirectives(t *testing.T) {
	src := `package p

// Inc implements Inc.
//
//spec:action Inc pin=abc
func Inc() {}

//spec:action Dec pin=1
//spec:action Inc pin=2
func (s *S) Two() {}

//spec:action Loose
var x = 1

//spec:action bad name!
func Bad() {}
`
	ds, err := FileDirectives("model/p.go", []byte(src))
	require.NoError(t, err)
	var got []string
	for _, d := range ds {
		got = append(got, strings.Join([]string{d.Action, d.Pin, d.Func, d.Bad}, "|"))
	}
	require.Equal(t, []string{
		"Inc|abc|Inc|",
		"Dec|1|S.Two|",
		"Inc|2|S.Two|a second directive on S.Two",
		"Loose|||not in the doc comment of a function",
		`||Bad|malformed: want "//spec:action NAME pin=HEX", got "//spec:action bad name!"`,
	}, got)
}

// TestStanding: one finding per broken rule, none when all hold.
func TestStanding(t *testing.T) {
	ops := miniOps(t, miniSpec)
	impl := func(pkg, action, pin string) Directive {
		return Directive{Action: action, Pin: pin, File: pkg + "/f.go", Line: 1, Func: "F" + action, Pkg: pkg}
	}
	all := []Directive{}
	for _, pkg := range ImplementedIn {
		for _, a := range ops.Actions {
			all = append(all, impl(pkg, a, ops.Pin(a)))
		}
	}
	require.Empty(t, Standing(ops, all))
	for _, tc := range []struct {
		name string
		ds   []Directive
		want []Rule
	}{
		{"a stale pin", append(all[1:len(all):len(all)], impl("model", "Inc", "000000000000")), []Rule{RuleStale}},
		{"no pin", append(all[1:len(all):len(all)], impl("model", "Inc", "")), []Rule{RuleStale}},
		{"names nothing", append(all[:len(all):len(all)], impl("impl/server", "Incc", "x")), []Rule{RuleNamesNothing}},
		{"no core implementation", all[:len(ops.Actions)], []Rule{RuleUnimplemented, RuleUnimplemented}},
		{"malformed", append(all[:len(all):len(all)], Directive{File: "impl/x.go", Line: 3, Bad: "not in the doc comment of a function"}), []Rule{RuleMalformed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []Rule
			for _, f := range Standing(ops, tc.ds) {
				got = append(got, f.Rule)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestFix rewrites a stale pin and nothing else.
func TestFix(t *testing.T) {
	root := t.TempDir()
	ops := miniOps(t, miniSpec)
	src := "package model\n\n// Inc is the spec's.\n//\n//spec:action Inc pin=000000000000\nfunc Inc() {}\n\n//spec:action Dec pin=" + ops.Pin("Dec") + "\nfunc Dec() {}\n"
	require.NoError(t, os.MkdirAll(filepath.Join(root, "model"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "model", "a.go"), []byte(src), 0o644))
	ds, err := ScanDirectives(root)
	require.NoError(t, err)
	fixed, err := Fix(root, ops, ds)
	require.NoError(t, err)
	require.Equal(t, []string{"model/a.go:5"}, fixed)
	b, err := os.ReadFile(filepath.Join(root, "model", "a.go"))
	require.NoError(t, err)
	require.Equal(t, strings.Replace(src, "pin=000000000000", "pin="+ops.Pin("Inc"), 1), string(b))
}

// TestFuncChanges: comments, layout and imports do not count; deletions do.
func TestFuncChanges(t *testing.T) {
	base := "package p\n\nimport \"fmt\"\n\nconst N = 1\n\n// F says hello.\nfunc F() { fmt.Println(N) }\n\nfunc G() {}\n\nfunc (t *T) M() {}\n"
	for _, tc := range []struct {
		name, old, new string
		want           []string
	}{
		{"a comment", "// F says hello.", "// F says hello, loudly.", nil},
		{"a comment inside", "func G() {}", "func G() { /* nothing */ }", nil},
		{"layout", "func F() { fmt.Println(N) }", "func F() {\n\tfmt.Println(N)\n}", nil},
		{"an import", "import \"fmt\"", "import (\n\t\"fmt\"\n)", nil},
		{"a body", "fmt.Println(N)", "fmt.Println(N + 1)", []string{"changed F"}},
		{"a method deleted", "\nfunc (t *T) M() {}\n", "\n", []string{"deleted T.M"}},
		{"a function added", "func G() {}", "func G() {}\n\nfunc H() {}", []string{"added H"}},
		{"a constant", "const N = 1", "const N = 2", []string{"changed (decls)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Contains(t, base, tc.old)
			cs, err := funcChanges("impl/p/p.go", []byte(base), []byte(strings.Replace(base, tc.old, tc.new, 1)))
			require.NoError(t, err)
			var got []string
			for _, c := range cs {
				require.Equal(t, "impl/p", c.Pkg)
				got = append(got, string(c.Kind)+" "+c.Func)
			}
			require.Equal(t, tc.want, got)
		})
	}
	added, err := funcChanges("impl/p/p.go", nil, []byte(base))
	require.NoError(t, err)
	require.Len(t, added, 4, "a new file adds each function and its declarations")
}

// TestTouchedBySpec: an operator's change touches every action that reaches it, on
// either side of the change.
func TestTouchedBySpec(t *testing.T) {
	old := miniOps(t, miniSpec)
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"a helper", "Guard == x < 3", "Guard == x < 4", []string{"Inc"}},
		{"an action", "x > 0 /\\ x' = x - 1", "x > 1 /\\ x' = x - 1", []string{"Dec"}},
		{"an action deleted", "Next == Inc \\/ Dec", "Next == Inc", []string{"Dec"}},
		{"a comment", "Guard == x < 3", "Guard == x < 3 \\* why", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(miniSpec, tc.from, tc.to, 1)
			if tc.name == "an action deleted" {
				src = strings.Replace(src, "Dec == x > 0 /\\ x' = x - 1\n", "", 1)
			}
			cur := miniOps(t, src)
			d := &Diff{OldSpec: old, Ops: opChanges(old, cur)}
			var got []string
			for _, a := range []string{"Inc", "Dec"} {
				if d.TouchedBySpec(cur)[a] {
					got = append(got, a)
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestAcks: the forms of a Drift-Ack line.
func TestAcks(t *testing.T) {
	msg := "core: faster admit\n\nDrift-Ack: Admit: a map lookup instead of a scan, same answers\nDrift-Ack:Fence - cleanup\nnot Drift-Ack: Cancel: x\nDrift-Ack: Open\n"
	got := map[string]string{}
	for _, m := range ackRE.FindAllStringSubmatch(msg, -1) {
		got[m[1]] = m[2]
	}
	require.Equal(t, map[string]string{"Admit": "a map lookup instead of a scan, same answers", "Fence": "cleanup"}, got)
}

// TestExitOf: review is an exit status only under -strict.
func TestExitOf(t *testing.T) {
	require.Equal(t, 0, exitOf(OK, true))
	require.Equal(t, 0, exitOf(Review, false))
	require.Equal(t, 3, exitOf(Review, true))
	require.Equal(t, 1, exitOf(Drift, false))
	require.Equal(t, Drift, worse(Review, Drift))
	require.Equal(t, Review, worse(Review, OK))
}

// TestEvidenceNotInTheTree: a check whose package the tree lacks is not run and is
// marked missing, never passed.
func TestEvidenceNotInTheTree(t *testing.T) {
	var progress strings.Builder
	r := Evidence{Name: "x", Argv: []string{"go", "test", "./no/such/package/"}, Needs: []string{"no/such/package"}}.Run(t.TempDir(), t.TempDir(), &progress)
	require.True(t, r.Missing)
	require.False(t, r.Passed)
	require.Contains(t, progress.String(), "cannot run: no/such/package is not in this tree")
	for _, e := range []Evidence{EvGraphs, EvBroken, EvWire, EvTrace, EvConformance([]string{"Admit"}), EvMutation("HEAD")} {
		for _, need := range e.Needs {
			_, err := os.Stat(filepath.Join("../..", need))
			require.NoError(t, err, "evidence %s needs %s, which this tree has", e.Name, need)
		}
		require.NotEmpty(t, e.Needs, e.Name)
	}
}

// TestChecksChanged: a change of a check reruns its evidence; the model's own code is
// attributed to actions instead, and other files are no check.
func TestChecksChanged(t *testing.T) {
	var rep Report
	got := rep.checksChanged([]string{"conformance/random.go", "model/actions.go", "model/graph_test.go", "tlacheck/eval.go", "docs/x.md", "spec/tla/SoundGate_quick.cfg"})
	require.Equal(t, map[string]bool{"conformance": true, "wire": true, "graphs": true, "broken": true}, got)
	require.Equal(t, []string{"conformance/random.go", "model/graph_test.go", "tlacheck/eval.go", "spec/tla/SoundGate_quick.cfg"}, rep.Checks)
}

// TestLastLine: the check's summary, not its runner's.
func TestLastLine(t *testing.T) {
	require.Equal(t, "mutation impl/core: 1 mutants, FAIL", lastLine("x\nmutation impl/core: 1 mutants, FAIL\nexit status 1\nmake: *** [m.mk:32: d] Error 1\n"))
	require.Equal(t, "ok  \tpkg\t0.1s", lastLine("ok  \tpkg\t0.1s\n"))
	require.Equal(t, "", lastLine(""))
}
