// Command tracecheck validates traces of the real gate (`soundgate serve --trace
// FILE`) against the TLA+ spec (internal/tracecheck; docs/verify/drift.md, "Trace
// validation").
//
// Usage:
//
//	tracecheck [-spec spec/tla/SoundGate.tla] TRACE...
//
// Each trace must start on an empty data directory. It prints one line of figures per
// trace and a total; exit status 0 when every trace is consumed to its end with no
// mismatch, 1 on a mismatch, 2 on a usage error or a trace that cannot be read.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/soundgate/soundgate/internal/tracecheck"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tracecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specPath := fs.String("spec", "spec/tla/SoundGate.tla", "the spec")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tracecheck [-spec FILE] TRACE...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	spec, err := os.ReadFile(*specPath)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck: %v\n", err)
		return 2
	}
	var total tracecheck.Result
	mismatches := 0
	for _, path := range fs.Args() {
		text, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck: %v\n", err)
			return 2
		}
		res, err := tracecheck.Check(string(spec), string(text))
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck: %s: %v\n", path, err)
			return 2
		}
		fmt.Fprintf(stdout, "tracecheck: %s: %s\n", path, res.Summary())
		if res.Mismatch != nil {
			mismatches++
			fmt.Fprintf(stdout, "tracecheck: %s: MISMATCH: %v\n", path, res.Mismatch)
		}
		total.Add(res)
	}
	fmt.Fprintf(stdout, "tracecheck: %d traces: %s\n", len(fs.Args()), total.Summary())
	if mismatches > 0 {
		return 1
	}
	return 0
}
