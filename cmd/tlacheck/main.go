// Command tlacheck model-checks a TLA+ spec with a TLC .cfg file, using the Go
// checker of package tla. It prints TLC's figures (states generated, distinct states,
// depth) and exits with TLC's codes: 0 ok, 11 deadlock, 12 safety violation.
//
// Usage:
//
//	tlacheck [-config X.cfg] [-deadlock] [-dump-graph FILE] X.tla
//	tlacheck -all spec/tla [-quick]
//	tlacheck -inductive -indinv IndInv -typeok TypeOK -safety Safety [-config X.cfg] X.tla
//
// Other exit codes: 10 ASSUME violated, 75 evaluation error, 150 parse error,
// 151 config error, 152 semantic error (names, arity), 153 unsupported construct,
// 154 state limit reached, 2 usage.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/soundgate/soundgate/tla"
)

// Exit codes, TLC's where TLC has one.
const (
	exitOK          = 0
	exitUsage       = 2
	exitAssume      = 10
	exitDeadlock    = 11
	exitSafety      = 12
	exitEval        = 75
	exitParse       = 150
	exitConfig      = 151
	exitSemantic    = 152
	exitUnsupported = 153
	exitLimit       = 154
)

// gcPercent trades memory for speed: the search allocates many short-lived values.
const gcPercent = 400

func main() {
	debug.SetGCPercent(gcPercent)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tlacheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "TLC config file (default: the .tla file with .cfg)")
	noDeadlock := fs.Bool("deadlock", false, "do not check for deadlock (as TLC's -deadlock)")
	dump := fs.String("dump-graph", "", "write the reachable state graph to this file (docs/tla-graph.md)")
	maxStates := fs.Int("max-states", 0, "stop after this many distinct states (0: no limit)")
	progress := fs.Duration("progress", 10*time.Second, "interval between progress lines")
	inductive := fs.Bool("inductive", false, "check an inductive invariant instead of exploring (needs -indinv, -typeok)")
	indInv := fs.String("indinv", "IndInv", "inductive invariant operator (with -inductive)")
	typeOK := fs.String("typeok", "TypeOK", "type invariant: a conjunction of var \\in S generators (with -inductive)")
	safety := fs.String("safety", "", "comma-separated safety operators implied by the inductive invariant (with -inductive)")
	label := fs.String("label", "", "name for the summary line (default: module and config)")
	all := fs.String("all", "", "check every DIR/*.cfg (module: the cfg name up to the first '_'), compare with TLC if TLA2TOOLS_JAR is set")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	quick := fs.Bool("quick", false, "with -all: only DIR/*_quick.cfg")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fail(stdout, stderr, "profile", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return fail(stdout, stderr, "profile", err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if *all != "" {
		return runAll(*all, *quick, *progress, stdout)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: tlacheck [flags] Spec.tla")
		fs.PrintDefaults()
		return exitUsage
	}
	tlaPath := fs.Arg(0)
	if *cfgPath == "" {
		*cfgPath = strings.TrimSuffix(tlaPath, ".tla") + ".cfg"
	}
	name := *label
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(*cfgPath), ".cfg")
	}
	fmt.Fprintf(stdout, "tlacheck: %s with %s (breadth-first, 1 worker, states stored exactly)\n", tlaPath, *cfgPath)
	start := time.Now()
	spec, err := tla.Load(tlaPath, *cfgPath)
	if err != nil {
		return fail(stdout, stderr, name, err)
	}
	switch {
	case *inductive:
		var safe []string
		if *safety != "" {
			safe = strings.Split(*safety, ",")
		}
		r, err := spec.CheckInductive(tla.InductiveOptions{IndInv: *indInv, TypeOK: *typeOK, Safety: safe, MaxStates: *maxStates})
		if err != nil {
			return fail(stdout, stderr, name, err)
		}
		fmt.Fprint(stdout, r.Report())
		status, code := "ok", exitOK
		if r.Failure != "" {
			status, code = "FAILED: "+r.Failure, exitSafety
		}
		fmt.Fprintf(stdout, "tla-inductive %s: %d initial, %d states satisfy %s /\\ %s, %d successors checked, %.1fs, %s\n",
			name, r.InitStates, r.Candidates, *typeOK, *indInv, r.Successors, time.Since(start).Seconds(), status)
		return code
	case *dump != "":
		g, err := spec.Graph(tla.GraphOptions{MaxStates: *maxStates})
		if err != nil {
			return fail(stdout, stderr, name, err)
		}
		f, err := os.Create(*dump)
		if err != nil {
			return fail(stdout, stderr, name, err)
		}
		werr := g.WriteText(f)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return fail(stdout, stderr, name, werr)
		}
		fmt.Fprintf(stdout, "tla-graph %s: %d states, %d initial, %d edges written to %s, %.1fs\n", name, len(g.States), len(g.Init), len(g.Edges), *dump, time.Since(start).Seconds())
		return exitOK
	}
	fmt.Fprintln(stdout, "Computing initial states...")
	res, err := spec.Check(tla.Options{MaxStates: *maxStates, Progress: stdout, ProgressEvery: *progress, NoDeadlock: *noDeadlock})
	if err != nil && res == nil {
		return fail(stdout, stderr, name, err)
	}
	code := exitOK
	status := "ok"
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "Error: %v\n", err)
		code, status = exitCode(err), "error: "+err.Error()
	case res.Outcome == tla.InvariantViolated:
		fmt.Fprintf(stdout, "Error: Invariant %s is violated.\n", res.Invariant)
		printTrace(stdout, res.Trace)
		code, status = exitSafety, "invariant "+res.Invariant+" violated"
	case res.Outcome == tla.Deadlock:
		fmt.Fprintln(stdout, "Error: Deadlock reached.")
		printTrace(stdout, res.Trace)
		code, status = exitDeadlock, "deadlock"
	default:
		fmt.Fprintln(stdout, "Model checking completed. No error has been found.")
	}
	secs := res.Duration.Seconds()
	fmt.Fprintf(stdout, "%d states generated, %d distinct states found, %d states left on queue.\n", res.Generated, res.Distinct, res.Queue)
	fmt.Fprintf(stdout, "The depth of the complete state graph search is %d.\n", res.Depth)
	rate := 0.0
	if secs > 0 {
		rate = float64(res.Distinct) / secs
	}
	fmt.Fprintf(stdout, "Finished in %.2fs (%.0f distinct states/s, %.0f states generated/s).\n", secs, rate, float64(res.Generated)/max(secs, 1e-9))
	fmt.Fprintf(stdout, "tla %s: %d generated, %d distinct, depth %d, %.1fs, %s\n", name, res.Generated, res.Distinct, res.Depth, secs, status)
	return code
}

func printTrace(w io.Writer, steps []tla.Step) {
	fmt.Fprintln(w, "Error: The behavior up to this point is:")
	for i, s := range steps {
		fmt.Fprintf(w, "State %d: <%s>\n%s\n", i+1, s.Action, s.Text)
	}
}

func exitCode(err error) int {
	switch {
	case errors.Is(err, tla.ErrParse):
		return exitParse
	case errors.Is(err, tla.ErrConfig):
		return exitConfig
	case errors.Is(err, tla.ErrSemantic):
		return exitSemantic
	case errors.Is(err, tla.ErrUnsupported):
		return exitUnsupported
	case errors.Is(err, tla.ErrAssume):
		return exitAssume
	case errors.Is(err, tla.ErrLimit):
		return exitLimit
	case errors.Is(err, tla.ErrEval):
		return exitEval
	}
	return exitEval
}

func fail(stdout, stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "tlacheck: %v\n", err)
	code := exitCode(err)
	if errors.Is(err, os.ErrNotExist) {
		code = exitUsage
	}
	fmt.Fprintf(stdout, "tla %s: error (exit %d): %s\n", name, code, firstLine(err.Error()))
	return code
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
