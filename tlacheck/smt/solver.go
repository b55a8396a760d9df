package smt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Solver is one SMT solver binary.
type Solver struct {
	Name    string // z3 or cvc5
	Path    string
	Version string
}

// KnownSolvers are the solvers the translation is run through.
var KnownSolvers = []string{"z3", "cvc5"}

// FindSolvers looks the named solvers up on PATH; a missing one is an error, never
// a solver quietly left out.
func FindSolvers(names []string) ([]Solver, error) {
	var out []Solver
	var missing []string
	for _, n := range names {
		if n != "z3" && n != "cvc5" {
			return nil, fmt.Errorf("unknown solver %q (z3, cvc5)", n)
		}
		p, err := exec.LookPath(n)
		if err != nil {
			missing = append(missing, n)
			continue
		}
		v, _ := exec.Command(p, "--version").Output()
		out = append(out, Solver{Name: n, Path: p, Version: strings.TrimSpace(strings.SplitN(string(v), "\n", 2)[0])})
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("solver(s) not on PATH: %s (install them with ci/smt/install.sh)", strings.Join(missing, ", "))
	}
	return out, nil
}

// args are the command line for one script. cvc5 answers unknown on satisfiable
// quantified scripts unless it searches finite models, so sat checks use
// --finite-model-find; on proofs it adds --enum-inst (enumerative instantiation after
// e-matching: without it cvc5 1.0.3 answers unknown on IndInv => P1..P4). z3 runs
// with its defaults.
func (s Solver) args(file string, expectSat bool) []string {
	if s.Name == "cvc5" {
		a := []string{"--lang=smt2"}
		if expectSat {
			a = append(a, "--finite-model-find")
		} else {
			a = append(a, "--enum-inst")
		}
		return append(a, file)
	}
	return []string{"-smt2", file}
}

// Answer is a solver's verdict on one script.
type Answer struct {
	Solver  string
	Result  string // sat, unsat, unknown, timeout, stopped (Job.Stop), error
	Detail  string // the solver's output when it is not a plain answer
	Elapsed time.Duration
}

// Run runs one script file through s, with a timeout.
func (s Solver) Run(file string, expectSat bool, timeout time.Duration) Answer {
	return s.run(context.Background(), file, expectSat, timeout)
}

// run is Run until parent ends, when the answer is "stopped".
func (s Solver) run(parent context.Context, file string, expectSat bool, timeout time.Duration) Answer {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Path, s.args(file, expectSat)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	a := Answer{Solver: s.Name, Elapsed: time.Since(start)}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		a.Result, a.Detail = "timeout", fmt.Sprintf("no answer within %s", timeout)
		return a
	}
	if parent.Err() != nil {
		a.Result, a.Detail = "stopped", "no longer needed: another solver answered"
		return a
	}
	first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0])
	switch first {
	case "sat", "unsat", "unknown":
		a.Result = first
		if rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out.String()), first)); rest != "" {
			a.Result, a.Detail = "error", "after "+first+": "+rest
		}
	default:
		a.Result, a.Detail = "error", strings.TrimSpace(out.String())
		if err != nil {
			a.Detail += " (" + err.Error() + ")"
		}
	}
	return a
}

// Job is one script for one solver.
type Job struct {
	File      string
	ExpectSat bool
	Solver    Solver
	Done      func(Answer)
	// Stop, if set, ends the job's solver early (its answer is then "stopped").
	Stop context.Context
}

// RunJobs runs the jobs on workers parallel solver processes.
func RunJobs(jobs []Job, workers int, timeout time.Duration) {
	if workers < 1 {
		workers = 1
	}
	ch := make(chan Job)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				stop := j.Stop
				if stop == nil {
					stop = context.Background()
				}
				j.Done(j.Solver.run(stop, j.File, j.ExpectSat, timeout))
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}
