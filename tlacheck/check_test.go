package tlacheck

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

func loadTestdata(t *testing.T, spec, cfg string) *Spec {
	t.Helper()
	s, err := Load(filepath.Join("testdata", spec+".tla"), filepath.Join("testdata", cfg+".cfg"))
	if err != nil {
		t.Fatalf("load %s/%s: %v", spec, cfg, err)
	}
	return s
}

// loadSource loads an inline module and config, failing t on an error.
func loadSource(t *testing.T, mod, cfg string) *Spec {
	t.Helper()
	s, err := LoadSource(mod, cfg)
	noErr(t, err)
	return s
}

// noErr fails the test at once on an error.
func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The figures below are what TLC 2.20 printed for the same files with one worker;
// docs/verify/tla.md records the commands and outputs.
func TestClassicSpecsMatchTLC(t *testing.T) {
	cases := []struct {
		spec, cfg                  string
		generated, distinct, depth int64
		outcome                    Outcome
		invariant                  string
		actions                    []string // the shortest trace's actions, when it fails
	}{
		{"DieHard", "DieHard", 97, 16, 8, OK, "", nil},
		{"DieHard", "DieHard_solve", 73, 14, 7, InvariantViolated, "NotSolved",
			[]string{"Initial predicate", "FillBig", "BigToSmall", "EmptySmall", "BigToSmall", "FillBig", "BigToSmall"}},
		{"TwoPhase", "TwoPhase", 1146, 288, 11, OK, "", nil},
		{"TwoPhase", "TwoPhase_symm", 318, 80, 11, OK, "", nil},
		{"TwoPhase", "TwoPhase_big", 58146, 8832, 17, OK, "", nil},
		{"MutexBug", "MutexBug", 27, 18, 5, InvariantViolated, "MutualExclusion",
			[]string{"Initial predicate", "Check(p1)", "Check(p2)", "Set(p1)", "Set(p2)"}},
		{"Countdown", "Countdown", 4, 4, 4, Deadlock, "",
			[]string{"Initial predicate", "Tick", "Tick", "Tick"}},
		{"Countdown", "Countdown_nodeadlock", 4, 4, 4, OK, "", nil},
		{"Queue", "Queue", 341, 135, 15, OK, "", nil},
		{"Counter", "Counter", 5, 4, 4, OK, "", nil},
		{"Features", "Features", 6560, 896, 4, OK, "", nil},
		{"SymPair", "SymPair", 8399, 1321, 19, OK, "", nil},
		{"SymPair", "SymPair_union", 8399, 1321, 19, OK, "", nil},
		{"SymPair", "SymPair_diagonal", 47212, 7426, 19, OK, "", nil},
		{"SymPair", "SymPair_nosymm", 94417, 14851, 19, OK, "", nil},
	}
	for _, tc := range cases {
		for _, mode := range checkModes {
			t.Run(tc.cfg+"/"+mode.name, func(t *testing.T) {
				s := loadTestdata(t, tc.spec, tc.cfg)
				res, err := s.Check(mode.opts)
				noErr(t, err)
				if res.Generated != tc.generated || res.Distinct != tc.distinct || int64(res.Depth) != tc.depth {
					t.Errorf("figures %d generated, %d distinct, depth %d; TLC: %d, %d, %d",
						res.Generated, res.Distinct, res.Depth, tc.generated, tc.distinct, tc.depth)
				}
				if res.Outcome != tc.outcome || res.Invariant != tc.invariant {
					t.Errorf("outcome %v %q, want %v %q", res.Outcome, res.Invariant, tc.outcome, tc.invariant)
				}
				var actions []string
				for _, st := range res.Trace {
					actions = append(actions, st.Action)
				}
				if !reflect.DeepEqual(actions, tc.actions) {
					t.Errorf("trace actions %v, want %v", actions, tc.actions)
				}
				if res.Fingerprints != (mode.opts.FingerprintBytes > 0) {
					t.Errorf("the result says fingerprints %t", res.Fingerprints)
				}
			})
		}
	}
}

// checkModes are the two ways of keeping seen states; every figure and trace must
// be the same in both.
var checkModes = []struct {
	name string
	opts Options
}{
	{"exact", Options{}},
	{"fingerprints", Options{FingerprintBytes: 1 << 20}},
	{"fingerprints, no raw cache", Options{FingerprintBytes: 1 << 20, NoRawCache: true}},
}

// TestRawCacheSparesKeys: on a symmetric spec in the fingerprint mode the raw cache
// answers most successors (the figures are checked against TLC's above, with and
// without it) and stays off otherwise.
func TestRawCacheSparesKeys(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		opts Options
		on   bool
	}{
		{"SymPair", Options{FingerprintBytes: 1 << 20}, true},
		{"SymPair", Options{FingerprintBytes: 1 << 20, Workers: 2}, true},
		{"SymPair", Options{FingerprintBytes: 1 << 20, NoRawCache: true}, false},
		{"SymPair", Options{}, false},
		{"SymPair_nosymm", Options{FingerprintBytes: 1 << 20}, false},
	} {
		res, err := loadTestdata(t, "SymPair", tc.cfg).Check(tc.opts)
		noErr(t, err)
		if on := res.RawCacheBytes > 0; on != tc.on {
			t.Errorf("%s %+v: raw cache %t, want %t", tc.cfg, tc.opts, on, tc.on)
		}
		if tc.on && 2*res.RawCacheHits < res.Generated-res.Distinct {
			t.Errorf("%s %+v: the raw cache knew %d of %d successors (%d repeats)", tc.cfg, tc.opts, res.RawCacheHits, res.Generated, res.Generated-res.Distinct)
		}
		if !tc.on && res.RawCacheHits != 0 {
			t.Errorf("%s %+v: %d hits without a cache", tc.cfg, tc.opts, res.RawCacheHits)
		}
	}
}

// TestRawCacheEntries: an empty entry matches nothing, an entry holds the last pair
// put in it, and a pair torn between two writers matches neither.
func TestRawCacheEntries(t *testing.T) {
	c := newRawCache(0)
	n := c.mask + 1
	if c.seen(0, 1) || c.seen(5, 1) { // h2 is odd
		t.Error("an empty entry matched")
	}
	c.put(5, 7)
	if !c.seen(5, 7) || c.seen(5, 9) || c.seen(5+n, 7) {
		t.Error("entry (5, 7) answers wrongly")
	}
	c.put(5+n, 9) // the same entry
	if c.seen(5, 7) || !c.seen(5+n, 9) {
		t.Error("an entry does not hold the last pair put")
	}
	c.words[2*5+1] = 7 // torn: 5+n's first word, 5's second
	if c.seen(5, 7) || c.seen(5+n, 9) {
		t.Error("a torn pair matched")
	}
	if got, want := c.collisionChance(), float64(c.lookups.Load())*float64(n)/math.Exp2(127); got != want || got <= 0 {
		t.Errorf("collision chance %g, want %g", got, want)
	}
}

// TestFingerprintTraceIsTheExactOne: the fingerprint mode rebuilds a counterexample
// from fingerprints, state by state, equal to the one the exact mode keeps.
func TestFingerprintTraceIsTheExactOne(t *testing.T) {
	for _, cfg := range []string{"DieHard_solve", "MutexBug", "Countdown"} {
		spec := strings.SplitN(cfg, "_", 2)[0]
		exact, err := loadTestdata(t, spec, cfg).Check(Options{})
		noErr(t, err)
		fp, err := loadTestdata(t, spec, cfg).Check(Options{FingerprintBytes: 1 << 16})
		noErr(t, err)
		if len(exact.Trace) == 0 || !reflect.DeepEqual(exact.Trace, fp.Trace) {
			t.Errorf("%s: the traces differ:\nexact %v\nfingerprints %v", cfg, exact.Trace, fp.Trace)
		}
	}
}

// TestFingerprintSetFull: a set too small for the state space stops the run with
// ErrLimit rather than grow; the figures say how far it got.
func TestFingerprintSetFull(t *testing.T) {
	for _, workers := range []int{1, 2} {
		res, err := loadTestdata(t, "TwoPhase", "TwoPhase_big").Check(Options{FingerprintBytes: fpSetMinBytes, Workers: workers})
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "the fingerprint set is full: 768 states in 8192 bytes") {
			t.Fatalf("%d workers: err %v, want a full set (ErrLimit)", workers, err)
		}
		if res != nil {
			t.Errorf("%d workers: a stopped run returned figures %+v", workers, res)
		}
	}
}

// TestFPSet: a fingerprint is new once; 0 is kept as 1; a set holds 3/4 of its
// slots, and one more is refused without being added; the budget rounds down to a
// power of two of slots, at least 1,024.
func TestFPSet(t *testing.T) {
	s := newFPSet(100 << 10)
	if len(s.slots) != 8192 || s.bytes() != 65536 {
		t.Fatalf("%d slots for a budget of 100 KiB, want 8192", len(s.slots))
	}
	if len(newFPSet(1).slots) != 1024 {
		t.Errorf("a tiny budget gives %d slots, want 1024", len(newFPSet(1).slots))
	}
	for _, c := range []struct {
		fp          uint64
		isNew, full bool
	}{{5, true, false}, {5, false, false}, {0, true, false}, {1, false, false}, {5 + 8192, true, false}} {
		if isNew, full := s.insert(c.fp); isNew != c.isNew || full != c.full {
			t.Errorf("insert %d: new %t full %t, want %t %t", c.fp, isNew, full, c.isNew, c.full)
		}
	}
	for fp := uint64(100); s.len() < s.max; fp++ {
		s.insert(fp)
	}
	if isNew, full := s.insert(1 << 40); isNew || !full || s.len() != 6144 {
		t.Errorf("a full set: new %t full %t, %d held", isNew, full, s.len())
	}
	if isNew, full := s.insert(5); isNew || full {
		t.Errorf("a full set still finds what it holds: new %t full %t", isNew, full)
	}
}

// TestFingerprint: equal encodings hash equal; encodings that differ in one byte,
// in their length only, or in their tail's zero bytes hash apart.
func TestFingerprint(t *testing.T) {
	seen := map[uint64]string{}
	for _, b := range []string{"", "\x00", "\x00\x00", "abcdefgh", "abcdefgi", "abcdefgh\x00", "bbcdefgh", "abcdefghijklmnop", "abcdefghijklmnoq"} {
		fp := fingerprint([]byte(b))
		if fp != fingerprint([]byte(b)) {
			t.Fatalf("%q hashes two ways", b)
		}
		if other, dup := seen[fp]; dup {
			t.Errorf("%q and %q share the fingerprint %#x", b, other, fp)
		}
		seen[fp] = b
	}
}

// TestCollisionChance is TLC's formula: distinct * (generated - distinct) / 2^64.
func TestCollisionChance(t *testing.T) {
	if got := collisionChance(1<<32, 1<<32+1<<30); got != 0.25 {
		t.Errorf("got %g, want 0.25", got)
	}
	if got := collisionChance(10, 10); got != 0 {
		t.Errorf("no duplicate lookup: got %g, want 0", got)
	}
}

func TestTraceShowsStates(t *testing.T) {
	s := loadTestdata(t, "MutexBug", "MutexBug")
	res, err := s.Check(Options{})
	noErr(t, err)
	last := res.Trace[len(res.Trace)-1]
	want := "/\\ flag = (p1 :> TRUE @@ p2 :> TRUE @@ p3 :> FALSE)\n/\\ pc = (p1 :> \"cs\" @@ p2 :> \"cs\" @@ p3 :> \"idle\")\n"
	if last.Text != want {
		t.Errorf("last state\n%s\nwant\n%s", last.Text, want)
	}
	pc, ok := last.State.Field("pc")
	if !ok {
		t.Fatal("state has no field pc")
	}
	if v, _ := pc.Apply(ModelValue("p2")); v == nil || v.AsString() != "cs" {
		t.Errorf("pc[p2] = %v, want \"cs\"", v)
	}
}

func TestConstraintStatesAreNotStored(t *testing.T) {
	// TLC 2.20 on this spec: 6 states generated, 4 distinct, depth 4, no deadlock
	// (x = 3 has a successor, outside the constraint).
	mod := "---- MODULE B ----\nEXTENDS Naturals\nVARIABLE x\nInit == x \\in {0, 7}\nNext == x' = x + 1\nSmall == x < 4\n====\n"
	res, err := loadSource(t, mod, "INIT Init\nNEXT Next\nCONSTRAINT Small\n").Check(Options{})
	noErr(t, err)
	if res.Generated != 6 || res.Distinct != 4 || res.Depth != 4 || res.Outcome != OK {
		t.Errorf("got %+v", res)
	}
}

func TestUnsupportedConstructsAreRejected(t *testing.T) {
	cases := []struct {
		file, cfg, pos, msg string
	}{
		{"ActionComposition", "Default", "7:13", "action composition"},
		{"ActionInvariant", "Default", "7:1", "is an action"},
		{"BagsModule", "Default", "", "EXTENDS Bags"},
		{"Diamond", "Default", "7:8", "temporal operator <>"},
		{"Enabled", "Default", "7:8", "ENABLED"},
		{"Fairness", "Default", "7:8", "fairness"},
		{"InfixDefinition", "Default", "7:10", "operator ++"},
		{"Instance", "Default", "8:6", "INSTANCE"},
		{"InstanceRef", "Default", "7:9", "module instance reference"},
		{"Lambda", "Default", "7:14", "LAMBDA"},
		{"LeadsTo", "Default", "7:16", "leads-to"},
		{"NestedModule", "Default", "5:1", "nested MODULE"},
		{"OperatorConstant", "Default", "4:10", "operator constant F"},
		{"Proof", "Default", "9:3", "proofs (OBVIOUS)"},
		{"RandomElement", "Default", "7:8", "RandomElement"},
		{"RecursiveFunction", "Default", "8:46", "recursive function definition fact"},
		{"SelectSeq", "Default", "7:8", "SelectSeq"},
		{"TemporalBox", "Default", "7:8", "temporal operator []"},
		{"TemporalExists", "Default", "7:8", "temporal quantifier \\EE"},
		{"UnboundedChoose", "Default", "7:16", "unbounded"},
		{"UnboundedForall", "Default", "7:11", "unbounded"},
		{"RealDivision", "Default", "7:10", "real division"},
		{"NumberBase", "Default", "7:8", "\\h1F"},
		{"Enabled", "Property", "3:1", "PROPERTY"},
		{"Enabled", "ActionConstraint", "3:1", "ACTION_CONSTRAINT"},
		{"Enabled", "View", "4:1", "VIEW"},
	}
	files, _ := filepath.Glob("testdata/unsupported/*.tla")
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.file] = true
		t.Run(tc.file+"/"+tc.cfg, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata/unsupported", tc.file+".tla"), filepath.Join("testdata/unsupported", tc.cfg+".cfg"))
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("got %v, want an unsupported-construct error", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
			if tc.pos != "" && e.Pos.String() != tc.pos {
				t.Errorf("position %s, want %s (%v)", e.Pos, tc.pos, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%q does not name %q", err, tc.msg)
			}
		})
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".tla"); !covered[name] {
			t.Errorf("testdata/unsupported/%s.tla has no test case", name)
		}
	}
}

func TestInductive(t *testing.T) {
	cases := []struct {
		name, indinv string
		safety       []string
		fail         string
		candidates   int64
	}{
		{"inductive", "IndInv", []string{"Safety"}, "", 4},
		{"does not imply safety", "WeakInv", []string{"Safety"}, "IndInv => Safety", -1},
		{"not inductive", "WeakInv", nil, "IndInv /\\ Next => IndInv'", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := loadTestdata(t, "Counter", "Counter")
			r, err := s.CheckInductive(InductiveOptions{IndInv: tc.indinv, TypeOK: "TypeOK", Safety: tc.safety})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(r.Failure, tc.fail) || (tc.fail == "") != (r.Failure == "") {
				t.Errorf("failure %q, want prefix %q", r.Failure, tc.fail)
			}
			if tc.candidates >= 0 && (r.Candidates != tc.candidates || r.TypeStates != 16 || r.InitStates != 1 || r.Successors != 4) {
				t.Errorf("figures %+v", r)
			}
		})
	}
}

func TestGraphDump(t *testing.T) {
	s := loadTestdata(t, "MutexBug", "MutexBug")
	g, err := s.Graph(GraphOptions{})
	noErr(t, err)
	if len(g.Init) != 1 || g.Init[0] != 0 || !reflect.DeepEqual(g.Vars, []string{"flag", "pc"}) {
		t.Fatalf("init %v vars %v", g.Init, g.Vars)
	}
	var b strings.Builder
	if err := g.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "I 0" {
		t.Errorf("first line %q", lines[0])
	}
	if want := `S 0 [flag |-> (p1 :> FALSE @@ p2 :> FALSE @@ p3 :> FALSE), pc |-> (p1 :> "idle" @@ p2 :> "idle" @@ p3 :> "idle")]`; lines[1] != want {
		t.Errorf("state line\n%s\nwant\n%s", lines[1], want)
	}
	if !strings.Contains(b.String(), "\nE 0 1 Check(p1)\n") {
		t.Errorf("no edge E 0 1 Check(p1) in\n%s", b.String()[:500])
	}
	// Every state has a successor in MutexBug, and the edges are (from, to, label)-distinct.
	seen := map[string]bool{}
	out := map[int]bool{}
	for _, e := range g.Edges {
		k := e.Label() + "|" + g.States[e.From].String() + "|" + g.States[e.To].String()
		if seen[k] {
			t.Errorf("duplicate edge %v", e)
		}
		seen[k] = true
		out[e.From] = true
	}
	if len(out) != len(g.States) {
		t.Errorf("%d of %d states have outgoing edges", len(out), len(g.States))
	}
	// The graph ignores SYMMETRY.
	sym := loadTestdata(t, "TwoPhase", "TwoPhase_symm")
	gs, err := sym.Graph(GraphOptions{})
	noErr(t, err)
	if len(gs.States) != 288 {
		t.Errorf("TwoPhase graph with SYMMETRY in the config has %d states, want all 288", len(gs.States))
	}
}

func TestCounterexampleIsShortest(t *testing.T) {
	// Two ways to reach x = 3: one step of Jump or three of Step; the trace is Jump.
	mod := "---- MODULE J ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n" +
		"Step == x' = x + 1\nJump == x = 0 /\\ x' = 3\nNext == Step \\/ Jump\nInv == x # 3\n====\n"
	res, err := loadSource(t, mod, "INIT Init\nNEXT Next\nINVARIANT Inv\n").Check(Options{})
	noErr(t, err)
	if len(res.Trace) != 2 || res.Trace[1].Action != "Jump" {
		t.Errorf("trace %+v", res.Trace)
	}
}

func TestTestdataHasNoStrayFiles(t *testing.T) {
	// Every classic spec in testdata has at least one config exercised above.
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tla") {
			base := strings.TrimSuffix(e.Name(), ".tla")
			if _, err := os.Stat(filepath.Join("testdata", base+".cfg")); err != nil {
				t.Errorf("%s has no %s.cfg", e.Name(), base)
			}
		}
	}
}

func TestBoundNamesVaryFirstFastestAsTLC(t *testing.T) {
	// TLC's order of successors (and so its figures at a violation): in
	// \E x \in S, y \in T the first name varies fastest.
	mod := "---- MODULE O ----\nEXTENDS Naturals\nVARIABLE v\nInit == v = <<0, \"\">>\n" +
		"Set(x, y) == v' = <<x, y>>\nNext == v = <<0, \"\">> /\\ \\E x \\in 1..2, y \\in {\"a\", \"b\"} : Set(x, y)\n====\n"
	g, err := loadSource(t, mod, "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n").Graph(GraphOptions{})
	noErr(t, err)
	var got []string
	for _, e := range g.Edges {
		got = append(got, e.Label())
	}
	want := []string{`Set(1, "a")`, `Set(2, "a")`, `Set(1, "b")`, `Set(2, "b")`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("successor order %v, want %v", got, want)
	}
}

func TestProgressLines(t *testing.T) {
	s := loadTestdata(t, "TwoPhase", "TwoPhase")
	var b strings.Builder
	if _, err := s.Check(Options{Progress: &b, ProgressEvery: time.Nanosecond}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "Finished computing initial states: 1 distinct state generated.\n") {
		t.Errorf("no initial-states line:\n%s", out)
	}
	if !strings.Contains(out, "Progress(") || !strings.Contains(out, "distinct states found") || !strings.Contains(out, "states left on queue.") {
		t.Errorf("no progress line:\n%s", out)
	}
	if strings.Contains(out, "fingerprint set") {
		t.Errorf("the exact mode speaks of fingerprints:\n%s", out)
	}
	b.Reset()
	if _, err := s.Check(Options{Progress: &b, ProgressEvery: time.Nanosecond, FingerprintBytes: fpSetMinBytes}); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?m)^tlacheck: fingerprint set \d+ of 768 states \(\d+%\), full (in about \S+|never) at this rate; queue \d+ states, \d+ bytes compressed in memory, 0 in its file(; resident \d+ MiB, \d+ bytes per distinct state)?$`)
	if !line.MatchString(b.String()) {
		t.Errorf("no fingerprint progress line:\n%s", b.String())
	}
	if runtime.GOOS == "linux" && !strings.Contains(b.String(), " bytes per distinct state") {
		t.Errorf("no resident size on Linux:\n%s", b.String())
	}
}

// TestWorkersGiveOneWorkersFigures: with 2 and 3 workers every testdata spec and the
// gate's spec reach TLC's figures, and a failing one a counterexample of the least
// length that ends in a state violating the same invariant.
func TestWorkersGiveOneWorkersFigures(t *testing.T) {
	type run struct{ spec, cfg string }
	runs := []run{{"DieHard", "DieHard"}, {"DieHard", "DieHard_solve"}, {"TwoPhase", "TwoPhase_big"}, {"TwoPhase", "TwoPhase_symm"},
		{"MutexBug", "MutexBug"}, {"Countdown", "Countdown"}, {"Queue", "Queue"}, {"Features", "Features"},
		{"SymPair", "SymPair"}, {"SymPair", "SymPair_diagonal"}}
	for _, rn := range runs {
		one, err := loadTestdata(t, rn.spec, rn.cfg).Check(Options{FingerprintBytes: 1 << 20})
		noErr(t, err)
		for _, workers := range []int{2, 3} {
			got, err := loadTestdata(t, rn.spec, rn.cfg).Check(Options{FingerprintBytes: 1 << 20, Workers: workers})
			noErr(t, err)
			if one.Outcome == OK && (got.Generated != one.Generated || got.Distinct != one.Distinct || got.Depth != one.Depth || got.Outcome != OK) {
				t.Errorf("%s, %d workers: %d/%d/%d %v, one worker %d/%d/%d", rn.cfg, workers, got.Generated, got.Distinct, got.Depth, got.Outcome, one.Generated, one.Distinct, one.Depth)
			}
			if one.Outcome != OK && (got.Outcome != one.Outcome || got.Invariant != one.Invariant || len(got.Trace) != len(one.Trace)) {
				t.Errorf("%s, %d workers: %v %q in %d steps, one worker %v %q in %d", rn.cfg, workers, got.Outcome, got.Invariant, len(got.Trace), one.Outcome, one.Invariant, len(one.Trace))
			}
		}
	}
}
