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

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "run in `dir` (a directory of the module)")
	tests := fs.String("test", "", "comma-separated `packages` whose tests run on each mutant (default: the mutated packages)")
	skip := fs.String("skip", "", "go test -skip `regexp` for tests that cannot observe a mutant")
	noConfirm := fs.Bool("no-confirm", false, "triage: report schema survivors without confirming them alone (not for the gate)")
	noSchema := fs.Bool("no-schemata", false, "build every mutant alone instead of one schema test binary")
	workers := fs.Int("j", 0, "mutants tested in parallel (default: number of CPUs)")
	threshold := fs.Float64("threshold", 90, "least score in `percent`; below it the exit status is 1")
	factor := fs.Float64("timeout-factor", mutation.DefaultTimeoutFactor, "timeout = max(floor, factor × baseline test binary time)")
	floor := fs.Duration("timeout-floor", mutation.DefaultTimeoutFloor, "least per-mutant timeout of the test binary")
	suppress := fs.String("suppress", "", "suppression `file` (id and reason per line)")
	diff := fs.String("diff", "", "mutate only lines changed since git `revision` BASE")
	jsonOut := fs.String("json", "", "write the JSON report to `file`")
	ops := fs.String("ops", "", "comma-separated operators to apply (default: all)")
	only := fs.String("only", "", "comma-separated mutant ids to run (default: all)")
	list := fs.Bool("list", false, "list the mutants with their ids and diffs, run nothing")
	name := fs.String("name", "", "name in the summary line (default: the packages)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mutate [flags] PACKAGES...\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\noperators: %s\n", joinOps(mutation.Operators))
	}
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mutate: no packages to mutate")
		fs.Usage()
		return exitError
	}
	if *threshold < 0 || *threshold > 100 {
		fmt.Fprintf(stderr, "mutate: -threshold %v is not a percentage\n", *threshold)
		return exitError
	}
	cfg := mutation.Config{
		Dir: *dir, Packages: fs.Args(), TestPackages: fs.Args(), Workers: *workers,
		TimeoutFactor: *factor, TimeoutFloor: *floor, DiffBase: *diff, ListOnly: *list,
		Skip: *skip, NoSchemata: *noSchema, NoConfirm: *noConfirm,
	}
	if *tests != "" {
		cfg.TestPackages = splitList(*tests)
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	for _, o := range splitList(*ops) {
		if !known(mutation.Operator(o)) {
			fmt.Fprintf(stderr, "mutate: unknown operator %q (operators: %s)\n", o, joinOps(mutation.Operators))
			return exitError
		}
		cfg.Operators = append(cfg.Operators, mutation.Operator(o))
	}
	cfg.Only = splitList(*only)
	if *suppress != "" {
		s, err := mutation.LoadSuppressions(*suppress)
		if err != nil {
			fmt.Fprintln(stderr, "mutate:", err)
			return exitError
		}
		cfg.Suppress = s
	}
	label := *name
	if label == "" {
		label = strings.Join(fs.Args(), " ")
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
	if *list {
		for _, m := range rep.Mutants {
			fmt.Fprintf(stdout, "%s %s %s\n%s", m.Position(), m.ID, m.Status, m.Diff)
		}
		fmt.Fprintf(stdout, "mutation %s: %d mutants listed\n", label, len(rep.Mutants))
		return exitOK
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "mutate: writing the report:", err)
			return exitError
		}
	}
	rep.WriteSummary(stdout, label, *threshold/100)
	if !rep.Passed(*threshold / 100) {
		return exitBelow
	}
	return exitOK
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
