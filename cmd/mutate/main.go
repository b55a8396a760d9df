// Command mutate measures the mutation score of Go packages: it mutates them with
// type-checked changes, runs their tests on each mutant in isolation (go test
// -overlay, the working tree is never written) and reports what the tests kill.
//
// Usage:
//
//	mutate [flags] PACKAGES...
//
// Exit status: 0 when the score reaches -threshold, 1 below it, 2 on an error (a bad
// flag or suppression file, tests that fail without mutation), 130 when interrupted.
// See docs/mutation.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/mutation"
)

// Exit codes.
const (
	exitOK          = 0
	exitBelow       = 1
	exitError       = 2
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command-line flags.
type options struct {
	dir, tests, skip, suppress, diff, jsonOut, ops, only, name string
	noConfirm, noSchema, list, quiet                           bool
	workers                                                    int
	threshold, factor                                          float64
	floor                                                      time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, pkgs, ok := parseFlags(args, stderr)
	if !ok {
		return exitError
	}
	cfg, err := o.config(pkgs, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return exitError
	}
	label := o.name
	if label == "" {
		label = strings.Join(pkgs, " ")
	}
	began := time.Now()
	rep, err := mutation.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		if errors.Is(err, mutation.ErrInterrupted) {
			fmt.Fprintf(stderr, "mutate: interrupted after %s; the working tree was not written to\n",
				time.Since(began).Round(time.Millisecond))
			return exitInterrupted
		}
		return exitError
	}
	if o.list {
		for _, m := range rep.Mutants {
			fmt.Fprintf(stdout, "%s %s %s\n%s", m.Position(), m.ID, m.Status, m.Diff)
		}
		fmt.Fprintf(stdout, "mutation %s: %d mutants listed\n", label, len(rep.Mutants))
		return exitOK
	}
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, rep); err != nil {
			fmt.Fprintln(stderr, "mutate: writing the report:", err)
			return exitError
		}
	}
	rep.WriteSummary(stdout, label, o.threshold/100)
	if !rep.Passed(o.threshold / 100) {
		return exitBelow
	}
	return exitOK
}

// parseFlags parses args; on a usage error it prints why and reports false.
func parseFlags(args []string, stderr io.Writer) (*options, []string, bool) {
	o := &options{}
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "C", ".", "run in `dir` (a directory of the module)")
	fs.StringVar(&o.tests, "test", "", "comma-separated `packages` whose tests run on each mutant (default: the mutated packages)")
	fs.StringVar(&o.skip, "skip", "", "go test -skip `regexp` for tests that cannot observe a mutant")
	fs.BoolVar(&o.noConfirm, "no-confirm", false, "triage: report schema survivors without confirming them alone (not for the gate)")
	fs.BoolVar(&o.noSchema, "no-schemata", false, "build every mutant alone instead of one schema test binary")
	fs.IntVar(&o.workers, "j", 0, "mutants tested in parallel (default: number of CPUs)")
	fs.Float64Var(&o.threshold, "threshold", 90, "least score in `percent`; below it the exit status is 1")
	fs.Float64Var(&o.factor, "timeout-factor", mutation.DefaultTimeoutFactor, "timeout = max(floor, factor × baseline test binary time)")
	fs.DurationVar(&o.floor, "timeout-floor", mutation.DefaultTimeoutFloor, "least per-mutant timeout of the test binary")
	fs.StringVar(&o.suppress, "suppress", "", "suppression `file` (id and reason per line)")
	fs.StringVar(&o.diff, "diff", "", "mutate only lines changed since git `revision` BASE")
	fs.StringVar(&o.jsonOut, "json", "", "write the JSON report to `file`")
	fs.StringVar(&o.ops, "ops", "", "comma-separated operators to apply (default: all)")
	fs.StringVar(&o.only, "only", "", "comma-separated mutant ids to run (default: all)")
	fs.BoolVar(&o.list, "list", false, "list the mutants with their ids and diffs, run nothing")
	fs.StringVar(&o.name, "name", "", "name in the summary line (default: the packages)")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mutate [flags] PACKAGES...\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\noperators: %s\n", joinOps(mutation.Operators))
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, false
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mutate: no packages to mutate")
		fs.Usage()
		return nil, nil, false
	}
	if o.threshold < 0 || o.threshold > 100 {
		fmt.Fprintf(stderr, "mutate: -threshold %v is not a percentage\n", o.threshold)
		return nil, nil, false
	}
	return o, fs.Args(), true
}

// config turns the options into the run's configuration, with the operators checked
// and the suppression file read; progress goes to stderr unless -q.
func (o *options) config(pkgs []string, stderr io.Writer) (mutation.Config, error) {
	cfg := mutation.Config{
		Dir: o.dir, Packages: pkgs, TestPackages: pkgs, Workers: o.workers,
		TimeoutFactor: o.factor, TimeoutFloor: o.floor, DiffBase: o.diff, ListOnly: o.list,
		Skip: o.skip, NoSchemata: o.noSchema, NoConfirm: o.noConfirm,
	}
	if o.tests != "" {
		cfg.TestPackages = splitList(o.tests)
	}
	if !o.quiet {
		cfg.Progress = stderr
	}
	for _, op := range splitList(o.ops) {
		if !known(mutation.Operator(op)) {
			return cfg, fmt.Errorf("unknown operator %q (operators: %s)", op, joinOps(mutation.Operators))
		}
		cfg.Operators = append(cfg.Operators, mutation.Operator(op))
	}
	cfg.Only = splitList(o.only)
	if o.suppress != "" {
		s, err := mutation.LoadSuppressions(o.suppress)
		if err != nil {
			return cfg, err
		}
		cfg.Suppress = s
	}
	return cfg, nil
}

// writeJSON writes the machine-readable report to path.
func writeJSON(path string, rep *mutation.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

func known(o mutation.Operator) bool {
	for _, k := range mutation.Operators {
		if k == o {
			return true
		}
	}
	return false
}

func joinOps(ops []mutation.Operator) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
