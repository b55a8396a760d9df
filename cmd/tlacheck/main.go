// Command tlacheck model-checks a TLA+ spec with a TLC .cfg file, using the Go
// checker of package tlacheck. It prints TLC's figures (states generated, distinct
// states, depth) and exits with TLC's codes: 0 ok, 11 deadlock, 12 safety violation.
//
// Usage:
//
//	tlacheck [-config X.cfg] [-deadlock] [-dump-graph FILE] X.tla
//	tlacheck -all spec/tla [-quick]
//	tlacheck -inductive -indinv IndInv -typeok TypeOK -safety Safety [-config X.cfg] X.tla
//
// Other exit codes: 10 ASSUME violated, 75 evaluation error (among them a RECURSIVE
// operator nested deeper than tlacheck.MaxRecursionDepth), 150 parse error,
// 151 config error, 152 semantic error (names, arity), 153 unsupported construct,
// 154 state limit reached, 155 a checkpoint that cannot be written or recovered, 2 usage.
package main

import (
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/soundgate/soundgate/tlacheck"
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
	exitCheckpoint  = 155
)

// gcPercent trades memory for speed: the search allocates many short-lived values.
// fingerprintGCPercent is the fingerprint mode's, whose point is memory.
const (
	gcPercent            = 400
	fingerprintGCPercent = 50
)

func main() {
	debug.SetGCPercent(gcPercent)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are tlacheck's command-line flags.
type options struct {
	cfgPath, dump, indInv, typeOK, safety, label, all, cpuProfile string
	noDeadlock, inductive, quick                                  bool
	maxStates, workers                                            int
	fingerprintMiB, queueMiB                                      int64
	queueDir, checkpoint, recoverDir, tlaPath                     string
	progress, checkpointEvery                                     time.Duration
}

// newFlagSet declares tlacheck's flags, to be filled into o by Parse.
func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("tlacheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.cfgPath, "config", "", "TLC config file (default: the .tla file with .cfg)")
	fs.BoolVar(&o.noDeadlock, "deadlock", false, "do not check for deadlock (as TLC's -deadlock)")
	fs.StringVar(&o.dump, "dump-graph", "", "write the reachable state graph to this file (docs/tla-graph.md)")
	fs.IntVar(&o.maxStates, "max-states", 0, "stop after this many distinct states (0: no limit)")
	fs.DurationVar(&o.progress, "progress", 10*time.Second, "interval between progress lines")
	fs.BoolVar(&o.inductive, "inductive", false, "check an inductive invariant instead of exploring (needs -indinv, -typeok)")
	fs.StringVar(&o.indInv, "indinv", "IndInv", "inductive invariant operator (with -inductive)")
	fs.StringVar(&o.typeOK, "typeok", "TypeOK", "type invariant: a conjunction of var \\in S generators (with -inductive)")
	fs.StringVar(&o.safety, "safety", "", "comma-separated safety operators implied by the inductive invariant (with -inductive)")
	fs.StringVar(&o.label, "label", "", "name for the summary line (default: module and config)")
	fs.StringVar(&o.all, "all", "", "check every DIR/*.cfg (module: the cfg name up to the first '_'), compare with TLC if TLA2TOOLS_JAR is set")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fs.BoolVar(&o.quick, "quick", false, "with -all: only DIR/*_quick.cfg")
	fs.IntVar(&o.workers, "workers", 1, "with -fingerprints: expand with this many workers, level by level (the figures of a complete run do not depend on it)")
	fs.Int64Var(&o.queueMiB, "queue-mem", tlacheck.DefaultQueueBytes>>20, "with -fingerprints: MiB of compressed states the queue keeps in memory; beyond, they go to a file in -queue-dir")
	fs.StringVar(&o.queueDir, "queue-dir", "", "with -fingerprints: the folder of the queue's file (default: the system's temporary folder)")
	fs.StringVar(&o.checkpoint, "checkpoint", "", "with -fingerprints: save the search to this empty folder at the end of a level, at most every -checkpoint-every, to go on with -recover after the process dies")
	fs.DurationVar(&o.checkpointEvery, "checkpoint-every", tlacheck.DefaultCheckpointEvery, "with -checkpoint: the least time between two checkpoints")
	fs.StringVar(&o.recoverDir, "recover", "", "with -fingerprints of the same size: go on from the checkpoint in this folder (same spec, config and -deadlock); later checkpoints go to it")
	fs.Int64Var(&o.fingerprintMiB, "fingerprints", 0, "keep seen states as 64-bit fingerprints in a set of this many MiB (the run stops if it fills), not whole; each summary line says the mode (0: exact)")
	return fs
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if o.fingerprintMiB < 0 || o.queueMiB < 1 || o.workers < 1 || o.workers > 1 && o.fingerprintMiB == 0 ||
		o.fingerprintMiB > 0 && (o.inductive || o.dump != "") {
		fmt.Fprintln(stderr, "tlacheck: -fingerprints is a size in MiB, and for the model check only (not -inductive, not -dump-graph, which keep every state); -queue-mem is at least 1 MiB; -workers above 1 needs -fingerprints")
		return exitUsage
	}
	if (o.checkpoint != "" || o.recoverDir != "") && (o.fingerprintMiB == 0 || o.all != "") || o.checkpoint != "" && o.recoverDir != "" || o.checkpointEvery <= 0 {
		fmt.Fprintln(stderr, "tlacheck: -checkpoint and -recover need -fingerprints and one spec (not -all), one of them at a time (a recovered run checkpoints into its folder); -checkpoint-every is positive")
		return exitUsage
	}
	if o.fingerprintMiB > 0 {
		// the fingerprint mode's live heap is mostly the table and the queue's bytes, which
		// hold no pointers: a lower target keeps the heap near them at little cost
		debug.SetGCPercent(fingerprintGCPercent)
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return fail(stdout, stderr, "profile", err)
		}
		defer stop()
	}
	if o.all != "" {
		return runAll(o.all, o.quick, o.progress, o.fingerprintMiB<<20, stdout)
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: tlacheck [flags] Spec.tla")
		fs.PrintDefaults()
		return exitUsage
	}
	tlaPath := fs.Arg(0)
	o.tlaPath = tlaPath
	if o.cfgPath == "" {
		o.cfgPath = strings.TrimSuffix(tlaPath, ".tla") + ".cfg"
	}
	name := o.label
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(o.cfgPath), ".cfg")
	}
	stored := "states stored exactly"
	if o.fingerprintMiB > 0 {
		stored = fmt.Sprintf("states stored as 64-bit fingerprints in %d MiB", o.fingerprintMiB)
	}
	fmt.Fprintf(stdout, "tlacheck: %s with %s (breadth-first, %d worker%s, %s)\n", tlaPath, o.cfgPath, o.workers, plural(o.workers), stored)
	start := time.Now()
	spec, err := tlacheck.Load(tlaPath, o.cfgPath)
	if err != nil {
		return fail(stdout, stderr, name, err)
	}
	switch {
	case o.inductive:
		return runInductive(spec, &o, name, start, stdout, stderr)
	case o.dump != "":
		return runGraph(spec, &o, name, start, stdout, stderr)
	}
	return runCheck(spec, &o, name, stdout, stderr)
}

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// runInductive checks the inductive invariant named by -indinv.
func runInductive(spec *tlacheck.Spec, o *options, name string, start time.Time, stdout, stderr io.Writer) int {
	var safe []string
	if o.safety != "" {
		safe = strings.Split(o.safety, ",")
	}
	r, err := spec.CheckInductive(tlacheck.InductiveOptions{IndInv: o.indInv, TypeOK: o.typeOK, Safety: safe, MaxStates: o.maxStates})
	if err != nil {
		return fail(stdout, stderr, name, err)
	}
	fmt.Fprint(stdout, r.Report())
	status, code := "ok", exitOK
	if r.Failure != "" {
		status, code = "FAILED: "+r.Failure, exitSafety
	}
	fmt.Fprintf(stdout, "tla-inductive %s: %d initial, %d states satisfy %s /\\ %s, %d successors checked, %.1fs, %s\n",
		name, r.InitStates, r.Candidates, o.typeOK, o.indInv, r.Successors, time.Since(start).Seconds(), status)
	return code
}

// runGraph writes the reachable state graph to the -dump-graph file.
func runGraph(spec *tlacheck.Spec, o *options, name string, start time.Time, stdout, stderr io.Writer) int {
	g, err := spec.Graph(tlacheck.GraphOptions{MaxStates: o.maxStates})
	if err != nil {
		return fail(stdout, stderr, name, err)
	}
	f, err := os.Create(o.dump)
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
	fmt.Fprintf(stdout, "tla-graph %s: %d states, %d initial, %d edges written to %s, %.1fs\n", name, len(g.States), len(g.Init), len(g.Edges), o.dump, time.Since(start).Seconds())
	return exitOK
}

// runCheck model-checks the spec and prints TLC's verdict and figures.
func runCheck(spec *tlacheck.Spec, o *options, name string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stdout, "Computing initial states...")
	opts := tlacheck.Options{MaxStates: o.maxStates, Progress: stdout, ProgressEvery: o.progress, NoDeadlock: o.noDeadlock,
		FingerprintBytes: o.fingerprintMiB << 20, QueueBytes: o.queueMiB << 20, QueueDir: o.queueDir, Workers: o.workers,
		Checkpoint: o.checkpoint, CheckpointEvery: o.checkpointEvery, Recover: o.recoverDir}
	if o.checkpoint != "" || o.recoverDir != "" {
		key, err := checkpointKey(o)
		if err != nil {
			return fail(stdout, stderr, name, err)
		}
		opts.CheckpointKey = key
	}
	res, err := spec.Check(opts)
	if err != nil && res == nil {
		return fail(stdout, stderr, name, err)
	}
	code := exitOK
	status := "ok"
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "Error: %v\n", err)
		code, status = exitCode(err), "error: "+err.Error()
	case res.Outcome == tlacheck.InvariantViolated:
		printFailure(stdout, res)
		code, status = exitSafety, "invariant "+res.Invariant+" violated"
	case res.Outcome == tlacheck.Deadlock:
		printFailure(stdout, res)
		code, status = exitDeadlock, "deadlock"
	default:
		fmt.Fprintln(stdout, "Model checking completed. No error has been found.")
	}
	printFigures(stdout, name, res, status)
	return code
}

// printFigures prints TLC's closing figures and tlacheck's summary line.
func printFigures(stdout io.Writer, name string, res *tlacheck.Result, status string) {
	secs := res.Duration.Seconds()
	fmt.Fprintf(stdout, "%d states generated, %d distinct states found, %d states left on queue.\n", res.Generated, res.Distinct, res.Queue)
	fmt.Fprintf(stdout, "The depth of the complete state graph search is %d.\n", res.Depth)
	rate := 0.0
	if secs > 0 {
		rate = float64(res.Distinct) / secs
	}
	fmt.Fprintf(stdout, "Finished in %.2fs (%.0f distinct states/s, %.0f states generated/s).\n", secs, rate, float64(res.Generated)/max(secs, 1e-9))
	fmt.Fprintf(stdout, "tla %s: %d generated, %d distinct, depth %d, %.1fs, %s%s, %s\n", name, res.Generated, res.Distinct, res.Depth, secs, modeOf(res), checkpointsOf(res), status)
}

// checkpointsOf says, for the summary line, what a run recovered and wrote.
func checkpointsOf(res *tlacheck.Result) string {
	s := ""
	if res.Recovered > 0 {
		s += fmt.Sprintf(", recovered from a checkpoint at %d distinct (the time includes the run before it)", res.Recovered)
	}
	if res.Checkpoints > 0 {
		s += fmt.Sprintf(", %d checkpoint%s written", res.Checkpoints, plural(res.Checkpoints))
	}
	return s
}

// checkpointKey names what a checkpointed run is of: the contents of the spec's and the
// config's files and the flags that change the search (a recovered run must be the
// same run). Other modules the spec extends are not in it.
func checkpointKey(o *options) (string, error) {
	h := sha256.New()
	for _, p := range []string{o.tlaPath, o.cfgPath} {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	fmt.Fprintf(h, "deadlock=%t", o.noDeadlock)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// modeOf names how the run kept the states it saw: exact, or fingerprints with the
// set's size and TLC's estimate of the chance of a collision (plus the raw cache's,
// when it ran: then also its size and the successors it spared keying).
func modeOf(res *tlacheck.Result) string {
	if !res.Fingerprints {
		return "exact"
	}
	cache := ""
	if res.RawCacheBytes > 0 {
		cache = fmt.Sprintf(", a raw cache of %d MiB knew %.0f%% of the successors", res.RawCacheBytes>>20, 100*float64(res.RawCacheHits)/float64(max(res.Generated, 1)))
	}
	return fmt.Sprintf("fingerprints (%d slots, collision chance %.1e, %d bytes of the queue spilled%s)", res.FingerprintSlots, res.Collision, res.QueueSpilled, cache)
}

// printFailure prints TLC's error line and the trace of a run that found a
// violation or a deadlock; nothing when the run ended OK.
func printFailure(w io.Writer, res *tlacheck.Result) {
	switch res.Outcome {
	case tlacheck.InvariantViolated:
		fmt.Fprintf(w, "Error: Invariant %s is violated.\n", res.Invariant)
	case tlacheck.Deadlock:
		fmt.Fprintln(w, "Error: Deadlock reached.")
	default:
		return
	}
	printTrace(w, res.Trace)
}

func printTrace(w io.Writer, steps []tlacheck.Step) {
	fmt.Fprintln(w, "Error: The behavior up to this point is:")
	for i, s := range steps {
		fmt.Fprintf(w, "State %d: <%s>\n%s\n", i+1, s.Action, s.Text)
	}
}

// exitCodes maps the error kinds of package tlacheck to exit codes, first match wins.
var exitCodes = []struct {
	kind error
	code int
}{
	{tlacheck.ErrParse, exitParse},
	{tlacheck.ErrConfig, exitConfig},
	{tlacheck.ErrSemantic, exitSemantic},
	{tlacheck.ErrUnsupported, exitUnsupported},
	{tlacheck.ErrAssume, exitAssume},
	{tlacheck.ErrLimit, exitLimit},
	{tlacheck.ErrCheckpoint, exitCheckpoint},
	{tlacheck.ErrEval, exitEval},
}

func exitCode(err error) int {
	for _, k := range exitCodes {
		if errors.Is(err, k.kind) {
			return k.code
		}
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
