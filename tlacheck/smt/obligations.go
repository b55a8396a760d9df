// Package smt translates a TLA+ spec, parsed by tlacheck's own parser, into SMT-LIB 2
// proof obligations for its inductive invariant: Init => IndInv, IndInv /\ A =>
// C' for every action A of Next and every conjunct C of IndInv, and IndInv => P
// for every property. Each CONSTANT set of model values is an uninterpreted sort
// (so the obligations hold for any number of runs and keys), integer constants are
// symbolic with their ASSUMEs, strings are the constructors of one datatype, functions
// arrays, sets arrays to Bool, records datatypes. What it cannot translate exactly it
// refuses with the construct's position; docs/verify/smt.md says what is checked.
package smt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// Options name the operators the obligations are built from.
type Options struct {
	Init, Next, IndInv, TypeOK string
	// Props are the properties IndInv must imply; a definition whose body is a
	// conjunction of names (Safety == P1 /\ P2) stands for those names.
	Props []string
	// Finite, when set, makes each sort constant a datatype of that many elements
	// (the bounded cross-check against tlacheck's inductive mode).
	Finite map[string]int
	// PinConsts (finite mode) writes constant arrays as declared constants fixed at
	// each index, for cvc5 (see constArr).
	PinConsts bool
	// Fixed gives integer constants a value, asserted as a hypothesis of every
	// obligation (the finite instance of a config: MaxEpoch = 2); nil: symbolic.
	Fixed map[string]int64
}

// DefaultOptions are the names SoundGate.tla uses.
func DefaultOptions() Options {
	return Options{Init: "Init", Next: "Next", IndInv: "IndInv", TypeOK: "TypeOK", Props: []string{"TypeOK", "Safety", "Structure"}}
}

// Param is one existential parameter of an action, skolemized as a constant.
type Param struct {
	Name string // the bound name in Next
	Sym  string // the SMT constant
	t    *typ
	set  val
	// setNode is the set it is drawn from, as written in Next (the bounded
	// cross-check evaluates it in tlacheck).
	setNode *tlacheck.Node
}

// Action is one disjunct of Next.
type Action struct {
	Name   string // the operator it calls, e.g. Admit
	Params []Param
	Args   []string // the call's arguments, each a parameter name (for replay); nil if not of that form
	node   *tlacheck.Node
	pos    tlacheck.Pos
}

// Conjunct is one conjunct of IndInv, or one property.
type Conjunct struct {
	Name string
	node *tlacheck.Node
}

// Spec is a translated module, ready to produce obligations.
type Spec struct {
	File      string
	Module    string
	Vars      []string
	Sorts     []string
	IntConsts []string
	Actions   []*Action
	Conjuncts []Conjunct // of IndInv
	Props     []Conjunct
	tr        *translator
	o         Options
	assumes   []string
}

// Obligation is one SMT-LIB script: the negation of a claim, ending in (check-sat).
type Obligation struct {
	Name       string // action__conjunct, the file's name without .smt2
	Group      string // init, step, safety, vacuity, broken
	Expect     string // "unsat" (a proof) or "sat" (vacuity, a broken variant)
	Claim      string // what unsat (or sat) establishes, in words
	Action     *Action
	Conclusion string
	Primed     bool
	Text       string
	spec       *Spec
}

// Translate parses src (file names it in refusals) and prepares its translation.
func Translate(file, src string, o Options) (s *Spec, err error) {
	mod, err := tlacheck.ParseSyntax(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tr := &translator{mod: mod, file: file, defs: map[string]*tlacheck.Def{}, consts: map[string]constInfo{},
		vars: map[string]*typ{}, recKey: map[string]string{}, memo: map[memoKey]val{}, finite: o.Finite, pinConsts: o.PinConsts}
	defer func() {
		if r := recover(); r != nil {
			if rf, ok := r.(*Refusal); ok {
				s, err = nil, rf
				return
			}
			panic(r)
		}
	}()
	s = &Spec{File: file, Module: mod.Name, tr: tr, o: o}
	s.declare()
	s.types()
	s.split()
	s.actions()
	return s, nil
}

// declare records definitions, constants (an ASSUME C \in Nat or Int makes C an
// integer, any other constant is a set of model values: a sort), variables, strings.
func (s *Spec) declare() {
	tr := s.tr
	for _, d := range tr.mod.Defs {
		tr.defs[d.Name] = d
	}
	ints := map[string]bool{}
	for _, a := range tr.mod.Assumes {
		for _, c := range conjuncts(a) {
			if c.Kind == tlacheck.NOp && c.Name == "\\in" && c.Args[0].Kind == tlacheck.NIdent && c.Args[1].Kind == tlacheck.NIdent &&
				(c.Args[1].Name == "Nat" || c.Args[1].Name == "Int") {
				ints[c.Args[0].Name] = true
			}
		}
	}
	for _, c := range tr.mod.Constants {
		if reserved[c.Name] {
			tr.refuse(c.Pos, "the name %s is reserved in SMT-LIB", c.Name)
		}
		tr.consts[c.Name] = constInfo{isInt: ints[c.Name]}
		if ints[c.Name] {
			s.IntConsts = append(s.IntConsts, c.Name)
		} else {
			s.Sorts = append(s.Sorts, c.Name)
			tr.sorts = append(tr.sorts, c.Name)
		}
	}
	for _, v := range tr.mod.Variables {
		if reserved[v.Name] {
			tr.refuse(v.Pos, "the name %s is reserved in SMT-LIB", v.Name)
		}
		tr.vars[v.Name] = nil
		tr.order = append(tr.order, v.Name)
	}
	s.Vars = tr.order
	strs := map[string]bool{}
	for _, d := range tr.mod.Defs {
		walk(d.Body, func(n *tlacheck.Node) {
			if n.Kind == tlacheck.NStr {
				strs[n.Str] = true
			}
		})
	}
	tr.strs = sortedKeys(strs)
	for _, a := range tr.mod.Assumes {
		s.assumes = append(s.assumes, tr.formula(a, ctx{}))
	}
}

// types gives each variable the element type of the set TypeOK draws it from.
func (s *Spec) types() {
	tr := s.tr
	d := tr.defs[s.o.TypeOK]
	if d == nil {
		tr.refuse(tlacheck.Pos{}, "no definition %s (the variables' types are read from it)", s.o.TypeOK)
	}
	for _, c := range conjuncts(d.Body) {
		if c.Kind == tlacheck.NOp && c.Name == "\\in" && c.Args[0].Kind == tlacheck.NIdent {
			name := c.Args[0].Name
			if t, ok := tr.vars[name]; ok && t == nil {
				set := tr.set(c.Args[1], ctx{})
				if set.t.elem == nil || !set.t.elem.complete() {
					tr.refuse(c.Pos, "the type of %s cannot be read from %s", name, s.o.TypeOK)
				}
				tr.vars[name] = set.t.elem
			}
		}
	}
	for _, v := range tr.mod.Variables {
		if tr.vars[v.Name] == nil {
			tr.refuse(v.Pos, "variable %s has no conjunct %s \\in S in %s", v.Name, v.Name, s.o.TypeOK)
		}
	}
	tr.memo = map[memoKey]val{} // nothing translated before the types were known is kept
}

// split lists the conjuncts of IndInv and the properties.
func (s *Spec) split() {
	tr := s.tr
	d := tr.defs[s.o.IndInv]
	if d == nil {
		tr.refuse(tlacheck.Pos{}, "no definition %s", s.o.IndInv)
	}
	s.Conjuncts = s.names(s.o.IndInv, nil)
	seen := map[string]bool{}
	for _, p := range s.o.Props {
		if tr.defs[p] == nil {
			tr.refuse(tlacheck.Pos{}, "no definition %s (a property)", p)
		}
		for _, c := range s.names(p, nil) {
			if !seen[c.Name] {
				seen[c.Name] = true
				s.Props = append(s.Props, c)
			}
		}
	}
}

// names splits the definition name into named conjuncts: a body that is a
// conjunction of names is split further; unnamed conjuncts are name_1, name_2, ...
func (s *Spec) names(name string, out []Conjunct) []Conjunct {
	d := s.tr.defs[name]
	if d == nil || len(d.Params) > 0 {
		return append(out, Conjunct{Name: name, node: &tlacheck.Node{Kind: tlacheck.NIdent, Name: name}})
	}
	cs := conjuncts(d.Body)
	if len(cs) < 2 {
		return append(out, Conjunct{Name: name, node: &tlacheck.Node{Kind: tlacheck.NIdent, Name: name, Pos: d.Pos}})
	}
	allNames := true
	for _, c := range cs {
		if c.Kind != tlacheck.NIdent || s.tr.defs[c.Name] == nil {
			allNames = false
		}
	}
	if !allNames && name != s.o.IndInv {
		return append(out, Conjunct{Name: name, node: &tlacheck.Node{Kind: tlacheck.NIdent, Name: name, Pos: d.Pos}})
	}
	for i, c := range cs {
		if c.Kind == tlacheck.NIdent && s.tr.defs[c.Name] != nil {
			out = s.names(c.Name, out)
		} else {
			out = append(out, Conjunct{Name: fmt.Sprintf("%s_%d", name, i+1), node: c})
		}
	}
	return out
}

// actions lists the disjuncts of Next, their parameters skolemized.
func (s *Spec) actions() {
	tr := s.tr
	d := tr.defs[s.o.Next]
	if d == nil {
		tr.refuse(tlacheck.Pos{}, "no definition %s", s.o.Next)
	}
	items := []*tlacheck.Node{d.Body}
	if d.Body.Kind == tlacheck.NOr {
		items = d.Body.Args
	}
	used := map[string]int{}
	for i, it := range items {
		a := &Action{pos: it.Pos}
		core := it
		var e *env
		for core.Kind == tlacheck.NQuant && core.Name == "\\E" {
			for _, b := range core.Binds {
				if b.Tuple {
					tr.refuse(b.Pos, "a tuple pattern in Next's \\E")
				}
				for _, nm := range b.Names {
					set := tr.set(b.Set, ctx{env: e})
					if set.t.elem == nil || !set.t.elem.complete() || set.t.elem.k == kSet || set.t.elem.k == kFun {
						tr.refuse(b.Pos, "an action parameter %s that is not a scalar", nm)
					}
					a.Params = append(a.Params, Param{Name: nm, t: set.t.elem, set: set, setNode: b.Set})
					e = e.bind(nm, val{}) // placeholder, replaced below
				}
			}
			core = core.Args[0]
		}
		a.Name = fmt.Sprintf("%s_%d", s.o.Next, i+1)
		if core.Kind == tlacheck.NApply || core.Kind == tlacheck.NIdent {
			if _, ok := tr.defs[core.Name]; ok {
				a.Name = core.Name
				a.Args = []string{}
				for _, arg := range core.Args {
					if arg.Kind != tlacheck.NIdent {
						a.Args = nil
						break
					}
					a.Args = append(a.Args, arg.Name)
				}
			}
		}
		if used[a.Name]++; used[a.Name] > 1 {
			a.Name = fmt.Sprintf("%s_%d", a.Name, used[a.Name])
		}
		for j := range a.Params {
			a.Params[j].Sym = a.Name + "!" + a.Params[j].Name
		}
		a.node = core
		s.checkAssigns(a)
		s.Actions = append(s.Actions, a)
	}
}

// checkAssigns refuses an action that leaves a primed variable unconstrained on
// some branch: in TLA+ that variable's next value is anything, which an SMT variable
// of the variable's type would wrongly restrict.
func (s *Spec) checkAssigns(a *Action) {
	got := s.assigned(a.node, map[string]bool{})
	for _, v := range s.Vars {
		if !got[v] {
			s.tr.refuse(a.pos, "action %s does not determine %s' on every branch (x' = e or UNCHANGED x)", a.Name, v)
		}
	}
}

func (s *Spec) assigned(n *tlacheck.Node, local map[string]bool) map[string]bool {
	tr := s.tr
	out := map[string]bool{}
	inter := func(parts ...*tlacheck.Node) {
		for i, p := range parts {
			g := s.assigned(p, local)
			if i == 0 {
				out = g
				continue
			}
			for k := range out {
				if !g[k] {
					delete(out, k)
				}
			}
		}
	}
	switch n.Kind {
	case tlacheck.NAnd:
		for _, a := range n.Args {
			for k := range s.assigned(a, local) {
				out[k] = true
			}
		}
	case tlacheck.NOr:
		inter(n.Args...)
	case tlacheck.NIf:
		inter(n.Args[1], n.Args[2])
	case tlacheck.NCase:
		var parts []*tlacheck.Node
		for _, arm := range n.Arms {
			parts = append(parts, arm.Val)
		}
		if n.Other != nil {
			parts = append(parts, n.Other)
		}
		inter(parts...)
	case tlacheck.NQuant:
		return s.assigned(n.Args[0], local)
	case tlacheck.NLet:
		inner := map[string]bool{}
		for k := range local {
			inner[k] = true
		}
		for _, d := range n.Defs {
			inner[d.Name] = true
		}
		return s.assigned(n.Args[0], inner)
	case tlacheck.NOp:
		switch n.Name {
		case "=", "\\in":
			l := n.Args[0]
			if l.Kind == tlacheck.NOp && l.Name == "'" && l.Args[0].Kind == tlacheck.NIdent {
				if _, ok := tr.vars[l.Args[0].Name]; ok {
					out[l.Args[0].Name] = true
				}
			}
		case "UNCHANGED":
			for _, v := range tr.unchanged(n.Args[0], nil) {
				out[v] = true
			}
		}
	case tlacheck.NApply, tlacheck.NIdent:
		if d, ok := tr.defs[n.Name]; ok && !local[n.Name] {
			return s.assigned(d.Body, map[string]bool{})
		}
	}
	return out
}

// conjuncts is the items of a conjunction (n itself when it is not one).
func conjuncts(n *tlacheck.Node) []*tlacheck.Node {
	if n.Kind == tlacheck.NAnd {
		return n.Args
	}
	return []*tlacheck.Node{n}
}

func walk(n *tlacheck.Node, f func(*tlacheck.Node)) {
	if n == nil {
		return
	}
	f(n)
	for _, a := range n.Args {
		walk(a, f)
	}
	for _, b := range n.Binds {
		walk(b.Set, f)
	}
	for _, e := range n.Excepts {
		for _, p := range e.Path {
			walk(p.Index, f)
		}
		walk(e.Val, f)
	}
	for _, a := range n.Arms {
		walk(a.Cond, f)
		walk(a.Val, f)
	}
	walk(n.Other, f)
	for _, d := range n.Defs {
		walk(d.Body, f)
	}
}

// ---- obligations -----------------------------------------------------------

// protect runs f, turning a refusal into an error.
func (s *Spec) protect(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if rf, ok := r.(*Refusal); ok {
				err = rf
				return
			}
			panic(r)
		}
	}()
	f()
	return nil
}

// Action returns the action named name.
func (s *Spec) Action(name string) *Action {
	for _, a := range s.Actions {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// conclusion finds a conjunct or property by name, or any definition of the module.
func (s *Spec) conclusion(name string) (*tlacheck.Node, bool) {
	for _, c := range append(append([]Conjunct(nil), s.Conjuncts...), s.Props...) {
		if c.Name == name {
			return c.node, true
		}
	}
	if d, ok := s.tr.defs[name]; ok && len(d.Params) == 0 {
		return &tlacheck.Node{Kind: tlacheck.NIdent, Name: name, Pos: d.Pos}, true
	}
	return nil, false
}

// Obligations are all the proof obligations (expected unsat) and the vacuity
// checks (expected sat), in a fixed order.
func (s *Spec) Obligations() ([]*Obligation, error) {
	var out []*Obligation
	err := s.protect(func() {
		for _, c := range s.Conjuncts {
			out = append(out, s.build("init", "Init__"+c.Name, "unsat", nil, c.Name, c.node, false,
				fmt.Sprintf("%s => %s", s.o.Init, c.Name)))
		}
		for _, a := range s.Actions {
			for _, c := range s.Conjuncts {
				out = append(out, s.build("step", a.Name+"__"+c.Name, "unsat", a, c.Name, c.node, true,
					fmt.Sprintf("%s /\\ %s => %s'", s.o.IndInv, a.Name, c.Name)))
			}
		}
		for _, p := range s.Props {
			out = append(out, s.build("safety", s.o.IndInv+"__"+p.Name, "unsat", nil, p.Name, p.node, false,
				fmt.Sprintf("%s => %s", s.o.IndInv, p.Name)))
		}
		out = append(out, s.build("vacuity", "vacuity__"+s.o.Init, "sat", nil, "", nil, false,
			fmt.Sprintf("%s /\\ %s is satisfiable", s.o.Init, s.o.IndInv)))
		for _, a := range s.Actions {
			out = append(out, s.build("vacuity", "vacuity__"+a.Name, "sat", a, "", nil, false,
				fmt.Sprintf("%s is enabled in some %s state", a.Name, s.o.IndInv)))
		}
	})
	return out, err
}

// StepObligation is IndInv /\ action => conclusion' alone (conclusion any state
// predicate of the module), for the broken variants.
func (s *Spec) StepObligation(action, conclusion, expect string) (o *Obligation, err error) {
	a := s.Action(action)
	if a == nil {
		return nil, fmt.Errorf("%s: Next has no action %s", s.File, action)
	}
	n, ok := s.conclusion(conclusion)
	if !ok {
		return nil, fmt.Errorf("%s: no definition %s", s.File, conclusion)
	}
	err = s.protect(func() {
		o = s.build("broken", a.Name+"__"+conclusion, expect, a, conclusion, n, true,
			fmt.Sprintf("%s /\\ %s => %s'", s.o.IndInv, a.Name, conclusion))
	})
	return o, err
}

// build assembles one script. The hypotheses are the ASSUMEs and, but for the init
// group, IndInv; an action adds its parameters and its formula; the conclusion
// (primed when primed) is asserted negated. Vacuity checks assert no conclusion.
func (s *Spec) build(group, name, expect string, a *Action, concl string, cn *tlacheck.Node, primed bool, claim string) *Obligation {
	tr := s.tr
	var body strings.Builder
	hyp := func(comment, f string) { fmt.Fprintf(&body, "; %s\n(assert %s)\n", comment, f) }
	for i, f := range s.assumes {
		hyp(fmt.Sprintf("ASSUME %d", i+1), f)
	}
	for _, c := range s.IntConsts {
		if v, ok := s.o.Fixed[c]; ok {
			hyp(fmt.Sprintf("%s = %d, the finite instance's value", c, v), fmt.Sprintf("(= %s %s)", c, intLit(v)))
		}
	}
	if group == "init" || group == "vacuity" && a == nil {
		hyp(s.o.Init, tr.formula(&tlacheck.Node{Kind: tlacheck.NIdent, Name: s.o.Init}, ctx{}))
	}
	if group != "init" {
		hyp(s.o.IndInv, tr.formula(&tlacheck.Node{Kind: tlacheck.NIdent, Name: s.o.IndInv}, ctx{}))
	}
	var decls []string
	if a != nil {
		var e *env
		for _, p := range a.Params {
			decls = append(decls, fmt.Sprintf("(declare-const %s %s)", p.Sym, tr.smtSort(p.t)))
			x := tr.concrete(p.t, p.Sym)
			if !p.set.whole {
				hyp(p.Name+" \\in its set", tr.member(x, p.set, a.pos))
			}
			e = e.bind(p.Name, x)
		}
		hyp("action "+a.Name, tr.formula(a.node, ctx{env: e}))
	}
	if cn != nil {
		c := tr.formula(cn, ctx{primed: primed})
		label := concl
		if primed {
			label += "'"
		}
		hyp("negated conclusion: "+label, not(c))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; soundgate tlacheck/smt obligation %s (%s, from %s)\n", name, group, s.File)
	if expect == "unsat" {
		fmt.Fprintf(&b, "; claim: %s; the negation is asserted: unsat proves it\n", claim)
	} else {
		fmt.Fprintf(&b, "; claim: %s; expected sat\n", claim)
	}
	b.WriteString(s.preamble(a != nil || primed))
	for _, d := range decls {
		b.WriteString(d + "\n")
	}
	b.WriteString(body.String())
	b.WriteString("(check-sat)\n")
	return &Obligation{Name: name, Group: group, Expect: expect, Claim: claim, Action: a, Conclusion: concl, Primed: primed, Text: b.String(), spec: s}
}

// preamble declares the sorts, datatypes, constants and variables (primed ones too
// when primed).
func (s *Spec) preamble(primed bool) string {
	tr := s.tr
	var b strings.Builder
	b.WriteString("(set-logic ALL)\n")
	for _, so := range tr.sorts {
		if n, ok := tr.finite[so]; ok {
			var cs []string
			for i := 1; i <= n; i++ {
				cs = append(cs, fmt.Sprintf("(%s!%d)", so, i))
			}
			fmt.Fprintf(&b, "(declare-datatypes ((%s 0)) ((%s)))\n", so, strings.Join(cs, " "))
		} else {
			fmt.Fprintf(&b, "(declare-sort %s 0)\n", so)
		}
	}
	if len(tr.strs) > 0 {
		var cs []string
		for _, st := range tr.strs {
			cs = append(cs, "("+strSym(st)+")")
		}
		fmt.Fprintf(&b, "(declare-datatypes ((Str 0)) ((%s)))\n", strings.Join(cs, " "))
	}
	// Variables' sorts first, so that every record type is registered.
	var vdecls []string
	for _, v := range tr.order {
		vdecls = append(vdecls, fmt.Sprintf("(declare-const %s %s)", v, tr.smtSort(tr.vars[v])))
		if primed {
			vdecls = append(vdecls, fmt.Sprintf("(declare-const |%s'| %s)", v, tr.smtSort(tr.vars[v])))
		}
	}
	for _, r := range tr.recs {
		name := tr.recName(r)
		var fs []string
		for i, f := range r.fields {
			fs = append(fs, fmt.Sprintf("(%s_%s %s)", name, f, tr.smtSort(r.ftys[i])))
		}
		fmt.Fprintf(&b, "(declare-datatypes ((%s 0)) (((mk_%s %s))))\n", name, name, strings.Join(fs, " "))
	}
	for _, c := range s.IntConsts {
		fmt.Fprintf(&b, "(declare-const %s Int)\n", c)
	}
	for _, d := range vdecls {
		b.WriteString(d + "\n")
	}
	for _, ca := range tr.consts2 {
		fmt.Fprintf(&b, "(declare-const %s %s)\n", ca.name, ca.sort)
		for _, p := range ca.pins {
			fmt.Fprintf(&b, "(assert %s)\n", p)
		}
	}
	return b.String()
}

// intLit is n as an SMT-LIB integer term.
func intLit(n int64) string {
	if n < 0 {
		return fmt.Sprintf("(- %d)", -n)
	}
	return fmt.Sprintf("%d", n)
}

// sortedStrings returns a sorted copy.
func sortedStrings(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}
