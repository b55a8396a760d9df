// Command drift audits model-to-code drift (docs/verify/drift.md).
//
// Usage:
//
//	drift [-root DIR] [-fix]
//
// It checks the standing rules, whatever a change is: every //spec:action directive
// of model/ and impl/ documents one function, names an action of the spec's Next and
// carries that action's current pin (a hash of the action's parsed TLA+ and of every
// operator it reaches); every action has an implementation in model/ and in
// impl/core. -fix rewrites stale pins in place, after a reviewer has read the
// functions they name.
//
// Exit status: 0 no drift, 1 drift (a standing rule broken), 2 usage or environment.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/soundgate/soundgate/internal/drift"
)

const (
	exitOK    = 0
	exitDrift = 1
	exitUsage = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", ".", "the module's root")
	fix := fs.Bool("fix", false, "rewrite stale pins to the spec's, in place")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: drift [-root DIR] [-fix]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "drift: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	ops, err := drift.LoadSpec(*root)
	if err != nil {
		fmt.Fprintf(stderr, "drift: %s: %v\n", drift.SpecPath, err)
		return exitUsage
	}
	ds, err := drift.ScanDirectives(*root)
	if err != nil {
		fmt.Fprintf(stderr, "drift: %v\n", err)
		return exitUsage
	}
	if *fix {
		fixed, err := drift.Fix(*root, ops, ds)
		for _, p := range fixed {
			fmt.Fprintf(stdout, "drift: %s: pin rewritten\n", p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "drift: %v\n", err)
			return exitUsage
		}
		if ds, err = drift.ScanDirectives(*root); err != nil {
			fmt.Fprintf(stderr, "drift: %v\n", err)
			return exitUsage
		}
	}
	findings := drift.Standing(ops, ds)
	for _, f := range findings {
		fmt.Fprintf(stdout, "drift: %s\n", f)
	}
	fmt.Fprintf(stdout, "drift: standing rules: %d actions, %d directives, %d findings\n", len(ops.Actions), len(ds), len(findings))
	if len(findings) > 0 {
		return exitDrift
	}
	return exitOK
}
