package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const td = "../../tlacheck/testdata/"

func TestExitCodesAndSummary(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		last string // prefix of the last line of stdout
		has  string // text somewhere in stdout
	}{
		{"ok", []string{"-config", td + "DieHard.cfg", td + "DieHard.tla"}, exitOK,
			"tla DieHard: 97 generated, 16 distinct, depth 8,", "Model checking completed. No error has been found."},
		{"violation", []string{"-config", td + "MutexBug.cfg", td + "MutexBug.tla"}, exitSafety,
			"tla MutexBug: 27 generated, 18 distinct, depth 5,", "State 5: <Set(p2)>"},
		{"ok, exact", []string{"-config", td + "DieHard.cfg", td + "DieHard.tla"}, exitOK,
			"tla DieHard: 97 generated, 16 distinct, depth 8, ", ", exact, ok"},
		{"violation, fingerprints", []string{"-fingerprints", "1", "-config", td + "MutexBug.cfg", td + "MutexBug.tla"}, exitSafety,
			"tla MutexBug: 27 generated, 18 distinct, depth 5,", ", fingerprints (131072 slots, collision chance 8.8e-18, 0 bytes of the queue spilled), invariant MutualExclusion violated"},
		{"deadlock", []string{"-config", td + "Countdown.cfg", td + "Countdown.tla"}, exitDeadlock,
			"tla Countdown: 4 generated, 4 distinct, depth 4,", "Error: Deadlock reached."},
		{"deadlock flag", []string{"-deadlock", "-config", td + "Countdown.cfg", td + "Countdown.tla"}, exitOK,
			"tla Countdown: 4 generated", ""},
		{"unsupported", []string{"-config", td + "unsupported/Default.cfg", td + "unsupported/Enabled.tla"}, exitUnsupported,
			"tla Default: error (exit 153): Enabled.tla:7:8:", ""},
		{"config error", []string{"-config", td + "unsupported/Property.cfg", td + "unsupported/Enabled.tla"}, exitUnsupported,
			"tla Property: error (exit 153): Property.cfg:3:1", ""},
		{"no base case", []string{"-config", td + "NoBaseCase.cfg", td + "NoBaseCase.tla"}, exitEval,
			"tla NoBaseCase: error (exit 75):", ""},
		{"no base case in an action", []string{"-config", td + "NoBaseCase_action.cfg", td + "NoBaseCase.tla"}, exitEval,
			"tla NoBaseCase_action: error (exit 75):", ""},
		{"missing file", []string{td + "NoSuch.tla"}, exitUsage, "tla NoSuch: error", ""},
		{"inductive ok", []string{"-inductive", "-indinv", "IndInv", "-typeok", "TypeOK", "-safety", "Safety", "-config", td + "Counter.cfg", td + "Counter.tla"}, exitOK,
			"tla-inductive Counter: 1 initial, 4 states satisfy TypeOK /\\ IndInv, 4 successors checked,", ""},
		{"inductive fails", []string{"-inductive", "-indinv", "WeakInv", "-typeok", "TypeOK", "-config", td + "Counter.cfg", td + "Counter.tla"}, exitSafety,
			"tla-inductive Counter:", "FAILED: IndInv /\\ Next => IndInv'"},
		{"usage", []string{}, exitUsage, "", ""},
		{"fingerprints with a graph", []string{"-fingerprints", "1", "-dump-graph", "x", td + "DieHard.tla"}, exitUsage, "", ""},
		{"fingerprints negative", []string{"-fingerprints", "-1", td + "DieHard.tla"}, exitUsage, "", ""},
		{"workers without fingerprints", []string{"-workers", "2", td + "DieHard.tla"}, exitUsage, "", ""},
		{"checkpoint without fingerprints", []string{"-checkpoint", "x", td + "DieHard.tla"}, exitUsage, "", ""},
		{"checkpoint and recover", []string{"-fingerprints", "1", "-checkpoint", "x", "-recover", "y", td + "DieHard.tla"}, exitUsage, "", ""},
		{"checkpoint-every zero", []string{"-fingerprints", "1", "-checkpoint", "x", "-checkpoint-every", "0s", td + "DieHard.tla"}, exitUsage, "", ""},
		{"recover from nothing", []string{"-fingerprints", "1", "-recover", "no-such-folder", "-config", td + "DieHard.cfg", td + "DieHard.tla"}, exitCheckpoint,
			"tla DieHard: error (exit 155): tlacheck: checkpoint:", ""},
		{"workers", []string{"-fingerprints", "1", "-workers", "2", "-config", td + "DieHard.cfg", td + "DieHard.tla"}, exitOK,
			"tla DieHard: 97 generated, 16 distinct, depth 8,", "(breadth-first, 2 workers, states stored as 64-bit fingerprints in 1 MiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errb.String())
			}
			lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, tc.last) {
				t.Errorf("last line %q, want prefix %q", last, tc.last)
			}
			if !strings.Contains(out.String(), tc.has) {
				t.Errorf("output lacks %q:\n%s", tc.has, out.String())
			}
		})
	}
}

// A RECURSIVE operator with no base case ends the run with exit 75 and an error on
// stderr that names the operator and the call.
func TestRecursionWithoutBaseCaseIsReported(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-config", td + "NoBaseCase.cfg", td + "NoBaseCase.tla"}, &out, &errb); code != exitEval {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitEval, out.String(), errb.String())
	}
	if want := "9:12: soundgate/tlacheck: evaluation error: RECURSIVE operator Loop nested more than"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q", errb.String(), want)
	}
}

func TestDumpGraph(t *testing.T) {
	file := filepath.Join(t.TempDir(), "g.txt")
	var out, errb bytes.Buffer
	if code := run([]string{"-config", td + "DieHard.cfg", "-dump-graph", file, td + "DieHard.tla"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"I 0\n", "S 0 [big |-> 0, small |-> 0]\n", "E 0 1 FillSmall\n", "E 0 0 EmptySmall\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("dump lacks %q", want)
		}
	}
	if n := strings.Count(text, "\nS "); n != 16 {
		t.Errorf("%d states in the dump, want 16", n)
	}
}

func TestAllModeChecksExpectations(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, dst string) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TLA2TOOLS_JAR", "")
	var out bytes.Buffer
	t.Setenv("CI", "true")
	if code := run([]string{"-all", dir}, &out, &out); code != exitUsage || !strings.Contains(out.String(), "NO CONFIGS") {
		t.Fatalf("empty folder under CI: exit %d\n%s", code, out.String())
	}
	copyFile(td+"MutexBug.tla", "MutexBug.tla")
	copyFile(td+"MutexBug.cfg", "MutexBug_quick.cfg")
	out.Reset()
	if code := run([]string{"-all", dir, "-quick"}, &out, &out); code != exitSafety || !strings.Contains(out.String(), "FAILED (violation, expected ok)") {
		t.Fatalf("unexpected violation must fail: exit %d\n%s", code, out.String())
	}
	b, _ := os.ReadFile(td + "MutexBug.cfg")
	if err := os.WriteFile(filepath.Join(dir, "MutexBug_quick.cfg"), append([]byte("\\* tlacheck-expect: violation\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	code := run([]string{"-all", dir, "-quick"}, &out, &out)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if code != exitOK || !strings.Contains(last, "MutexBug_quick 27/18/5") || !strings.Contains(last, "TLC comparison SKIPPED") || !strings.HasSuffix(last, "; ok") {
		t.Fatalf("expected violation: exit %d, last line %q\n%s", code, last, out.String())
	}
}

// TestCheckpointThenRecover: a run stopped past -max-states with -checkpoint, then
// -recover, ends with the figures of a run never stopped, said on its summary line; a
// recovery with another config is refused (exit 155).
func TestCheckpointThenRecover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	spec := []string{"-config", td + "TwoPhase_big.cfg", td + "TwoPhase.tla"}
	var out, errb bytes.Buffer
	code := run(append([]string{"-fingerprints", "1", "-checkpoint", dir, "-checkpoint-every", "1ns", "-max-states", "4000"}, spec...), &out, &errb)
	if code != exitLimit || !strings.Contains(out.String(), "checkpoints written, error:") {
		t.Fatalf("the stopped run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	code = run(append([]string{"-fingerprints", "1", "-recover", dir, "-checkpoint-every", "1ns"}, spec...), &out, &errb)
	if code != exitOK || !strings.Contains(out.String(), "tla TwoPhase_big: 58146 generated, 8832 distinct, depth 17,") ||
		!strings.Contains(out.String(), "recovered from a checkpoint at") {
		t.Fatalf("the recovered run: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	code = run([]string{"-fingerprints", "1", "-recover", dir, "-config", td + "TwoPhase_symm.cfg", td + "TwoPhase.tla"}, &out, &errb)
	if code != exitCheckpoint || !strings.Contains(out.String(), "a checkpoint of another spec, config or options") {
		t.Fatalf("a recovery with another config: exit %d\n%s", code, out.String())
	}
}
