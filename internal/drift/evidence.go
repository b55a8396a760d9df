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
}

// The evidence drift knows. Each is a link of the verification chain on its quick
// configurations (make verify runs the deep ones).
var (
	EvGraphs = Evidence{"graphs", "spec == model: equal labelled graphs, and the model's figures equal TLC's",
		[]string{"go", "test", "-count=1", "-run", "^(TestTLCFigures|TestSpecEqualsModel|TestAlteredModelIsCaught)$", "./model/"},
		[]string{"model"}}
	EvBroken = Evidence{"broken", "each broken variant of the spec still breaks its property",
		[]string{"go", "run", "./cmd/tlacheck", "-all", "spec/tla/broken"}, []string{"cmd/tlacheck", "spec/tla/broken"}}
	EvWire = Evidence{"wire", "model == server: random conformance over the wire, in memory and durable",
		[]string{"go", "test", "-count=1", "-run", "^(TestRandomWire|TestRandomDurable)$", "./conformance/"}, []string{"conformance"}}
	EvTrace = Evidence{"trace", "node == spec: traces of durable nodes (waits, deadlines, restarts) replayed against the spec",
		[]string{"go", "test", "-count=1", "-run", "^(TestTracesOfTheNodeValidate|TestTamperedTracesAreCaught)$", "./internal/tracecheck/"},
		[]string{"internal/tracecheck"}}
)

// EvConformance compares the model and the core, exhaustively and at random, the
// random mode drawing the focused actions' operations more often.
func EvConformance(focus []string) Evidence {
	argv := []string{"go", "test", "-count=1", "-run", "^(TestExhaustive|TestRandomCore|TestConformanceCatchesBrokenCores)$", "./conformance/"}
	if len(focus) > 0 {
		argv = append(argv, "-args", "-conformance.focus="+strings.Join(focus, ","))
	}
	return Evidence{"conformance", "model == core: exhaustive and random conformance, weighted towards the touched actions", argv, []string{"conformance"}}
}

// EvMutation scores the mutants of the core's lines changed since base.
func EvMutation(base string) Evidence {
	return Evidence{"mutation", "the core's changed lines are covered by tests that kill their mutants",
		[]string{"go", "run", "./cmd/mutate", "-name", "impl/core", "-threshold", "90", "-suppress", "mutation/suppress.txt",
			"-test", "./impl/core/,./conformance/", "-skip",
			"TestScenariosCatchBrokenCores|TestInvariantTierCatchesBrokenP3|TestConformanceCatchesBrokenCores|TestRandomWire|TestRandomDurable|TestDurableCatchesEarlyAck",
			"-diff", base, "./impl/core/"}, []string{"cmd/mutate", "impl/core", "mutation/suppress.txt"}}
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
	r := Result{Name: e.Name, Command: strings.Join(e.Argv, " "), Log: filepath.Join(logDir, e.Name+".log")}
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
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r.Took = time.Since(start).Round(time.Millisecond)
	r.Passed = err == nil
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	r.Last = lines[len(lines)-1]
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
