package smt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/soundgate/soundgate/tlacheck"
)

// The finite instance: the obligations decided with the sorts finite, on the
// constants of the bounded inductive check (spec/tla/SoundGate_indstep.cfg: Runs = 1
// element, Keys = 2, MaxEpoch = 2), compared one by one with what tlacheck's
// evaluator says on the same constants, for the spec and for every broken variant.
//
// The bounded side (tlacheck only): an init obligation Init => C fails when an
// initial state violates C; a step obligation IndInv /\ A => C' when some state of
// IndInit (every state satisfying IndInv, enumerated) has an A-successor, for some
// parameters, that violates C; a safety obligation IndInv => P when an IndInit state
// violates P. tlacheck's own bounded inductive check (CheckInductive, what make
// verify-tla-inductive runs) is run too, and its verdict must match: it passes
// exactly when no step or safety obligation fails there.
//
// The SMT side (z3, finite mode: the sorts datatypes of that many elements, every
// quantifier over a finite type expanded, MaxEpoch asserted equal to the config's
// value). A failing obligation must be sat: its finite script with the bounded
// side's counterexample pinned (every variable, primed variable and parameter fixed
// to its value) must be sat, which makes the script sat (the pins only add
// constraints). The obligations that hold are decided together, one script per
// group (Init, each action, the properties) whose conclusion is the conjunction of
// theirs: unsat proves each of them unsat; anything else and each is decided alone.

// finiteInstance is the constants of a config, as sort sizes and integer values.
type finiteInstance struct {
	sizes  map[string]int
	fixed  map[string]int64
	name   string // Runs=1,Keys=2,MaxEpoch=2
	consts string // the CONSTANTS section for tlacheck
}

// instanceOf reads the constants of cfgSrc for the sorts and integer constants of
// s; the model values of a sort must be named as the decoder names them (r1, k1, k2).
func instanceOf(cfgSrc string, s *Spec) (*finiteInstance, error) {
	cfg, err := tlacheck.ParseConfig(cfgSrc)
	if err != nil {
		return nil, err
	}
	in := &finiteInstance{sizes: map[string]int{}, fixed: map[string]int64{}}
	val := map[string]tlacheck.Value{}
	for _, c := range cfg.Constants {
		val[c.Name] = c.Value
	}
	var parts []string
	var b strings.Builder
	b.WriteString("CONSTANTS\n")
	for _, so := range s.Sorts {
		v, ok := val[so]
		if !ok {
			return nil, fmt.Errorf("the config gives %s no value", so)
		}
		n := len(v.Elems())
		var want []tlacheck.Value
		for i := 1; i <= n; i++ {
			want = append(want, tlacheck.ModelValue(s.modelName(so, i)))
		}
		if n == 0 || !tlacheck.Equal(v, tlacheck.SetOf(want...)) {
			return nil, fmt.Errorf("the config's %s = %s is not a non-empty set of model values named %s", so, v, tlacheck.SetOf(want...))
		}
		in.sizes[so] = n
		parts = append(parts, fmt.Sprintf("%s=%d", so, n))
		fmt.Fprintf(&b, "  %s = %s\n", so, v)
	}
	for _, c := range s.IntConsts {
		v, ok := val[c]
		if !ok {
			return nil, fmt.Errorf("the config gives %s no value", c)
		}
		n, err := strconv.ParseInt(v.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("the config's %s = %s is not an integer", c, v)
		}
		in.fixed[c] = n
		parts = append(parts, fmt.Sprintf("%s=%d", c, n))
		fmt.Fprintf(&b, "  %s = %d\n", c, n)
	}
	in.name, in.consts = strings.Join(parts, ","), b.String()
	return in, nil
}

// boundedVerdict is the bounded side's verdict on one obligation.
type boundedVerdict struct {
	holds bool
	w     *Witness // the first counterexample found, when it fails
}

// boundedFigures count what the bounded side examined.
type boundedFigures struct {
	initStates, indStates, successors int
}

// defText is the text of the top-level definition name in src: its first line and
// the indented or blank lines after it; "" when src has none.
func defText(src, name string) string {
	lines := strings.Split(src, "\n")
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\s*==`)
	for i, ln := range lines {
		if !re.MatchString(ln) {
			continue
		}
		j := i + 1
		for j < len(lines) && (lines[j] == "" || lines[j][0] == ' ' || lines[j][0] == '\t') {
			j++
		}
		return strings.TrimRight(strings.Join(lines[i:j], "\n"), "\n ") + "\n"
	}
	return ""
}

// withDef returns src with def inserted before the module's closing ==== line.
func withDef(src, def string) (string, error) {
	i := strings.LastIndex(src, "\n====")
	if i < 0 {
		return "", fmt.Errorf("no closing ==== line")
	}
	return src[:i+1] + "\n" + def + src[i+1:], nil
}

// bounded computes the bounded side's verdict on every obligation of s (translated
// in finite mode from src), with tlacheck on the instance: tlaSrc is src with the
// generator indInit defined.
func (s *Spec) bounded(tlaSrc string, in *finiteInstance, indInit string, obs []*Obligation) (map[string]*boundedVerdict, boundedFigures, error) {
	var fig boundedFigures
	load := func(init string) (*tlacheck.Stepper, []tlacheck.State, error) {
		spec, err := tlacheck.LoadSource(tlaSrc, in.consts+fmt.Sprintf("INIT %s\nNEXT %s\n", init, s.o.Next))
		if err != nil {
			return nil, nil, err
		}
		st := spec.Stepper()
		states, err := st.Init()
		return st, states, err
	}
	holds := func(st *tlacheck.Stepper, state tlacheck.State, name string) (bool, error) {
		v, err := st.Eval(state, name)
		if err != nil {
			return false, fmt.Errorf("tlacheck evaluating %s: %w", name, err)
		}
		return v.AsBool(), nil
	}
	consts := map[string]tlacheck.Value{}
	for _, so := range s.Sorts {
		var els []tlacheck.Value
		for i := 1; i <= in.sizes[so]; i++ {
			els = append(els, tlacheck.ModelValue(s.modelName(so, i)))
		}
		consts[so] = tlacheck.SetOf(els...)
	}
	for c, n := range in.fixed {
		consts[c] = tlacheck.Int(n)
	}
	out := map[string]*boundedVerdict{}
	fail := func(o *Obligation, w *Witness) {
		if v := out[o.Name]; v.holds {
			w.Sizes, w.Consts = in.sizes, consts
			v.holds, v.w = false, w
		}
	}
	for _, o := range obs {
		out[o.Name] = &boundedVerdict{holds: true}
	}

	ist, inits, err := load(s.o.Init)
	if err != nil {
		return nil, fig, err
	}
	fig.initStates = len(inits)
	for _, st := range inits {
		for _, o := range obs {
			if o.Group != "init" {
				continue
			}
			ok, err := holds(ist, st, o.Conclusion)
			if err != nil {
				return nil, fig, err
			}
			if !ok {
				fail(o, &Witness{Pre: st})
			}
		}
	}

	tst, cands, err := load(indInit)
	if err != nil {
		return nil, fig, err
	}
	var states []tlacheck.State
	for _, st := range cands {
		ok, err := holds(tst, st, s.o.IndInv)
		if err != nil {
			return nil, fig, err
		}
		if ok {
			states = append(states, st)
		}
	}
	fig.indStates = len(states)
	if len(states) == 0 {
		return nil, fig, fmt.Errorf("%s generates no state satisfying %s", indInit, s.o.IndInv)
	}
	for _, st := range states {
		for _, o := range obs {
			if o.Group != "safety" {
				continue
			}
			ok, err := holds(tst, st, o.Conclusion)
			if err != nil {
				return nil, fig, err
			}
			if !ok {
				fail(o, &Witness{Pre: st})
			}
		}
	}
	for _, a := range s.Actions {
		if a.Args == nil {
			return nil, fig, fmt.Errorf("the disjunct %s of %s does not call an operator on its parameters: tlacheck cannot step it alone", a.Name, s.o.Next)
		}
		var mine []*Obligation
		for _, o := range obs {
			if o.Group == "step" && o.Action == a {
				mine = append(mine, o)
			}
		}
		// The values of each parameter: its set, a name in Next.
		var domains [][]tlacheck.Value
		for _, p := range a.Params {
			n := p.setNode
			if n == nil || n.Kind != tlacheck.NIdent {
				return nil, fig, fmt.Errorf("parameter %s of %s: the cross-check needs its set to be a name", p.Name, a.Name)
			}
			var set tlacheck.Value
			switch v, ok := tst.Constant(n.Name); {
			case ok:
				set = v
			case n.Name == "BOOLEAN":
				set = tlacheck.SetOf(tlacheck.Bool(false), tlacheck.Bool(true))
			default:
				if set, err = tst.Eval(states[0], n.Name); err != nil {
					return nil, fig, fmt.Errorf("parameter %s of %s: %w", p.Name, a.Name, err)
				}
			}
			domains = append(domains, set.Elems())
		}
		order := make([]int, len(a.Args)) // a.Args[i] is parameter order[i]
		for i, name := range a.Args {
			order[i] = -1
			for j, p := range a.Params {
				if p.Name == name {
					order[i] = j
				}
			}
			if order[i] < 0 {
				return nil, fig, fmt.Errorf("argument %s of %s is not a parameter of %s's \\E", name, a.Name, s.o.Next)
			}
		}
		params := make([]tlacheck.Value, len(a.Params))
		var each func(i int) error
		each = func(i int) error {
			if i < len(params) {
				for _, v := range domains[i] {
					params[i] = v
					if err := each(i + 1); err != nil {
						return err
					}
				}
				return nil
			}
			args := make([]tlacheck.Value, len(order))
			for k, j := range order {
				args[k] = params[j]
			}
			for _, st := range states {
				succs, err := tst.Step(st, a.Name, args...)
				if err != nil {
					return fmt.Errorf("tlacheck stepping %s: %w", a.Name, err)
				}
				for _, next := range succs {
					fig.successors++
					for _, o := range mine {
						if !out[o.Name].holds {
							continue
						}
						ok, err := holds(tst, next, o.Conclusion)
						if err != nil {
							return err
						}
						if !ok {
							fail(o, &Witness{Params: append([]tlacheck.Value(nil), params...), Pre: st, Post: next})
						}
					}
				}
			}
			return nil
		}
		if err := each(0); err != nil {
			return nil, fig, err
		}
	}
	return out, fig, nil
}

// valueTerm is the SMT term of the TLA+ value v of type t, in finite mode.
func (s *Spec) valueTerm(t *typ, v tlacheck.Value) (string, error) {
	tr := s.tr
	switch t.k {
	case kBool:
		if tlacheck.Equal(v, tlacheck.Bool(true)) {
			return "true", nil
		}
		if tlacheck.Equal(v, tlacheck.Bool(false)) {
			return "false", nil
		}
	case kInt:
		if n, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return intLit(n), nil
		}
	case kStr:
		for _, st := range tr.strs {
			if tlacheck.Equal(v, tlacheck.Str(st)) {
				return strSym(st), nil
			}
		}
	case kSort:
		for i := 1; i <= tr.finite[t.sort]; i++ {
			if tlacheck.Equal(v, tlacheck.ModelValue(s.modelName(t.sort, i))) {
				return fmt.Sprintf("%s!%d", t.sort, i), nil
			}
		}
	case kSet:
		term := "((as const " + tr.smtSort(t) + ") false)"
		for _, e := range v.Elems() {
			et, err := s.valueTerm(t.elem, e)
			if err != nil {
				return "", err
			}
			term = "(store " + term + " " + et + " true)"
		}
		return term, nil
	case kFun:
		dom, ok := tr.finiteElems(t.dom)
		keys := v.Domain()
		if !ok || len(keys) != len(dom) {
			return "", fmt.Errorf("the function %s is not total on the finite %s", v, t.dom)
		}
		var kts, vts []string
		for _, k := range keys {
			kt, err := s.valueTerm(t.dom, k)
			if err != nil {
				return "", err
			}
			x, _ := v.Apply(k)
			vt, err := s.valueTerm(t.rng, x)
			if err != nil {
				return "", err
			}
			kts, vts = append(kts, kt), append(vts, vt)
		}
		term := "((as const " + tr.smtSort(t) + ") " + vts[0] + ")"
		for i := range kts {
			term = "(store " + term + " " + kts[i] + " " + vts[i] + ")"
		}
		return term, nil
	case kRec:
		parts := []string{"mk_" + tr.recName(t)}
		for i, f := range t.fields {
			x, ok := v.Field(f)
			if !ok {
				return "", fmt.Errorf("the record %s has no field %s", v, f)
			}
			ft, err := s.valueTerm(t.ftys[i], x)
			if err != nil {
				return "", err
			}
			parts = append(parts, ft)
		}
		return "(" + strings.Join(parts, " ") + ")", nil
	}
	return "", fmt.Errorf("the value %s is not of type %s in the finite instance", v, t)
}

// pinned is o's finite script with the witness fixed: every variable (and primed
// variable, and parameter) asserted equal to its value.
func (o *Obligation) pinned(w *Witness) (string, error) {
	s := o.spec
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(o.Text, "(check-sat)\n"))
	b.WriteString("; the bounded check's counterexample, pinned\n")
	pin := func(sym string, t *typ, v tlacheck.Value) error {
		term, err := s.valueTerm(t, v)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", o.Name, sym, err)
		}
		fmt.Fprintf(&b, "(assert (= %s %s))\n", sym, term)
		return nil
	}
	if o.Action != nil {
		for i, p := range o.Action.Params {
			if err := pin(p.Sym, p.t, w.Params[i]); err != nil {
				return "", err
			}
		}
	}
	for i, v := range s.Vars {
		if err := pin(v, s.tr.vars[v], w.Pre[i]); err != nil {
			return "", err
		}
		if o.Primed {
			if err := pin("|"+v+"'|", s.tr.vars[v], w.Post[i]); err != nil {
				return "", err
			}
		}
	}
	b.WriteString("(check-sat)\n")
	return b.String(), nil
}

// combined is one script for the obligations of one group (same hypotheses): its
// conclusion is the conjunction of theirs, so unsat proves each of them.
func (s *Spec) combined(members []*Obligation) (*Obligation, error) {
	if len(members) == 1 {
		return members[0], nil
	}
	first := members[0]
	and := &tlacheck.Node{Kind: tlacheck.NAnd}
	var names []string
	for _, m := range members {
		n, ok := s.conclusion(m.Conclusion)
		if !ok {
			return nil, fmt.Errorf("no conclusion %s", m.Conclusion)
		}
		and.Args = append(and.Args, n)
		names = append(names, m.Conclusion)
	}
	label := strings.Join(names, " /\\ ")
	prefix := strings.SplitN(first.Name, "__", 2)[0]
	var o *Obligation
	err := s.protect(func() {
		o = s.build(first.Group, prefix+"__together", "unsat", first.Action, "("+label+")", and, first.Primed,
			fmt.Sprintf("%s, for %d obligations at once", strings.Replace(first.Claim, first.Conclusion, "("+label+")", 1), len(members)))
	})
	return o, err
}

// finiteSpec is one spec of the cross-check: the correct one or a broken variant.
type finiteSpec struct {
	label, file, src string
	s                *Spec
	obs              []*Obligation
	verdict          map[string]*boundedVerdict
	fig              boundedFigures
	ind              *tlacheck.InductiveResult
	smt              map[string]string // obligation -> z3's verdict
	scripts          int
	err              error
}

// finiteJob is one script of the cross-check and the obligations its answer decides.
type finiteJob struct {
	key     string // the script's text without its header (identical scripts run once)
	file    string
	members []*Obligation
	fs      *finiteSpec
	pinned  bool // a counterexample pinned: sat expected
	answer  Answer
}

// scriptKey is a script's text from (set-logic on: the header names the file.
func scriptKey(text string) string {
	if i := strings.Index(text, "(set-logic"); i >= 0 {
		return text[i:]
	}
	return text
}

// finite runs the cross-check on the finite instance of c.FiniteConfig for the spec
// and every broken variant.
func (c *RunConfig) finite(r *Report, src string) {
	start := time.Now()
	failf := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		c.logf("%s", msg)
		r.Failures = append(r.Failures, msg)
	}
	z3, _ := c.solver("z3")
	base, err := Translate(c.SpecPath, src, c.Options)
	if err != nil {
		failf("FAILED finite instance: %v", err)
		return
	}
	cfgSrc, err := os.ReadFile(c.FiniteConfig)
	if err != nil {
		failf("FAILED finite instance: %v", err)
		return
	}
	in, err := instanceOf(string(cfgSrc), base)
	if err != nil {
		failf("FAILED finite instance: %s: %v", c.FiniteConfig, err)
		return
	}
	r.FiniteName = in.name
	indInit := c.IndInit
	if indInit == "" {
		indInit = "IndInit"
	}
	gen := defText(src, indInit)
	if gen == "" {
		failf("FAILED finite instance: %s has no definition %s (the generator of the IndInv states)", c.SpecPath, indInit)
		return
	}
	specs := []*finiteSpec{{label: "spec " + base.Module, file: c.SpecPath, src: src}}
	if c.BrokenDir != "" {
		files, err := Variants(c.BrokenDir, c.SpecPath)
		if err != nil {
			failf("FAILED finite instance: %v", err)
			return
		}
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				failf("FAILED finite instance: %v", err)
				return
			}
			specs = append(specs, &finiteSpec{label: "broken " + strings.TrimSuffix(filepath.Base(f), ".tla"), file: f, src: string(b)})
		}
	}
	dir := filepath.Join(c.OutDir, "finite")
	_ = os.MkdirAll(dir, 0o755)
	opts := c.Options
	opts.Finite, opts.Fixed, opts.PinConsts = in.sizes, in.fixed, false

	// The bounded side and the scripts.
	byKey := map[string]*finiteJob{}
	var jobs []*finiteJob
	add := func(fs *finiteSpec, ob *Obligation, text string, members []*Obligation, pinned bool) error {
		fs.scripts++
		key := scriptKey(text)
		if j, ok := byKey[key]; ok {
			dup := *j
			dup.members, dup.fs, dup.pinned = members, fs, pinned
			jobs = append(jobs, &dup) // the same script: decided once, below
			return nil
		}
		sub := strings.ReplaceAll(strings.TrimPrefix(fs.label, "broken "), " ", "_")
		_ = os.MkdirAll(filepath.Join(dir, sub), 0o755)
		file := filepath.Join(dir, sub, ob.Name+".smt2")
		if pinned {
			file = filepath.Join(dir, sub, ob.Name+".pinned.smt2")
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return err
		}
		j := &finiteJob{key: key, file: file, members: members, fs: fs, pinned: pinned}
		byKey[key] = j
		jobs = append(jobs, j)
		return nil
	}
	for _, fs := range specs {
		fs.smt = map[string]string{}
		fs.s, fs.err = Translate(fs.file, fs.src, opts)
		if fs.err != nil {
			continue
		}
		all, err := fs.s.Obligations()
		if err != nil {
			fs.err = err
			continue
		}
		for _, o := range all {
			if o.Expect == "unsat" {
				fs.obs = append(fs.obs, o)
			}
		}
		tlaSrc := fs.src
		if defText(tlaSrc, indInit) == "" {
			// a variant older than the generator: the spec's, which ends in the
			// variant's own IndInv
			if tlaSrc, fs.err = withDef(tlaSrc, gen); fs.err != nil {
				continue
			}
		}
		if fs.verdict, fs.fig, fs.err = fs.s.bounded(tlaSrc, in, indInit, fs.obs); fs.err != nil {
			continue
		}
		spec, err := tlacheck.LoadSource(tlaSrc, string(cfgSrc))
		if err != nil {
			fs.err = err
			continue
		}
		if fs.ind, fs.err = spec.CheckInductive(tlacheck.InductiveOptions{IndInv: c.Options.IndInv, TypeOK: indInit, Safety: c.Options.Props}); fs.err != nil {
			continue
		}
		groups := map[string][]*Obligation{}
		var order []string
		for _, o := range fs.obs {
			g := o.Group
			if o.Action != nil {
				g += " " + o.Action.Name
			}
			if groups[g] == nil {
				order = append(order, g)
			}
			groups[g] = append(groups[g], o)
		}
		for _, g := range order {
			var holding []*Obligation
			for _, o := range groups[g] {
				if v := fs.verdict[o.Name]; !v.holds {
					text, err := o.pinned(v.w)
					if err == nil {
						err = add(fs, o, text, []*Obligation{o}, true)
					}
					if err != nil {
						fs.err = err
						break
					}
					continue
				}
				holding = append(holding, o)
			}
			if fs.err != nil || len(holding) == 0 {
				continue
			}
			ob, err := fs.s.combined(holding)
			if err == nil {
				err = add(fs, ob, ob.Text, holding, false)
			}
			if err != nil {
				fs.err = err
			}
		}
	}
	c.logf("finite instance %s (%s): %d scripts for z3 (%d distinct) on %d workers, timeout %s each",
		in.name, c.FiniteConfig, len(jobs), len(byKey), c.Workers, c.Timeout)
	runFinite := func(js []*finiteJob) {
		var run []Job
		for _, j := range js {
			j := j
			run = append(run, Job{File: j.file, ExpectSat: j.pinned, Solver: z3, Done: func(a Answer) { j.answer = a }})
		}
		RunJobs(run, c.Workers, c.Timeout)
	}
	var distinct []*finiteJob
	for _, j := range byKey {
		distinct = append(distinct, j)
	}
	sort.Slice(distinct, func(a, b int) bool { return distinct[a].file < distinct[b].file })
	runFinite(distinct)
	for _, j := range jobs {
		j.answer = byKey[j.key].answer
	}
	// A group that is not unsat as a whole: each of its obligations alone.
	var split []*finiteJob
	for _, j := range jobs {
		if j.pinned || len(j.members) == 1 || j.answer.Result == "unsat" {
			continue
		}
		for _, o := range j.members {
			file := strings.TrimSuffix(j.file, ".smt2") + "." + o.Name + ".smt2"
			if err := os.WriteFile(file, []byte(o.Text), 0o644); err != nil {
				j.fs.err = err
				continue
			}
			j.fs.scripts++
			split = append(split, &finiteJob{file: file, members: []*Obligation{o}, fs: j.fs})
		}
		j.members = nil
	}
	runFinite(split)
	for _, j := range append(jobs, split...) {
		for _, o := range j.members {
			j.fs.smt[o.Name] = j.answer.Result
		}
	}

	// The verdicts, compared.
	total, agree, specsAgree, sat, unsat := 0, 0, 0, 0, 0
	for _, fs := range specs {
		if fs.err != nil {
			failf("FAILED finite %s: %v", fs.label, fs.err)
			continue
		}
		ok := true
		var failing []string
		for _, o := range fs.obs {
			total++
			v, got := fs.verdict[o.Name], fs.smt[o.Name]
			switch got {
			case "sat":
				sat++
			case "unsat":
				unsat++
			}
			want := "unsat"
			if !v.holds {
				want = "sat"
				failing = append(failing, o.Name)
			}
			if got == want {
				agree++
				continue
			}
			ok = false
			if v.holds {
				failf("FAILED finite %s: %s (%s): tlacheck finds no counterexample at %s, z3 answers %s on the finite script",
					fs.label, o.Name, o.Claim, in.name, got)
			} else {
				failf("FAILED finite %s: %s (%s): tlacheck finds a counterexample at %s, z3 answers %s on the finite script with it pinned:\n%s",
					fs.label, o.Name, o.Claim, in.name, got, strings.TrimRight(o.Describe(v.w), "\n"))
			}
		}
		// tlacheck's own bounded inductive check must say the same.
		stepFails := map[string]bool{}
		safetyFails := false
		for _, o := range fs.obs {
			if fs.verdict[o.Name].holds {
				continue
			}
			switch {
			case o.Group == "step":
				stepFails[o.Action.Name] = true
			case o.Group == "safety":
				safetyFails = true
			}
		}
		if fs.ind.Failure == "" && (fs.fig.indStates != int(fs.ind.Candidates) || fs.fig.successors != int(fs.ind.Successors)) {
			ok = false
			failf("FAILED finite %s: the obligations' enumeration saw %d IndInv states and %d successors, tlacheck's bounded inductive check %d and %d: the actions do not cover %s",
				fs.label, fs.fig.indStates, fs.fig.successors, fs.ind.Candidates, fs.ind.Successors, c.Options.Next)
		}
		indVerdict := "ok"
		if f := fs.ind.Failure; f != "" {
			indVerdict = "FAILED: " + f
			act := strings.SplitN(fs.ind.Action, "(", 2)[0]
			if !(fs.ind.Action != "" && stepFails[act] || fs.ind.Action == "" && safetyFails) {
				ok = false
				failf("FAILED finite %s: tlacheck's bounded inductive check fails (%s), but no obligation of that kind fails there", fs.label, f)
			}
		} else if len(stepFails) > 0 || safetyFails {
			ok = false
			failf("FAILED finite %s: tlacheck's bounded inductive check passes, but %s fail there", fs.label, strings.Join(failing, ", "))
		}
		if ok {
			specsAgree++
		}
		sats := "none"
		if len(failing) > 0 {
			sats = strings.Join(failing, ", ")
		}
		c.logf("finite %s: %d obligations, %d scripts; tlacheck: %d initial states, %d IndInv states, %d successors; sat (a counterexample, pinned) %s; the rest unsat; tlacheck -inductive: %s",
			fs.label, len(fs.obs), fs.scripts, fs.fig.initStates, fs.fig.indStates, fs.fig.successors, sats, indVerdict)
	}
	r.FiniteObligations, r.FiniteAgree, r.FiniteSpecs, r.FiniteSpecsAgree = total, agree, len(specs), specsAgree
	verdict := fmt.Sprintf("verdicts agree with the bounded inductive check on the spec and %d broken variants", len(specs)-1)
	if agree != total || specsAgree != len(specs) {
		verdict = fmt.Sprintf("FAILED: %d of %d verdicts agree, %d of %d specs", agree, total, specsAgree, len(specs))
	}
	c.logf("finite instance %s: %d obligations (z3: %d sat, %d unsat, %d other) in %d scripts, %s; %.1f s",
		in.name, total, sat, unsat, total-sat-unsat, len(byKey)+len(split), verdict, time.Since(start).Seconds())
}
