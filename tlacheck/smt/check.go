package smt

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// RunConfig is one run of the whole check: proofs, vacuity, broken variants.
type RunConfig struct {
	SpecPath  string
	OutDir    string
	BrokenDir string // "" for none
	Timeout   time.Duration
	Solvers   []Solver // must hold z3 (the models are read from z3) and the others
	Workers   int
	MaxSize   int // largest finite instance per sort for the sat checks
	Options   Options
	Log       io.Writer
	// ProofPath is the TLAPS proof text whose steps must name the obligations that
	// discharge them (CheckProof); "" for none.
	ProofPath string
	// FiniteConfig is the config of the bounded inductive check whose constants are
	// the finite instance the obligations are decided on and compared with
	// tlacheck (finite.go); "" for none. IndInit is its generator of IndInv states.
	FiniteConfig string
	IndInit      string
}

// Report is the run's figures.
type Report struct {
	Obligations   int
	Proved        map[string]int // per solver
	Failed        int
	Broken        int
	BrokenCaught  int
	Vacuity       int
	VacuityOK     int
	Elapsed       time.Duration
	Failures      []string
	SolverVersion map[string]string
	// The proof text (nil when not checked).
	Proof *ProofMap
	// The finite instance (FiniteName "" when not run).
	FiniteName                     string
	FiniteObligations, FiniteAgree int
	FiniteSpecs, FiniteSpecsAgree  int
}

// Summary is the run's last line.
func (r *Report) Summary(solvers []Solver) string {
	var proved []string
	for _, s := range solvers {
		proved = append(proved, fmt.Sprintf("proved by %s %d", s.Name, r.Proved[s.Name]))
	}
	vac := "ok"
	if r.VacuityOK != r.Vacuity {
		vac = fmt.Sprintf("FAILED (%d/%d)", r.VacuityOK, r.Vacuity)
	}
	extra := ""
	if m := r.Proof; m != nil {
		extra += fmt.Sprintf(", proof steps %d/%d tied to obligations (obligations without a step %d)", m.Tied(), len(m.Steps), len(m.Unmapped))
	}
	if r.FiniteName != "" {
		extra += fmt.Sprintf(", finite instance %s: %d/%d verdicts agree with the bounded inductive check (spec and %d/%d broken variants)",
			r.FiniteName, r.FiniteAgree, r.FiniteObligations, max(r.FiniteSpecsAgree-1, 0), r.FiniteSpecs-1)
	}
	return fmt.Sprintf("tla-smt: obligations %d, %s, failed %d, broken variants caught %d/%d with a replayed counterexample, vacuity checks %s (%d/%d sat and replayed)%s, time %.1f s",
		r.Obligations, strings.Join(proved, ", "), r.Failed, r.BrokenCaught, r.Broken, vac, r.VacuityOK, r.Vacuity, extra, r.Elapsed.Seconds())
}

// OK reports whether nothing failed.
func (r *Report) OK() bool {
	return r.Failed == 0 && r.BrokenCaught == r.Broken && r.VacuityOK == r.Vacuity && len(r.Failures) == 0 &&
		(r.Proof == nil || r.Proof.OK()) && r.FiniteAgree == r.FiniteObligations && r.FiniteSpecsAgree == r.FiniteSpecs
}

func (c *RunConfig) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

func (c *RunConfig) solver(name string) (Solver, bool) {
	for _, s := range c.Solvers {
		if s.Name == name {
			return s, true
		}
	}
	return Solver{}, false
}

// Run does the whole check and reports it; an error is a check that could not run.
func Run(c RunConfig) (*Report, error) {
	start := time.Now()
	r := &Report{Proved: map[string]int{}, SolverVersion: map[string]string{}}
	if _, ok := c.solver("z3"); !ok {
		return nil, fmt.Errorf("z3 is needed: the counterexamples are read from its models")
	}
	if c.MaxSize < 1 {
		c.MaxSize = 2
	}
	for _, s := range c.Solvers {
		r.SolverVersion[s.Name] = s.Version
		c.logf("solver %s: %s (%s)", s.Name, s.Version, s.Path)
	}
	src, err := os.ReadFile(c.SpecPath)
	if err != nil {
		return nil, err
	}
	spec, err := Translate(c.SpecPath, string(src), c.Options)
	if err != nil {
		return nil, err
	}
	obs, err := spec.Obligations()
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(c.OutDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.OutDir, 0o755); err != nil {
		return nil, err
	}
	c.logf("translated %s: sorts %s, integer constants %s, %d variables, %d actions (%s), IndInv conjuncts %s, properties %s",
		c.SpecPath, strings.Join(spec.Sorts, ", "), strings.Join(spec.IntConsts, ", "), len(spec.Vars), len(spec.Actions),
		actionNames(spec), conjNames(spec.Conjuncts), conjNames(spec.Props))
	if c.ProofPath != "" {
		text, err := os.ReadFile(c.ProofPath)
		if err != nil {
			return nil, err
		}
		r.Proof = CheckProof(c.ProofPath, string(text), spec, obs)
		for _, p := range r.Proof.Problems {
			c.logf("FAILED proof text: %s", p)
		}
		c.logf("%s", r.Proof.Figure())
	}
	if err := c.proofs(r, obs); err != nil {
		return nil, err
	}
	if c.FiniteConfig != "" {
		c.finite(r, string(src))
	}
	c.vacuity(r, string(src), obs)
	if c.BrokenDir != "" {
		c.broken(r)
	}
	r.Elapsed = time.Since(start)
	return r, nil
}

func actionNames(s *Spec) string {
	var ns []string
	for _, a := range s.Actions {
		ns = append(ns, a.Name)
	}
	return strings.Join(ns, ", ")
}

func conjNames(cs []Conjunct) string {
	var ns []string
	for _, c := range cs {
		ns = append(ns, c.Name)
	}
	return strings.Join(ns, ", ")
}

// proofs writes every unsat obligation to OutDir and runs each through every solver.
func (c *RunConfig) proofs(r *Report, obs []*Obligation) error {
	type cell struct {
		ob  *Obligation
		ans map[string]Answer
	}
	var cells []*cell
	var jobs []Job
	var mu sync.Mutex
	for _, o := range obs {
		if o.Expect != "unsat" {
			continue
		}
		file := filepath.Join(c.OutDir, o.Name+".smt2")
		if err := os.WriteFile(file, []byte(o.Text), 0o644); err != nil {
			return err
		}
		ce := &cell{ob: o, ans: map[string]Answer{}}
		cells = append(cells, ce)
		for _, s := range c.Solvers {
			jobs = append(jobs, Job{File: file, Solver: s, Done: func(a Answer) {
				mu.Lock()
				ce.ans[a.Solver] = a
				mu.Unlock()
			}})
		}
	}
	c.logf("proofs: %d obligations written to %s, %d solver runs on %d workers, timeout %s each", len(cells), c.OutDir, len(jobs), c.Workers, c.Timeout)
	RunJobs(jobs, c.Workers, c.Timeout)
	r.Obligations = len(cells)
	groups := []string{"init", "step", "safety"}
	for _, g := range groups {
		n, failed := 0, 0
		slowest, slowName := time.Duration(0), ""
		proved := map[string]int{}
		for _, ce := range cells {
			if ce.ob.Group != g {
				continue
			}
			n++
			bad := false
			for _, s := range c.Solvers {
				a := ce.ans[s.Name]
				if a.Elapsed > slowest {
					slowest, slowName = a.Elapsed, s.Name+" on "+ce.ob.Name
				}
				if a.Result == "unsat" {
					proved[s.Name]++
					r.Proved[s.Name]++
					continue
				}
				bad = true
				msg := fmt.Sprintf("FAILED %s (%s): %s answered %s %s", ce.ob.Name, ce.ob.Claim, s.Name, a.Result, firstLine(a.Detail))
				c.logf("%s", msg)
				r.Failures = append(r.Failures, msg)
			}
			if bad {
				failed++
				r.Failed++
			}
		}
		var ps []string
		for _, s := range c.Solvers {
			ps = append(ps, fmt.Sprintf("%s unsat %d", s.Name, proved[s.Name]))
		}
		c.logf("proofs %s: %d obligations, %s, failed %d; slowest %.2f s (%s)", g, n, strings.Join(ps, ", "), failed, slowest.Seconds(), slowName)
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if len(s) > 300 {
		s = s[:300] + " ..."
	}
	return s
}

// sizes lists the finite instances to try, smallest first: every sort 1..max.
func sizes(sorts []string, max int) []map[string]int {
	var out []map[string]int
	var rec func(i int, cur map[string]int)
	rec = func(i int, cur map[string]int) {
		if i == len(sorts) {
			m := map[string]int{}
			for k, v := range cur {
				m[k] = v
			}
			out = append(out, m)
			return
		}
		for n := 1; n <= max; n++ {
			cur[sorts[i]] = n
			rec(i+1, cur)
		}
	}
	rec(0, map[string]int{})
	total := func(m map[string]int) int {
		t := 0
		for _, v := range m {
			t += v
		}
		return t
	}
	sort.SliceStable(out, func(a, b int) bool { return total(out[a]) < total(out[b]) })
	return out
}

func sizeName(sorts []string, m map[string]int) string {
	var parts []string
	for _, s := range sorts {
		parts = append(parts, fmt.Sprintf("%s=%d", s, m[s]))
	}
	return strings.Join(parts, ",")
}

// satResult is the outcome of one sat check.
type satResult struct {
	ok      bool
	size    string
	answers string
	witness string
	err     string
}

// satCheck decides a sat check on finite instances, smallest first (a model of a
// finite instance is a model of the unbounded script, the sort being any set): at
// each size z3 (constant arrays as (as const)) and cvc5 (--finite-model-find,
// constant arrays pinned) run in parallel; both must answer sat at the same size,
// and tlacheck must confirm z3's model. Unsat from both moves on to the next size.
func (c *RunConfig) satCheck(label, file, src string, opts Options, build func(*Spec) (*Obligation, error), dir string) satResult {
	base, err := Translate(file, src, opts)
	if err != nil {
		return satResult{err: err.Error()}
	}
	var tried []string
	for _, sz := range sizes(base.Sorts, c.MaxSize) {
		name := sizeName(base.Sorts, sz)
		obFor := map[string]*Obligation{}
		paths := map[string]string{}
		for _, s := range c.Solvers {
			o2 := opts
			o2.Finite = sz
			o2.PinConsts = s.Name == "cvc5"
			sp, err := Translate(file, src, o2)
			if err != nil {
				return satResult{err: err.Error()}
			}
			ob, err := build(sp)
			if err != nil {
				return satResult{err: err.Error()}
			}
			// no '=' in the name: z3 reads an argument with '=' as a parameter
			p := filepath.Join(dir, fmt.Sprintf("%s.%s.%s.smt2", ob.Name, strings.NewReplacer(",", "_", "=", "").Replace(name), s.Name))
			if err := os.WriteFile(p, []byte(ob.Text), 0o644); err != nil {
				return satResult{err: err.Error()}
			}
			obFor[s.Name], paths[s.Name] = ob, p
		}
		ans := map[string]Answer{}
		var mu sync.Mutex
		var jobs []Job
		// cvc5's sat ends z3's wait: z3 then only has to confirm cvc5's model (below),
		// which it does in a moment, instead of running out its timeout first.
		z3Stop, stopZ3 := context.WithCancel(context.Background())
		for _, s := range c.Solvers {
			j := Job{File: paths[s.Name], ExpectSat: true, Solver: s, Done: func(a Answer) {
				mu.Lock()
				ans[a.Solver] = a
				mu.Unlock()
				if a.Solver == "cvc5" && a.Result == "sat" {
					stopZ3()
				}
			}}
			if s.Name == "z3" {
				j.Stop = z3Stop
			}
			jobs = append(jobs, j)
		}
		RunJobs(jobs, c.Workers, c.Timeout)
		stopZ3()
		var parts []string
		nsat, nunsat := 0, 0
		for _, s := range c.Solvers {
			a := ans[s.Name]
			parts = append(parts, fmt.Sprintf("%s %s %.2f s", s.Name, a.Result, a.Elapsed.Seconds()))
			switch a.Result {
			case "sat":
				nsat++
			case "unsat":
				nunsat++
			}
		}
		tried = append(tried, name+": "+strings.Join(parts, ", "))
		z3, _ := c.solver("z3")
		cv, haveCVC5 := c.solver("cvc5")
		witnessFrom := ""
		switch {
		case nsat == len(c.Solvers):
			witnessFrom = "z3"
		case haveCVC5 && ans["cvc5"].Result == "sat" && nunsat == 0 && (ans["z3"].Result == "timeout" || ans["z3"].Result == "unknown" || ans["z3"].Result == "stopped"):
			// z3 found no model in time: cvc5's model, which z3 must then confirm.
			witnessFrom = "cvc5"
		}
		if witnessFrom != "" {
			from := z3
			if witnessFrom == "cvc5" {
				from = cv
			}
			ob := obFor[witnessFrom]
			w, vals, err := ob.Witness(from, strings.TrimSuffix(paths[witnessFrom], ".smt2")+".model.smt2", c.Timeout)
			if err != nil {
				return satResult{size: name, answers: strings.Join(tried, "; "), err: err.Error()}
			}
			how := "z3's model"
			if witnessFrom == "cvc5" {
				if err := obFor["z3"].Confirm(z3, strings.TrimSuffix(paths["z3"], ".smt2")+".confirm.smt2", vals, c.Timeout); err != nil {
					return satResult{size: name, answers: strings.Join(tried, "; "), err: err.Error()}
				}
				how = "cvc5's model, which z3 confirmed sat (every leaf pinned)"
				tried[len(tried)-1] += ", z3 sat on cvc5's model"
			}
			if err := ob.Replay(src, w); err != nil {
				return satResult{size: name, answers: strings.Join(tried, "; "), err: "replay: " + err.Error()}
			}
			return satResult{ok: true, size: name, answers: strings.Join(tried, "; ") + "; witness: " + how, witness: ob.Describe(w)}
		}
		if nunsat != len(c.Solvers) {
			if nsat > 0 && nunsat > 0 {
				return satResult{size: name, answers: strings.Join(tried, "; "), err: "the solvers disagree"}
			}
			// unknown, a timeout or an error at this size: try a bigger instance, and
			// fail at the end if none is sat for every solver.
		}
	}
	return satResult{answers: strings.Join(tried, "; "), err: fmt.Sprintf("no finite instance up to %d per sort is sat for every solver", c.MaxSize)}
}

// vacuity checks that Init /\ IndInv and each action with IndInv are satisfiable.
func (c *RunConfig) vacuity(r *Report, src string, obs []*Obligation) {
	dir := filepath.Join(c.OutDir, "vacuity")
	_ = os.MkdirAll(dir, 0o755)
	for _, o := range obs {
		if o.Group != "vacuity" {
			continue
		}
		r.Vacuity++
		name := o.Name
		res := c.satCheck(name, c.SpecPath, src, c.Options, func(s *Spec) (*Obligation, error) {
			all, err := s.Obligations()
			if err != nil {
				return nil, err
			}
			for _, x := range all {
				if x.Name == name {
					return x, nil
				}
			}
			return nil, fmt.Errorf("no obligation %s", name)
		}, dir)
		if res.ok {
			r.VacuityOK++
			c.logf("vacuity %s (%s): sat at %s and replayed by tlacheck [%s]", name, o.Claim, res.size, res.answers)
		} else {
			msg := fmt.Sprintf("FAILED vacuity %s (%s): %s [%s]", name, o.Claim, res.err, res.answers)
			c.logf("%s", msg)
			r.Failures = append(r.Failures, msg)
		}
	}
}

// broken checks every variant of the spec in BrokenDir against the table BrokenCases.
func (c *RunConfig) broken(r *Report) {
	files, err := Variants(c.BrokenDir, c.SpecPath)
	if err != nil {
		msg := fmt.Sprintf("FAILED broken variants: %v", err)
		c.logf("%s", msg)
		r.Failures = append(r.Failures, msg)
		return
	}
	if len(files) == 0 {
		msg := fmt.Sprintf("FAILED broken variants: no broken copy of %s in %s", filepath.Base(c.SpecPath), c.BrokenDir)
		c.logf("%s", msg)
		r.Failures = append(r.Failures, msg)
		return
	}
	for _, f := range files {
		r.Broken++
		variant := strings.TrimSuffix(filepath.Base(f), ".tla")
		var bc *BrokenCase
		for i := range BrokenCases {
			if BrokenCases[i].Variant == variant {
				bc = &BrokenCases[i]
			}
		}
		if bc == nil {
			msg := fmt.Sprintf("FAILED broken %s: not in the table tlacheck/smt.BrokenCases (which obligation must it make sat?)", variant)
			c.logf("%s", msg)
			r.Failures = append(r.Failures, msg)
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			r.Failures = append(r.Failures, err.Error())
			continue
		}
		dir := filepath.Join(c.OutDir, "broken", variant)
		_ = os.MkdirAll(dir, 0o755)
		// The unbounded script too, for the record (decided on finite instances).
		if sp, err := Translate(f, string(src), c.Options); err == nil {
			if ob, err := sp.StepObligation(bc.Action, bc.Conclusion, "sat"); err == nil {
				_ = os.WriteFile(filepath.Join(dir, ob.Name+".smt2"), []byte(ob.Text), 0o644)
			}
		}
		res := c.satCheck(variant, f, string(src), c.Options, func(s *Spec) (*Obligation, error) {
			return s.StepObligation(bc.Action, bc.Conclusion, "sat")
		}, dir)
		if res.ok {
			r.BrokenCaught++
			c.logf("broken %s: %s /\\ %s => %s' is sat at %s [%s]; tlacheck replayed the counterexample: the state satisfies IndInv, the step is %s, the successor violates %s\n%s",
				variant, c.Options.IndInv, bc.Action, bc.Conclusion, res.size, res.answers, bc.Action, bc.Conclusion, strings.TrimRight(res.witness, "\n"))
		} else {
			msg := fmt.Sprintf("FAILED broken %s: %s /\\ %s => %s' not caught: %s [%s]", variant, c.Options.IndInv, bc.Action, bc.Conclusion, res.err, res.answers)
			c.logf("%s", msg)
			r.Failures = append(r.Failures, msg)
		}
	}
}
