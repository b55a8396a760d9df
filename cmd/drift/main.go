// Command drift audits model-to-code drift (docs/verify/drift.md).
//
// Usage:
//
//	drift [-root DIR] [-fix] [-base REV [-strict] [-json FILE] [-md FILE] [-github]]
//	drift -controls
//
// Whatever the change, it checks the standing rules: every //spec:action directive
// of model/ and impl/ documents one function, names an action of the spec's Next and
// carries that action's current pin (a hash of the action's parsed TLA+ and of every
// operator it reaches); every action has an implementation in model/ and in
// impl/core. -fix rewrites stale pins in place, after a reviewer has read the
// functions they name.
//
// With -base, it reads both sides of every file changed since REV (the working tree
// against REV), maps the changed Go functions to the actions they take part in
// through the call graph, finds the spec's changed operators and the actions that
// reach them, compares the spec's behaviour action by action, reruns the evidence the
// touched actions call for, and prints a table of them with a verdict each.
//
// -controls runs verify-drift's seeded changes (controls.go) on a clone of HEAD and
// exits 1 unless each gets its expected exit status.
//
// Exit status: 0 no drift, 1 drift, 2 usage or environment (a check the change calls
// for is not in the tree included: no verdict), 3 review needed (with
// -strict only: a change no action accounts for, a change of the shell, an
// implementation-only change without a "Drift-Ack: ACTION: why" line in a commit
// message or in $DRIFT_ACKS, stale pins on a refactor of the spec).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/soundgate/soundgate/internal/drift"
)

const exitUsage = 2

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

type options struct {
	root, base, jsonOut, mdOut string
	fix, strict, github, ctrl  bool
}

func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", ".", "the module's root")
	fs.BoolVar(&o.fix, "fix", false, "rewrite stale pins to the spec's, in place, then audit")
	fs.StringVar(&o.base, "base", "", "audit the change from this revision to the working tree (empty: the standing rules only)")
	fs.BoolVar(&o.strict, "strict", false, "exit 3 when a reviewer must look")
	fs.StringVar(&o.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&o.mdOut, "md", "", "write the report as Markdown to this file")
	fs.BoolVar(&o.github, "github", false, "print GitHub workflow annotations of the findings")
	fs.BoolVar(&o.ctrl, "controls", false, "run the seeded changes of verify-drift on a clone of HEAD, each against its expected exit status")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: drift [-root DIR] [-fix] [-base REV [-strict] [-json FILE] [-md FILE] [-github]]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "drift: unexpected arguments %q (the base is -base REV)\n", fs.Args())
		return exitUsage
	}
	if o.ctrl {
		return runControls(o.root, stdout, stderr)
	}
	if o.fix {
		if err := fix(o.root, stdout); err != nil {
			fmt.Fprintf(stderr, "drift: %v\n", err)
			return exitUsage
		}
	}
	rep, err := drift.Audit(drift.Options{Root: o.root, Base: o.base, Strict: o.strict, Acks: os.Getenv("DRIFT_ACKS"),
		LogDir: filepath.Join(o.root, "build", "drift"), Progress: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "drift: %v\n", err)
		return exitUsage
	}
	if err := o.write(rep, stdout); err != nil {
		fmt.Fprintf(stderr, "drift: %v\n", err)
		return exitUsage
	}
	return rep.ExitCode
}

func fix(root string, stdout io.Writer) error {
	ops, err := drift.LoadSpec(root)
	if err != nil {
		return err
	}
	ds, err := drift.ScanDirectives(root)
	if err != nil {
		return err
	}
	fixed, err := drift.Fix(root, ops, ds)
	for _, p := range fixed {
		fmt.Fprintf(stdout, "drift: %s: pin rewritten\n", p)
	}
	return err
}

// write prints the report and writes the files the flags ask for.
func (o options) write(rep *drift.Report, stdout io.Writer) error {
	if o.github {
		rep.GitHub(stdout)
	}
	rep.Text(stdout)
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if o.mdOut != "" {
		f, err := os.Create(o.mdOut)
		if err != nil {
			return err
		}
		rep.Markdown(f)
		return f.Close()
	}
	return nil
}
