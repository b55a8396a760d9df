package drift

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Evidence is one check that a touched action reruns.
type Evidence struct {
	Name  string
	Why   string   // what it establishes
	Argv  []string // run in the root
	Needs []string // paths in the root it runs: absent, it cannot run (an older tree)
	Env   []string // added to the environment
}

// The evidence drift knows. Each is a link of the verification chain on its quick
// configurations (make verify runs the deep ones).
var (
	EvGraphs = Evidence{Name: "graphs", Why: "spec == model: equal labelled graphs, and the model's figures equal TLC's",
		Argv:  []string{"go", "test", "-count=1", "-run", "^(TestTLCFigures|TestSpecEqualsModel|TestAlteredModelIsCaught)$", "./model/"},
		Needs: []string{"model"}}
	EvBroken = Evidence{Name: "broken", Why: "each broken variant of the spec still breaks its property",
		Argv: []string{"go", "run", "./cmd/tlacheck", "-all", "spec/tla/broken"}, Needs: []string{"cmd/tlacheck", "spec/tla/broken"}}
	EvWire = Evidence{Name: "wire", Why: "model == server: random conformance over the wire, in memory and durable",
		Argv: []string{"go", "test", "-count=1", "-run", "^(TestRandomWire|TestRandomDurable)$", "./conformance/"}, Needs: []string{"conformance"}}
	EvTrace = Evidence{Name: "trace", Why: "node == spec: traces of durable nodes (waits, deadlines, restarts) replayed against the spec",
		Argv:  []string{"go", "test", "-count=1", "-run", "^(TestTracesOfTheNodeValidate|TestTamperedTracesAreCaught)$", "./internal/tracecheck/"},
		Needs: []string{"internal/tracecheck"}}
)

// EvConformance compares the model and the core, exhaustively and at random, the
// random mode drawing the focused actions' operations more often.
func EvConformance(focus []string) Evidence {
	argv := []string{"go", "test", "-count=1", "-run", "^(TestExhaustive|TestRandomCore|TestConformanceCatchesBrokenCores)$", "./conformance/"}
	if len(focus) > 0 {
		argv = append(argv, "-args", "-conformance.focus="+strings.Join(focus, ","))
	}
	return Evidence{Name: "conformance", Why: "model == core: exhaustive and random conformance, weighted towards the touched actions",
		Argv: argv, Needs: []string{"conformance"}}
}

// EvMutation scores the mutants of the core's lines changed since base: make
// mutation-diff, whose packages, tests, skips and threshold ci/mk/mutation.mk holds.
func EvMutation(base string) Evidence {
	return Evidence{Name: "mutation", Why: "the core's changed lines are covered by tests that kill their mutants",
		Argv: []string{"make", "--no-print-directory", "mutation-diff"}, Env: []string{"BASE=" + base},
		Needs: []string{"ci/mk/mutation.mk", "cmd/mutate", "impl/core"}}
}

// Result is the outcome of one evidence run.
type Result struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Passed  bool          `json:"passed"`
	Took    time.Duration `json:"took_ns"`
	Last    string        `json:"last_line"`         // its output's last line
	Log     string        `json:"log"`               // where its whole output is
	Missing bool          `json:"missing,omitempty"` // the tree has no such check: it could not run
}

// Run runs e in root, its output to logDir/NAME.log, and says on progress what runs.
func (e Evidence) Run(root, logDir string, progress io.Writer) Result {
	r := Result{Name: e.Name, Command: strings.TrimSpace(strings.Join(e.Env, " ") + " " + strings.Join(e.Argv, " ")), Log: filepath.Join(logDir, e.Name+".log")}
	for _, need := range e.Needs {
		if _, err := os.Stat(filepath.Join(root, need)); err != nil {
			r.Missing, r.Last = true, fmt.Sprintf("cannot run: %s is not in this tree", need)
			fmt.Fprintf(progress, "drift: evidence %s: %s\n", e.Name, r.Last)
			return r
		}
	}
	fmt.Fprintf(progress, "drift: evidence %s: %s\n", e.Name, r.Command)
	start := time.Now()
	cmd := exec.Command(e.Argv[0], e.Argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), e.Env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r.Took = time.Since(start).Round(time.Millisecond)
	r.Passed = err == nil
	r.Last = lastLine(out.String())
	if err != nil && r.Last == "" {
		r.Last = err.Error()
	}
	if werr := os.MkdirAll(logDir, 0o755); werr == nil {
		werr = os.WriteFile(r.Log, out.Bytes(), 0o644)
		if werr != nil {
			r.Log = werr.Error()
		}
	}
	fmt.Fprintf(progress, "drift: evidence %s: %s in %v: %s\n", e.Name, map[bool]string{true: "passed", false: "FAILED"}[r.Passed], r.Took, r.Last)
	return r
}

// lastLine is the check's own last line: the runners' words after it (make's error,
// go run's exit status) say less.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i > 0; i-- {
		if !strings.HasPrefix(lines[i], "make: ") && !strings.HasPrefix(lines[i], "exit status ") {
			return lines[i]
		}
	}
	return lines[0]
}
