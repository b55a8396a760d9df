package mutation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixtureDir is the fixture module: small functions whose mutants have known fates.
const fixtureDir = "testdata/fixture"

// listFixture generates the fixture's mutants without running them.
func listFixture(t *testing.T, dir string, mod func(*Config)) *Report {
	t.Helper()
	cfg := Config{Dir: dir, Packages: []string{"."}, TestPackages: []string{"."}, ListOnly: true}
	if mod != nil {
		mod(&cfg)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(list): %v", err)
	}
	return rep
}

// find returns the mutant of function fn with operator op turning orig into repl.
func find(t *testing.T, ms []*Mutant, fn string, op Operator, orig, repl string) *Mutant {
	t.Helper()
	for _, m := range ms {
		if m.Func == fn && m.Operator == op && m.Original == orig && m.Replacement == repl {
			return m
		}
	}
	t.Fatalf("no %s mutant %q -> %q in %s", op, orig, repl, fn)
	return nil
}

// treeHash hashes every file (path and content) under dir.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00" + info.Mode().String() + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestOperatorCounts checks the number of mutants per operator on the fixture; the
// expected figures were counted by hand from fixture.go (see the comments).
func TestOperatorCounts(t *testing.T) {
	rep := listFixture(t, fixtureDir, nil)
	want := map[Operator]int{
		OpNegateCond:  7, // Clamp <, >; IsAdult >=; SumBelow <; Lookup ok; Reverse >=; Save !=
		OpBoundary:    5, // Clamp <, >; IsAdult >=; SumBelow <; Reverse >=
		OpBoolean:     2, // Both: && and !
		OpArith:       6, // SumBelow ++, +=; Identity *; Reverse -, --; ParallelSum +=
		OpConstant:    9, // 18; s := 0; i := 0; * 1; -1; len-1; >= 0; total := 0; Add(1)
		OpRemoveStmt:  2, // s += i; total += x (a for statement's post is not removed)
		OpRemoveCall:  2, // wg.Add(1); mu.Lock()
		OpEarlyReturn: 7, // every function whose body does not start with a return
		OpMapWrite:    1, // m[w] = i
		OpSliceWrite:  1, // out = append(out, ...)
		OpUnlockDrop:  1, // mu.Unlock()
		OpSyncDrop:    1, // f.Sync()
		OpWaitDrop:    1, // wg.Wait()
	}
	got := map[Operator]int{}
	for _, m := range rep.Mutants {
		got[m.Operator]++
		if m.Status != StatusPending {
			t.Errorf("%s: status %s before running", m.ID, m.Status)
		}
	}
	for _, op := range Operators {
		if got[op] != want[op] {
			t.Errorf("operator %s: %d mutants, want %d", op, got[op], want[op])
		}
		if rep.Stats.Generated[op] != got[op] {
			t.Errorf("operator %s: Stats.Generated %d, listed %d", op, rep.Stats.Generated[op], got[op])
		}
	}
	// Every id is unique and every diff shows the change.
	seen := map[string]bool{}
	for _, m := range rep.Mutants {
		if seen[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		seen[m.ID] = true
		if !strings.Contains(m.Diff, "+") || !strings.HasPrefix(m.Diff, "--- a/fixture.go") {
			t.Errorf("%s: diff %q", m.ID, m.Diff)
		}
	}
	// The sync-drop of `return f.Sync()` needs no keep-alive: f is used elsewhere.
	find(t, rep.Mutants, "Save", OpSyncDrop, "f.Sync()", "error(nil)")
	// Removing `s += i` compiles as a plain removal.
	find(t, rep.Mutants, "SumBelow", OpRemoveStmt, "s += i", "")
}

// TestTypeCheckDiscards checks that generation drops a mutant that cannot compile: the
// constant mutant x[1] -> x[2] on a [2]int is an out-of-range index go/types rejects.
func TestTypeCheckDiscards(t *testing.T) {
	dir := tempModule(t, "d", "d.go", "package d\n\nfunc F() int {\n\tx := [2]int{4, 5}\n\treturn x[1]\n}\n")
	rep := listFixture(t, dir, nil)
	if rep.Stats.Discarded[OpConstant] != 1 {
		t.Fatalf("discarded constant mutants = %d, want 1 (x[2] is out of range): %+v",
			rep.Stats.Discarded[OpConstant], rep.Stats)
	}
	for _, m := range rep.Mutants {
		if m.Replacement == "2" && m.Original == "1" {
			t.Errorf("the out-of-range mutant %s was kept", m.ID)
		}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tempModule writes module mod in a new temporary directory with the files given as
// name, content pairs, and returns the directory.
func tempModule(t *testing.T, mod string, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module "+mod+"\n\ngo 1.26\n")
	for i := 0; i+1 < len(files); i += 2 {
		write(t, filepath.Join(dir, files[i]), files[i+1])
	}
	return dir
}

// TestOutcomes runs four mutants of known fate and checks their outcomes, the score
// and that the working tree is byte-for-byte unchanged and the temporary files gone.
func TestOutcomes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	before := treeHash(t, fixtureDir)
	all := listFixture(t, fixtureDir, nil).Mutants
	kill := find(t, all, "Clamp", OpNegateCond, "<", ">=")
	survive := find(t, all, "IsAdult", OpBoundary, ">=", ">")
	hang := find(t, all, "SumBelow", OpArith, "++", "--") // a for post: its own build
	deadlock := find(t, all, "ParallelSum", OpUnlockDrop, "mu.Unlock()", "")
	equiv := find(t, all, "Identity", OpArith, "*", "/")
	rep, err := Run(context.Background(), Config{
		Dir: fixtureDir, Packages: []string{"."}, TestPackages: []string{"."},
		Workers: 2, TimeoutFloor: time.Second, TimeoutFactor: 2,
		Only: []string{kill.ID, survive.ID, hang.ID, deadlock.ID, equiv.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Mutant{}
	for _, m := range rep.Mutants {
		byID[m.ID] = m
	}
	for _, c := range []struct {
		m    *Mutant
		want Status
		runs int
		mode string
	}{
		{kill, StatusKilled, 1, "schema"},
		{survive, StatusSurvived, 1, "overlay"}, // a schema survivor is confirmed alone
		{hang, StatusTimedOut, 2, "overlay"},
		{deadlock, StatusTimedOut, 2, "schema"},
		{equiv, StatusEquivalent, 1, "overlay"},
	} {
		got := byID[c.m.ID]
		if got == nil {
			t.Fatalf("%s not in the report", c.m.ID)
		}
		if got.Status != c.want || got.Runs != c.runs || got.Mode != c.mode {
			t.Errorf("%s: %s after %d %s runs, want %s after %d %s (%s)", got.ID, got.Status, got.Runs,
				got.Mode, c.want, c.runs, c.mode, got.Message)
		}
	}
	if k := byID[kill.ID].KilledBy; k != "fixture.TestClamp" {
		t.Errorf("killed by %q, want fixture.TestClamp", k)
	}
	if !strings.Contains(byID[hang.ID].Message, "timed out") {
		t.Errorf("timeout message %q", byID[hang.ID].Message)
	}
	if rep.Scored != 4 || rep.Counts[StatusKilled] != 1 || rep.Score != 0.25 {
		t.Errorf("score %.3f of %d scored, counts %v; want 1/4", rep.Score, rep.Scored, rep.Counts)
	}
	if rep.Passed(0.9) || !rep.Passed(0.25) {
		t.Errorf("Passed: score %.3f judged wrongly against 0.9 and 0.3", rep.Score)
	}
	if rep.TimeoutSeconds < 1 {
		t.Errorf("timeout %.2fs below the 1s floor", rep.TimeoutSeconds)
	}
	var out bytes.Buffer
	rep.WriteSummary(&out, "fixture", 0.9)
	for _, want := range []string{"survivors (1):", "-\treturn age >= 18", "+\treturn age > 18",
		"score       25.0%", "FAIL: below 90.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if after := treeHash(t, fixtureDir); after != before {
		t.Error("the fixture tree changed during the run")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "soundgate-mutation-*")); len(left) > 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}
}

// TestNotViable checks that a mutant the compiler rejects is reported as not viable
// with the compiler's message. Generation never proposes one (the type checker
// drops it), so the mutant is made by hand.
func TestNotViable(t *testing.T) {
	all := listFixture(t, fixtureDir, nil).Mutants
	m := *find(t, all, "Clamp", OpNegateCond, "<", ">=")
	m.Replacement = "< \"x\" +" // v < "x" + lo: mismatched types
	tmp := t.TempDir()
	dir, _ := filepath.Abs(fixtureDir)
	r := &runner{cfg: Config{Dir: dir, TestPackages: []string{"."}}, tmp: tmp,
		timeout: 10 * time.Second, archives: map[string][]byte{}}
	r.test(context.Background(), &m)
	if m.Status != StatusNotViable || !strings.Contains(m.Message, "mismatched types") {
		t.Fatalf("status %s, message %q; want not viable with the compiler's message", m.Status, m.Message)
	}
}

// TestStableIDs checks that ids survive edits elsewhere in the file and change with
// the code they describe.
func TestStableIDs(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, fixtureDir, dir)
	before := listFixture(t, dir, nil).Mutants
	path := filepath.Join(dir, "fixture.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Insert a function at the top, and change IsAdult's constant.
	s := strings.Replace(string(src), "// Clamp limits", "// Extra shifts every line.\nfunc Extra(a int) int {\n\tif a > 2 {\n\t\treturn a + 1\n\t}\n\treturn a\n}\n\n// Clamp limits", 1)
	s = strings.Replace(s, "return age >= 18", "return age >= 21", 1)
	write(t, path, s)
	after := listFixture(t, dir, nil).Mutants
	ids := map[string]*Mutant{}
	for _, m := range after {
		ids[m.ID] = m
	}
	kept, renamed := 0, 0
	for _, m := range before {
		n, ok := ids[m.ID]
		switch {
		case m.Func == "IsAdult" && ok:
			t.Errorf("%s kept its id although its statement changed", m.ID)
		case m.Func == "IsAdult":
			renamed++
		case !ok:
			t.Errorf("%s (%s) lost its id after an edit elsewhere", m.ID, m.Position())
		case n.Line != m.Line+8:
			t.Errorf("%s moved from line %d to %d, want %d", m.ID, m.Line, n.Line, m.Line+8)
		default:
			kept++
		}
	}
	if kept != len(before)-3 || renamed != 3 {
		t.Errorf("kept %d, renamed %d of %d", kept, renamed, len(before))
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEditsDuringRunAreNotSeen: a run tests the module as it was when it began.
// Right after the run copies the module, the test file in the tree is broken and a
// test file that does not compile is added: the run still kills and keeps the same
// mutants, and the tree keeps the edits (the run wrote nothing back).
func TestEditsDuringRunAreNotSeen(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, fixtureDir, dir)
	all := listFixture(t, dir, nil).Mutants
	kill := find(t, all, "Clamp", OpNegateCond, "<", ">=")
	survive := find(t, all, "IsAdult", OpBoundary, ">=", ">")
	broken := "package fixture\n\nfunc TestBroken(t *testing.T) { undefined() }\n"
	testHookCopied = func() {
		write(t, filepath.Join(dir, "fixture_test.go"), broken)
		write(t, filepath.Join(dir, "added_test.go"), broken)
	}
	defer func() { testHookCopied = nil }()
	rep, err := Run(context.Background(), Config{
		Dir: dir, Packages: []string{"."}, TestPackages: []string{"."}, Workers: 2,
		Only: []string{kill.ID, survive.ID},
	})
	if err != nil {
		t.Fatalf("a run whose tree was edited after it began: %v", err)
	}
	got := map[string]Status{}
	for _, m := range rep.Mutants {
		got[m.ID] = m.Status
	}
	if got[kill.ID] != StatusKilled || got[survive.ID] != StatusSurvived {
		t.Errorf("outcomes %v, want %s killed and %s survived", got, kill.ID, survive.ID)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "added_test.go")); string(b) != broken {
		t.Error("the edit made during the run is gone")
	}
}

// TestSuppressions checks the file format and that suppressed mutants are not run.
func TestSuppressions(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       error
		n          int
	}{
		{"ok", "# comment\n\na.go:F:boundary:0123abcd  x <= 0 and x < 0 agree: x is never 0 here\n", nil, 1},
		{"tab", "a.go:F:boundary:0123abcd\tequivalent\n", nil, 1},
		{"no reason", "a.go:F:boundary:0123abcd\n", ErrSuppression, 0},
		{"not an id", "boundary because\n", ErrSuppression, 0},
		{"twice", "a.go:F:x:1 r\na.go:F:x:1 r\n", ErrSuppression, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSuppressions(strings.NewReader(c.text))
			if !errors.Is(err, c.want) || len(s) != c.n {
				t.Fatalf("got %v, %d entries; want %v, %d", err, len(s), c.want, c.n)
			}
		})
	}
	all := listFixture(t, fixtureDir, nil).Mutants
	eq := find(t, all, "Clamp", OpBoundary, "<", "<=")
	rep := listFixture(t, fixtureDir, func(c *Config) {
		c.Suppress = map[string]string{eq.ID: "v == lo returns lo either way", "gone.go:F:arith:00000000": "old"}
	})
	got := find(t, rep.Mutants, "Clamp", OpBoundary, "<", "<=")
	if got.Status != StatusSuppressed || got.Message != "v == lo returns lo either way" {
		t.Errorf("suppressed mutant: %s %q", got.Status, got.Message)
	}
	if len(rep.StaleSuppressions) != 1 || rep.StaleSuppressions[0] != "gone.go:F:arith:00000000" {
		t.Errorf("stale suppressions %v", rep.StaleSuppressions)
	}
}

// TestDiffMode checks that --diff keeps only mutants on changed lines.
func TestDiffMode(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for --diff and is not installed")
	}
	dir := t.TempDir()
	copyDir(t, fixtureDir, dir)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	path := filepath.Join(dir, "fixture.go")
	src, _ := os.ReadFile(path)
	write(t, path, strings.Replace(string(src), "return age >= 18", "return age >= 21", 1))
	rep := listFixture(t, dir, func(c *Config) { c.DiffBase = "HEAD" })
	if len(rep.Mutants) != 3 {
		t.Fatalf("%d mutants on the changed line, want 3 (negate, boundary, constant)", len(rep.Mutants))
	}
	for _, m := range rep.Mutants {
		if m.Func != "IsAdult" {
			t.Errorf("%s is not on a changed line", m.ID)
		}
	}
	_, err := Run(context.Background(), Config{Dir: dir, Packages: []string{"."},
		TestPackages: []string{"."}, ListOnly: true, DiffBase: "no-such-rev"})
	if !errors.Is(err, ErrGit) {
		t.Errorf("bad base: %v, want ErrGit", err)
	}
}

// TestBaselineMustPass checks that a red suite is refused instead of scored.
func TestBaselineMustPass(t *testing.T) {
	dir := tempModule(t, "r",
		"r.go", "package r\n\nfunc F(x int) int { return x + 1 }\n",
		"r_test.go", "package r\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) {\n\tif F(1) != 3 {\n\t\tt.Fatal(\"red\")\n\t}\n}\n")
	_, err := Run(context.Background(), Config{Dir: dir, Packages: []string{"."}, TestPackages: []string{"."}})
	if !errors.Is(err, ErrBaseline) {
		t.Fatalf("got %v, want ErrBaseline", err)
	}
}

// TestSchemaUnwrapsConstantContexts checks that a literal in a local constant, which
// a run-time switch cannot replace, is left to its own build while its neighbours are
// switched in the schema.
func TestSchemaUnwrapsConstantContexts(t *testing.T) {
	dir := tempModule(t, "c", "c.go", "package c\n\nfunc F(x int) int {\n\tconst k = 3\n\treturn x + k\n}\n")
	targets, err := load(context.Background(), dir, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	stats := newStats()
	ms, err := generate(context.Background(), targets, &stats)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	ps, err := buildSchema(targets[0], ms, &next)
	if err != nil {
		t.Fatal(err)
	}
	if ps.rejected != 1 {
		t.Errorf("%d nodes unwrapped, want 1 (the constant 3)", ps.rejected)
	}
	for _, m := range ms {
		inConst := m.Operator == OpConstant && m.Original == "3"
		if inConst != (m.schemaID == 0) {
			t.Errorf("%s %q: schema id %d", m.ID, m.Original, m.schemaID)
		}
	}
}

// TestInterruptLeavesTreeUnchanged sends SIGINT to the command in the middle of two
// mutant runs (one in the schema binary, one in its own build) and checks the exit
// status, that the tree is byte-for-byte unchanged, the temporary files are gone and
// no test process is left running.
func TestInterruptLeavesTreeUnchanged(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "mutate")
	build := exec.Command("go", "build", "-o", bin, "github.com/soundgate/soundgate/cmd/mutate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/mutate: %v\n%s", err, out)
	}
	all := listFixture(t, fixtureDir, nil).Mutants
	hang := find(t, all, "SumBelow", OpArith, "++", "--")
	deadlock := find(t, all, "ParallelSum", OpUnlockDrop, "mu.Unlock()", "")
	runTmp := filepath.Join(tmp, "run")
	if err := os.Mkdir(runTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, fixtureDir)
	cmd := exec.Command(bin, "-C", fixtureDir, "-j", "2", "-timeout-floor", "5m",
		"-only", hang.ID+","+deadlock.ID, ".")
	cmd.Env = append(os.Environ(), "TMPDIR="+runTmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The overlay run has started once its overlay file exists.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if m, _ := filepath.Glob(filepath.Join(runTmp, "soundgate-mutation-*", "m*", "overlay.json")); len(m) > 0 {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("mutate exited before the interrupt: %v\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mutant started within 3 minutes:\n%s", out.String())
		}
	}
	time.Sleep(2 * time.Second) // let go test reach the test binary
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit %v after SIGINT, want status 130\n%s", err, out.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("mutate did not stop within a minute of SIGINT\n%s", out.String())
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("output does not say it was interrupted:\n%s", out.String())
	}
	if after := treeHash(t, fixtureDir); after != before {
		t.Error("the fixture tree changed after an interrupted run")
	}
	if left, _ := filepath.Glob(filepath.Join(runTmp, "soundgate-mutation-*")); len(left) > 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}
	// No process started under the run's temporary directory is still alive.
	time.Sleep(time.Second)
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(runTmp)) {
			t.Errorf("process left running: %s", bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
}

// TestInterruptDuringSetup: a run whose context ends while it copies the module,
// loads the packages, or type checks its mutants (minutes on a large package) stops
// with ErrInterrupted and writes nothing.
func TestInterruptDuringSetup(t *testing.T) {
	before := treeHash(t, fixtureDir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Config{Dir: fixtureDir, Packages: []string{"."}, TestPackages: []string{"."}})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), " the module") {
		t.Fatalf("Run with an ended context: %v, want ErrInterrupted while copying the module", err)
	}
	dir, err := filepath.Abs(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load(ctx, dir, []string{"."}); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "while loading the packages") {
		t.Fatalf("load with an ended context: %v, want ErrInterrupted while loading the packages", err)
	}
	targets, err := load(context.Background(), dir, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	stats := newStats()
	if _, err := generate(ctx, targets, &stats); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("generate with an ended context: %v, want ErrInterrupted", err)
	}
	if after := treeHash(t, fixtureDir); after != before {
		t.Error("the fixture tree changed")
	}
}

// TestClipKeepsTheEnd: a long test output keeps its beginning and its end, where a
// test that printed progress says why it failed.
func TestClipKeepsTheEnd(t *testing.T) {
	long := "first error\n" + strings.Repeat("progress line\n", 1000) + "--- FAIL: TestX: the reason"
	got := clip(long)
	for _, want := range []string{"first error", "--- FAIL: TestX: the reason", "bytes left out"} {
		if !strings.Contains(got, want) {
			t.Errorf("clipped message lacks %q", want)
		}
	}
	if len(got) > messageBytesMax+100 {
		t.Errorf("clipped to %d bytes, want about %d", len(got), messageBytesMax)
	}
	if short := "a short message"; clip(" "+short+"\n") != short {
		t.Errorf("a short message changed: %q", clip(short))
	}
}
