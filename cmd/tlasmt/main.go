// Command tlasmt checks the inductive invariant of a TLA+ spec for any number of
// runs and keys: tlacheck/smt translates the spec into SMT-LIB obligations, each goes
// to z3 and cvc5 (both must answer unsat), the vacuity checks and the broken variants
// must be sat with a model tlacheck replays. docs/verify/smt.md describes it.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/soundgate/soundgate/tlacheck/smt"
)

func main() {
	specPath := flag.String("spec", "spec/tla/SoundGate.tla", "the TLA+ spec")
	out := flag.String("out", "build/smt", "where the .smt2 obligations are written (emptied first)")
	timeout := flag.Duration("timeout", 60*time.Second, "per solver run")
	solvers := flag.String("solvers", "z3,cvc5", "the solvers every obligation goes to")
	broken := flag.String("broken", "spec/tla/broken", "the broken variants (\"\": none)")
	workers := flag.Int("workers", runtime.NumCPU(), "parallel solver processes")
	maxSize := flag.Int("max-size", 2, "largest finite instance per sort tried by the sat checks")
	indinv := flag.String("indinv", "IndInv", "the inductive invariant")
	typeok := flag.String("typeok", "TypeOK", "the conjunction of var \\in S the variables' types are read from")
	props := flag.String("props", "TypeOK,Safety,Structure", "the properties IndInv must imply")
	proof := flag.String("proof", "spec/tlaps/SoundGateProofs.tla", "the TLAPS proof text whose steps must name their obligations (\"\": not checked)")
	finite := flag.String("finite-config", "spec/tla/SoundGate_indstep.cfg", "the bounded inductive check's config: its constants are the finite instance compared with tlacheck (\"\": none)")
	indInit := flag.String("indinit", "IndInit", "the generator of the IndInv states for the finite instance")
	flag.Parse()

	names := strings.Split(*solvers, ",")
	ss, err := smt.FindSolvers(names)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tlasmt: FAILED, no check was run: %v\n", err)
		fmt.Println("tla-smt: FAILED: " + err.Error())
		os.Exit(2)
	}
	opts := smt.DefaultOptions()
	opts.IndInv, opts.TypeOK, opts.Props = *indinv, *typeok, strings.Split(*props, ",")
	rep, err := smt.Run(smt.RunConfig{
		SpecPath: *specPath, OutDir: *out, BrokenDir: *broken, Timeout: *timeout,
		Solvers: ss, Workers: *workers, MaxSize: *maxSize, Options: opts, Log: os.Stdout,
		ProofPath: *proof, FiniteConfig: *finite, IndInit: *indInit,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "tlasmt: %v\n", err)
		fmt.Println("tla-smt: FAILED: " + err.Error())
		os.Exit(1)
	}
	if n := len(rep.Failures); n > 0 {
		fmt.Printf("tlasmt: %d failure(s), each printed above as FAILED\n", n)
	}
	fmt.Println(rep.Summary(ss))
	if !rep.OK() {
		os.Exit(1)
	}
}
