package smt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/soundgate/soundgate/tlacheck"
)

// Witness is a model of a sat check, decoded into TLA+ values over the finite
// instance it was found in: the universe elements of each sort are its model values.
type Witness struct {
	Sizes  map[string]int
	Consts map[string]tlacheck.Value // sort constants as sets of model values, integer constants
	Params []tlacheck.Value          // the action's parameters, in Next's order
	Pre    []tlacheck.Value          // the state, in variable order
	Post   []tlacheck.Value          // the successor (step checks)
}

// modelName is the TLA+ model value of element i (1-based) of sort so: r1, r2 for
// Runs, k1 for Keys (the sort's name when two sorts share a first letter).
func (s *Spec) modelName(so string, i int) string {
	first := strings.ToLower(so[:1])
	for _, o := range s.Sorts {
		if o != so && strings.ToLower(o[:1]) == first {
			return fmt.Sprintf("%s%d", so, i)
		}
	}
	return fmt.Sprintf("%s%d", first, i)
}

// decoder asks z3 for the value of every leaf term the TLA+ values are built from:
// a first pass collects the terms, a second builds the values from the answers.
type decoder struct {
	s       *Spec
	collect bool
	terms   []string
	seen    map[string]bool
	ans     map[string]string
}

func (d *decoder) leaf(term string) string {
	if d.collect {
		if !d.seen[term] {
			d.seen[term] = true
			d.terms = append(d.terms, term)
		}
		return ""
	}
	return d.ans[term]
}

// value decodes the term of type t.
func (d *decoder) value(term string, t *typ) (tlacheck.Value, error) {
	tr := d.s.tr
	switch t.k {
	case kBool:
		return tlacheck.Bool(d.leaf(term) == "true"), nil
	case kInt:
		a := d.leaf(term)
		if d.collect {
			return tlacheck.Int(0), nil
		}
		a = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(a), "(- ", "-"), ")", "")
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer value %q of %s", a, term)
		}
		return tlacheck.Int(n), nil
	case kStr:
		a := d.leaf(term)
		if d.collect {
			return tlacheck.Str(""), nil
		}
		for _, st := range tr.strs {
			if strSym(st) == a {
				return tlacheck.Str(st), nil
			}
		}
		return nil, fmt.Errorf("string value %q of %s", a, term)
	case kSort:
		a := d.leaf(term)
		if d.collect {
			return tlacheck.ModelValue("?"), nil
		}
		for i := 1; i <= tr.finite[t.sort]; i++ {
			if a == fmt.Sprintf("%s!%d", t.sort, i) {
				return tlacheck.ModelValue(d.s.modelName(t.sort, i)), nil
			}
		}
		return nil, fmt.Errorf("%s value %q of %s", t.sort, a, term)
	case kSet:
		es, ok := tr.finiteElems(t.elem)
		if !ok {
			return nil, fmt.Errorf("cannot decode a set of %s (not finite)", t.elem)
		}
		var out []tlacheck.Value
		for _, e := range es {
			in := d.leaf("(select " + term + " " + e.term + ")")
			ev, err := d.value(e.term, t.elem)
			if err != nil {
				return nil, err
			}
			if in == "true" {
				out = append(out, ev)
			}
		}
		return tlacheck.SetOf(out...), nil
	case kFun:
		es, ok := tr.finiteElems(t.dom)
		if !ok {
			return nil, fmt.Errorf("cannot decode a function on %s (not finite)", t.dom)
		}
		var keys, vals []tlacheck.Value
		for _, e := range es {
			k, err := d.value(e.term, t.dom)
			if err != nil {
				return nil, err
			}
			v, err := d.value("(select "+term+" "+e.term+")", t.rng)
			if err != nil {
				return nil, err
			}
			keys, vals = append(keys, k), append(vals, v)
		}
		return tlacheck.FuncOf(keys, vals), nil
	case kRec:
		fs := map[string]tlacheck.Value{}
		for i, f := range t.fields {
			v, err := d.value("("+tr.recName(t)+"_"+f+" "+term+")", t.ftys[i])
			if err != nil {
				return nil, err
			}
			fs[f] = v
		}
		return tlacheck.RecordOf(fs), nil
	}
	return nil, fmt.Errorf("cannot decode a %s", t)
}

// decodeAll walks every value a witness holds.
func (d *decoder) decodeAll(o *Obligation) (*Witness, error) {
	s := d.s
	w := &Witness{Sizes: s.tr.finite, Consts: map[string]tlacheck.Value{}}
	for _, so := range s.Sorts {
		var els []tlacheck.Value
		for i := 1; i <= s.tr.finite[so]; i++ {
			els = append(els, tlacheck.ModelValue(s.modelName(so, i)))
		}
		w.Consts[so] = tlacheck.SetOf(els...)
	}
	for _, c := range s.IntConsts {
		v, err := d.value(c, intT)
		if err != nil {
			return nil, err
		}
		w.Consts[c] = v
	}
	if o.Action != nil {
		for _, p := range o.Action.Params {
			v, err := d.value(p.Sym, p.t)
			if err != nil {
				return nil, err
			}
			w.Params = append(w.Params, v)
		}
	}
	for _, v := range s.Vars {
		x, err := d.value(v, s.tr.vars[v])
		if err != nil {
			return nil, err
		}
		w.Pre = append(w.Pre, x)
		if o.Action != nil {
			y, err := d.value("|"+v+"'|", s.tr.vars[v])
			if err != nil {
				return nil, err
			}
			w.Post = append(w.Post, y)
		}
	}
	return w, nil
}

// Witness runs the finite-mode sat check o through the solver once more, with
// (get-value) for every term the TLA+ values are built from, and decodes the model;
// it also returns those values, in the order of the terms, for Confirm.
func (o *Obligation) Witness(sv Solver, file string, timeout time.Duration) (*Witness, []string, error) {
	w, d, err := o.witness(sv, file, timeout)
	if err != nil {
		return nil, nil, err
	}
	var vals []string
	for _, t := range d.terms {
		vals = append(vals, d.ans[t])
	}
	return w, vals, nil
}

// Confirm has z3 check that the values another solver's model gave every leaf term
// (vals, in the order Witness asked for them) satisfy this script: the script with
// every leaf pinned to its value must be sat. It is how z3 answers on a model it
// could not find itself within the timeout.
func (o *Obligation) Confirm(z3 Solver, file string, vals []string, timeout time.Duration) error {
	d := &decoder{s: o.spec, collect: true, seen: map[string]bool{}}
	if _, err := d.decodeAll(o); err != nil {
		return err
	}
	if len(d.terms) != len(vals) {
		return fmt.Errorf("%s: %d values for %d terms", o.Name, len(vals), len(d.terms))
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(o.Text, "(check-sat)\n"))
	b.WriteString("; the other solver's model, every leaf pinned\n")
	for i, t := range d.terms {
		fmt.Fprintf(&b, "(assert (= %s %s))\n", t, vals[i])
	}
	b.WriteString("(check-sat)\n")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return err
	}
	a := z3.Run(file, true, timeout)
	if a.Result != "sat" {
		return fmt.Errorf("%s: z3 answered %s on the pinned model %s %s", o.Name, a.Result, file, firstLine(a.Detail))
	}
	return nil
}

func (o *Obligation) witness(z3 Solver, file string, timeout time.Duration) (*Witness, *decoder, error) {
	s := o.spec
	if s.tr.finite == nil {
		return nil, nil, fmt.Errorf("%s: a witness is decoded from a finite-mode check only", o.Name)
	}
	d := &decoder{s: s, collect: true, seen: map[string]bool{}}
	if _, err := d.decodeAll(o); err != nil {
		return nil, nil, err
	}
	script := "(set-option :produce-models true)\n" + o.Text + "(get-value (" + strings.Join(d.terms, "\n ") + "))\n"
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, z3.Path, z3.args(file, true)...)
	out, err := cmd.Output()
	text := string(out)
	if !strings.HasPrefix(strings.TrimSpace(text), "sat") {
		return nil, nil, fmt.Errorf("%s: %s did not answer sat on the witness script %s: %.300s (%v)", o.Name, z3.Name, file, text, err)
	}
	body := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(text), "sat"))
	sx, _, perr := parseSexp(body, 0)
	if perr != nil {
		return nil, nil, fmt.Errorf("%s: the model of %s: %v", o.Name, file, perr)
	}
	if len(sx.list) != len(d.terms) {
		return nil, nil, fmt.Errorf("%s: the model has %d values for %d terms", o.Name, len(sx.list), len(d.terms))
	}
	d.ans = map[string]string{}
	for i, pair := range sx.list {
		if len(pair.list) != 2 {
			return nil, nil, fmt.Errorf("%s: a malformed (term value) pair in the model", o.Name)
		}
		d.ans[d.terms[i]] = pair.list[1].String()
	}
	d.collect = false
	w, err := d.decodeAll(o)
	return w, d, err
}

// sexp is a parsed s-expression of a solver's answer.
type sexp struct {
	atom   string
	list   []sexp
	isList bool
}

func (x sexp) String() string {
	if !x.isList {
		return x.atom
	}
	var parts []string
	for _, e := range x.list {
		parts = append(parts, e.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func parseSexp(s string, i int) (sexp, int, error) {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	if i >= len(s) {
		return sexp{}, i, fmt.Errorf("unexpected end of the model")
	}
	if s[i] == '(' {
		x := sexp{isList: true}
		i++
		for {
			for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
				i++
			}
			if i >= len(s) {
				return x, i, fmt.Errorf("unbalanced parentheses in the model")
			}
			if s[i] == ')' {
				return x, i + 1, nil
			}
			e, j, err := parseSexp(s, i)
			if err != nil {
				return x, j, err
			}
			x.list = append(x.list, e)
			i = j
		}
	}
	if s[i] == ')' {
		return sexp{}, i, fmt.Errorf("unexpected ) in the model")
	}
	j := i
	if s[i] == '|' {
		j = strings.IndexByte(s[i+1:], '|')
		if j < 0 {
			return sexp{}, i, fmt.Errorf("unterminated |symbol| in the model")
		}
		j = i + 1 + j + 1
	} else {
		for j < len(s) && !strings.ContainsRune(" \n\t\r()", rune(s[j])) {
			j++
		}
	}
	return sexp{atom: s[i:j]}, j, nil
}

// Replay has tlacheck's evaluator confirm the witness on src (the spec the
// obligation was translated from), on the finite instance: the state satisfies
// IndInv (or Init, for the Init vacuity check); the successor is one of the
// action's successors with these parameters; and the successor violates the
// conclusion, when there is one.
func (o *Obligation) Replay(src string, w *Witness) error {
	s := o.spec
	var cfg strings.Builder
	cfg.WriteString("CONSTANTS\n")
	for _, so := range s.Sorts {
		fmt.Fprintf(&cfg, "  %s = %s\n", so, w.Consts[so])
	}
	for _, c := range s.IntConsts {
		fmt.Fprintf(&cfg, "  %s = %s\n", c, w.Consts[c])
	}
	fmt.Fprintf(&cfg, "INIT %s\nNEXT %s\n", s.o.Init, s.o.Next)
	spec, err := tlacheck.LoadSource(src, cfg.String())
	if err != nil {
		return fmt.Errorf("%s: tlacheck cannot load the finite instance:\n%s\n%w", o.Name, cfg.String(), err)
	}
	st := spec.Stepper()
	if !slices.Equal(spec.Vars(), sortedStrings(s.Vars)) {
		return fmt.Errorf("%s: tlacheck's variables %v are not the translation's %v", o.Name, spec.Vars(), s.Vars)
	}
	pre := tlacheck.State(w.Pre)
	// A State is in declaration order, as the translation's; confirm it by name.
	for i, name := range s.Vars {
		if v, ok := st.Var(pre, name); !ok || !tlacheck.Equal(v, w.Pre[i]) {
			return fmt.Errorf("%s: variable %s is not where the translation put it in tlacheck's state", o.Name, name)
		}
	}
	holds := func(state tlacheck.State, name string) (bool, error) {
		v, err := st.Eval(state, name)
		if err != nil {
			return false, fmt.Errorf("%s: evaluating %s: %w", o.Name, name, err)
		}
		return tlacheck.Equal(v, tlacheck.Bool(true)), nil
	}
	if o.Group == "vacuity" && o.Action == nil {
		inits, err := st.Init()
		if err != nil {
			return err
		}
		if !containsState(inits, pre) {
			return fmt.Errorf("%s: the decoded state is not an initial state of tlacheck:\n%s", o.Name, st.Record(pre))
		}
	}
	ok, err := holds(pre, s.o.IndInv)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: tlacheck says the decoded state does not satisfy %s:\n%s", o.Name, s.o.IndInv, st.Record(pre))
	}
	if o.Action == nil {
		return nil
	}
	a := o.Action
	if a.Args == nil {
		return fmt.Errorf("%s: the disjunct %s does not call an operator on its parameters; it cannot be replayed", o.Name, a.Name)
	}
	args := make([]tlacheck.Value, len(a.Args))
	for i, name := range a.Args {
		found := false
		for j, p := range a.Params {
			if p.Name == name {
				args[i], found = w.Params[j], true
			}
		}
		if !found {
			return fmt.Errorf("%s: argument %s of %s is not a parameter of Next's \\E", o.Name, name, a.Name)
		}
	}
	succs, err := st.Step(pre, a.Name, args...)
	if err != nil {
		return fmt.Errorf("%s: stepping %s: %w", o.Name, a.Name, err)
	}
	post := tlacheck.State(w.Post)
	if !containsState(succs, post) {
		return fmt.Errorf("%s: the decoded successor is not a successor of %s%v in tlacheck (%d successors)\nstate: %s\nsuccessor: %s",
			o.Name, a.Name, args, len(succs), st.Record(pre), st.Record(post))
	}
	if o.Conclusion == "" {
		return nil
	}
	ok, err = holds(post, o.Conclusion)
	if err != nil {
		return err
	}
	if ok {
		return fmt.Errorf("%s: tlacheck says the successor satisfies %s: not a counterexample", o.Name, o.Conclusion)
	}
	return nil
}

func containsState(states []tlacheck.State, x tlacheck.State) bool {
	for _, s := range states {
		eq := len(s) == len(x)
		for i := range s {
			if eq && !tlacheck.Equal(s[i], x[i]) {
				eq = false
			}
		}
		if eq {
			return true
		}
	}
	return false
}

// Describe prints a witness as TLA+ records, for the log.
func (o *Obligation) Describe(w *Witness) string {
	s := o.spec
	var b strings.Builder
	for _, so := range s.Sorts {
		fmt.Fprintf(&b, "    %s = %s\n", so, w.Consts[so])
	}
	for _, c := range s.IntConsts {
		fmt.Fprintf(&b, "    %s = %s\n", c, w.Consts[c])
	}
	if o.Action != nil {
		var ps []string
		for i, p := range o.Action.Params {
			ps = append(ps, fmt.Sprintf("%s = %s", p.Name, w.Params[i]))
		}
		fmt.Fprintf(&b, "    action %s with %s\n", o.Action.Name, strings.Join(ps, ", "))
	}
	for i, v := range s.Vars {
		line := fmt.Sprintf("    %-10s %s", v, w.Pre[i])
		if w.Post != nil && !tlacheck.Equal(w.Pre[i], w.Post[i]) {
			line += "  ->  " + w.Post[i].String()
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
