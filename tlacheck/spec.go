package tlacheck

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Spec is a TLA+ module bound to a model configuration, ready to be checked.
// A Spec is not safe for concurrent use.
type Spec struct {
	// Name is the module name.
	Name string
	// Config is the model configuration.
	Config *Config

	mod         *module
	comp        *compiler
	vars        []string // declaration order
	init, next  *opDef
	invariants  []*opDef
	constraints []*opDef
	symmetry    []map[*modelV]*modelV
	symProduct  *symProduct // symmetry as a product of full permutation groups, or nil (symsig.go)
}

// Load reads a TLA+ module and its .cfg file.
func Load(tlaPath, cfgPath string) (*Spec, error) {
	src, err := os.ReadFile(tlaPath)
	if err != nil {
		return nil, err
	}
	cfgSrc, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, err
	}
	return load(string(src), string(cfgSrc), filepath.Base(tlaPath), filepath.Base(cfgPath))
}

// LoadSource is Load from the texts of the module and the config.
func LoadSource(tlaSrc, cfgSrc string) (*Spec, error) {
	return load(tlaSrc, cfgSrc, "", "")
}

func load(tlaSrc, cfgSrc, tlaName, cfgName string) (*Spec, error) {
	name := func(err error, file string) error {
		switch e := err.(type) {
		case *Error:
			if e.File == "" {
				e.File = file
			}
		case *RecursionError:
			if e.File == "" {
				e.File = file
			}
		}
		return err
	}
	mod, err := parseModule(tlaSrc)
	if err != nil {
		return nil, name(err, tlaName)
	}
	cfg, err := ParseConfig(cfgSrc)
	if err != nil {
		return nil, name(err, cfgName)
	}
	s := &Spec{Name: mod.name, Config: cfg, mod: mod}
	if err := s.build(); err != nil {
		if e, ok := err.(*Error); ok && e.Kind == ErrConfig && e.Pos.Line == 0 {
			return nil, name(err, cfgName)
		}
		return nil, name(err, tlaName)
	}
	return s, nil
}

// build checks the module against the config and compiles what the checker runs:
// the initial predicate, the next-state action, invariants, constraints, symmetry.
func (s *Spec) build() (err error) {
	defer recoverCompile(&err)
	s.comp = &compiler{mod: s.mod, defs: map[string]*opDef{}, consts: map[string]Value{}, substs: s.Config.Substs, vars: map[string]int{}, atSlot: -1}
	steps := []func() error{
		s.checkExtends, s.declareDefinitions, s.bindConstants, s.declareVariables,
		s.checkAssumptions, s.bindBehaviour, s.bindProperties, s.buildSymmetry,
	}
	for _, step := range steps { // in this order, which decides the error reported first
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// recoverCompile turns a compiler or evaluator panic into *err; other panics propagate.
func recoverCompile(err *error) {
	if r := recover(); r != nil {
		switch e := r.(type) {
		case parseError:
			*err = e.err
		case evalPanic:
			*err = e.err
		default:
			panic(r)
		}
	}
}

// checkExtends rejects modules that EXTEND anything but the supported standard ones.
func (s *Spec) checkExtends() error {
	for _, m := range s.mod.extends {
		if !stdModules[m] {
			return errAt(ErrUnsupported, Pos{}, "EXTENDS %s: only Naturals, Integers, Sequences, FiniteSets and TLC are supported", m)
		}
	}
	return nil
}

// declareDefinitions registers every definition, uncompiled, under its name.
func (s *Spec) declareDefinitions() error {
	c := s.comp
	for _, d := range s.mod.defs {
		op := &opDef{name: d.name, pos: d.p, nparams: len(d.params), ast: d, recursive: d.recursive}
		if err := declareOnce(c.defs, ident{d.p, d.name}, op, "%s is defined twice"); err != nil {
			return err
		}
	}
	return nil
}

// declareOnce puts v in m under id's name, refusing a name declared before (twice
// formats the error from the name).
func declareOnce[V any](m map[string]V, id ident, v V, twice string) error {
	if _, dup := m[id.name]; dup {
		return errAt(ErrSemantic, id.p, twice, id.name)
	}
	m[id.name] = v
	return nil
}

// bindConstants gives each declared constant its config value or substitution,
// and checks that the config names only what the module declares.
func (s *Spec) bindConstants() error {
	c, cfg, mod := s.comp, s.Config, s.mod
	declared := map[string]bool{}
	for _, k := range mod.constants {
		declared[k.name] = true
	}
	for _, a := range cfg.Constants {
		if !declared[a.Name] && c.defs[a.Name] == nil {
			return errAt(ErrConfig, a.Pos, "CONSTANT %s is not declared in module %s", a.Name, mod.name)
		}
		c.consts[a.Name] = a.Value
	}
	for name, target := range cfg.Substs {
		if !declared[name] && c.defs[name] == nil {
			return errAt(ErrConfig, Pos{}, "%s <- %s: %s is not declared in module %s", name, target, name, mod.name)
		}
		if c.defs[target] == nil {
			return errAt(ErrConfig, Pos{}, "%s <- %s: no definition %s", name, target, target)
		}
	}
	for _, k := range mod.constants {
		if _, ok := c.consts[k.name]; !ok {
			if _, ok := cfg.Substs[k.name]; !ok {
				return errAt(ErrConfig, k.p, "constant %s has no value in the config", k.name)
			}
		}
	}
	return nil
}

// declareVariables numbers the variables in declaration order.
func (s *Spec) declareVariables() error {
	c := s.comp
	for i, v := range s.mod.variables {
		if err := declareOnce(c.vars, v, i, "variable %s is declared twice"); err != nil {
			return err
		}
		s.vars = append(s.vars, v.name)
	}
	c.varNames = s.vars
	return nil
}

// checkAssumptions evaluates every ASSUME on the config's constants.
func (s *Spec) checkAssumptions() error {
	for _, a := range s.mod.assumes {
		d := s.synth("ASSUME", a)
		ok, err := s.evalConst(d)
		if err != nil {
			return err
		}
		if !ok {
			return errAt(ErrAssume, a.at(), "ASSUME evaluates to FALSE")
		}
	}
	return nil
}

// bindBehaviour compiles the initial predicate and the next-state action, from
// SPECIFICATION or from INIT and NEXT.
func (s *Spec) bindBehaviour() (err error) {
	cfg := s.Config
	if cfg.Spec != "" {
		return s.fromSpecification(cfg.Spec)
	}
	if s.init, err = s.named(cfg.Init, "INIT"); err != nil {
		return err
	}
	s.next, err = s.named(cfg.Next, "NEXT")
	return err
}

// bindProperties compiles the invariants (which must be state predicates) and the
// state constraints.
func (s *Spec) bindProperties() error {
	for _, n := range s.Config.Invariants {
		d, err := s.named(n, "INVARIANT")
		if err != nil {
			return err
		}
		if d.level == levelAction {
			return errAt(ErrUnsupported, d.pos, "INVARIANT %s is an action (contains primes); action properties are not supported", n)
		}
		s.invariants = append(s.invariants, d)
	}
	for _, n := range s.Config.Constraints {
		d, err := s.named(n, "CONSTRAINT")
		if err != nil {
			return err
		}
		s.constraints = append(s.constraints, d)
	}
	return nil
}

// synth makes a compiled operator from an expression outside any definition.
func (s *Spec) synth(name string, e expr) *opDef {
	d := &opDef{name: name, pos: e.at(), ast: &def{p: e.at(), name: name, body: e}}
	s.comp.ensure(d)
	return d
}

func (s *Spec) named(name, what string) (*opDef, error) {
	d := s.comp.defs[name]
	if t, ok := s.comp.substs[name]; ok {
		d = s.comp.defs[t]
	}
	if d == nil {
		return nil, errAt(ErrConfig, Pos{}, "%s %s: no such definition in module %s", what, name, s.mod.name)
	}
	if len(d.ast.params) > 0 {
		return nil, errAt(ErrConfig, d.pos, "%s %s: the definition takes parameters", what, name)
	}
	if err := s.compile(d); err != nil {
		return nil, err
	}
	return d, nil
}

// compile compiles d, turning the compiler's panics into errors.
func (s *Spec) compile(d *opDef) (err error) {
	defer recoverCompile(&err)
	s.comp.ensure(d)
	return nil
}

func (s *Spec) evalConst(d *opDef) (ok bool, err error) {
	defer catch(&err)
	c := &ctx{frame: make([]Value, d.frameSize), vars: s.vars}
	return asBool(d.body.eval(c), d.pos, d.name), nil
}

// fromSpecification splits Spec == Init /\ [][Next]_vars /\ WF_vars(...) into the
// initial predicate and the next-state action; fairness conjuncts are ignored (they
// do not affect safety).
func (s *Spec) fromSpecification(name string) (err error) {
	d := s.comp.defs[name]
	if d == nil {
		return errAt(ErrConfig, Pos{}, "SPECIFICATION %s: no such definition", name)
	}
	d.temporal = true
	parts := &specParts{s: s, name: name}
	if err := parts.add(d.ast.body); err != nil {
		return err
	}
	if parts.next == nil {
		return errAt(ErrUnsupported, d.pos, "SPECIFICATION %s has no [][Next]_vars conjunct", name)
	}
	if len(parts.inits) == 0 {
		return errAt(ErrUnsupported, d.pos, "SPECIFICATION %s has no initial predicate", name)
	}
	var init expr = &eJunction{p: parts.inits[0].at(), and: true, items: parts.inits}
	if _, ok := parts.inits[0].(*eIdent); ok && len(parts.inits) == 1 {
		init = parts.inits[0]
	}
	if s.init, err = s.specOperator(init, "Init", "SPECIFICATION initial predicate"); err != nil {
		return err
	}
	s.next, err = s.specOperator(parts.next, "Next", "SPECIFICATION next-state action")
	return err
}

// specParts collects the conjuncts of a SPECIFICATION formula: the initial
// predicate's and the A of [][A]_v.
type specParts struct {
	s     *Spec
	name  string
	inits []expr
	next  expr
}

// add sorts the conjunct e, flattening conjunctions and temporal definitions.
func (sp *specParts) add(e expr) error {
	switch x := e.(type) {
	case *eJunction:
		if !x.and {
			return errAt(ErrUnsupported, x.p, "SPECIFICATION %s: a disjunction of temporal formulas is not supported", sp.name)
		}
		for _, it := range x.items {
			if err := sp.add(it); err != nil {
				return err
			}
		}
		return nil
	case *eFair:
		return nil
	case *eOp:
		if x.op == "[]" {
			if as, ok := x.args[0].(*eActSub); ok && !as.angle {
				if sp.next != nil {
					return errAt(ErrUnsupported, x.p, "SPECIFICATION %s has two [][A]_v conjuncts", sp.name)
				}
				sp.next = as.act
				return nil
			}
		}
		if x.op == "[]" || x.op == "<>" {
			return errAt(ErrUnsupported, x.p, "SPECIFICATION %s: only Init /\\ [][Next]_vars (and WF_/SF_ fairness) is supported", sp.name)
		}
	case *eIdent:
		if dd := sp.s.comp.defs[x.name]; dd != nil && len(dd.ast.params) == 0 && isTemporalExpr(dd.ast.body) {
			return sp.add(dd.ast.body)
		}
	}
	sp.inits = append(sp.inits, e)
	return nil
}

// specOperator compiles part of a SPECIFICATION: the definition it names, or else
// the expression itself as an operator called synthName.
func (s *Spec) specOperator(e expr, synthName, what string) (*opDef, error) {
	if id, ok := e.(*eIdent); ok {
		return s.named(id.name, what)
	}
	return s.synth(synthName, e), nil
}

func isTemporalExpr(e expr) bool {
	switch x := e.(type) {
	case *eFair:
		return true
	case *eOp:
		return x.op == "[]" || x.op == "<>"
	case *eJunction:
		for _, it := range x.items {
			if isTemporalExpr(it) {
				return true
			}
		}
	}
	return false
}

// buildSymmetry compiles the config's SYMMETRY, if any, into the permutations
// other than the identity of the group it generates, as TLC does (symsig.go).
func (s *Spec) buildSymmetry() error {
	name := s.Config.Symmetry
	if name == "" {
		return nil
	}
	d, err := s.named(name, "SYMMETRY")
	if err != nil {
		return err
	}
	var v Value
	err = func() (err error) {
		defer catch(&err)
		c := &ctx{frame: make([]Value, d.frameSize), vars: s.vars}
		v = d.body.eval(c)
		return nil
	}()
	if err != nil {
		return err
	}
	set, ok := norm(v).(*setV)
	if !ok {
		return errAt(ErrConfig, d.pos, "SYMMETRY %s must be a set of permutations, got %s", name, kindErr(v))
	}
	for _, p := range set.elems {
		f, ok := p.(*funcV)
		if !ok {
			return errAt(ErrConfig, d.pos, "SYMMETRY %s: element %s is not a function", name, shortString(p))
		}
		m := map[*modelV]*modelV{}
		identity := true
		for i, k := range f.keys {
			a, ok1 := k.(*modelV)
			b, ok2 := f.vals[i].(*modelV)
			if !ok1 || !ok2 {
				return errAt(ErrConfig, d.pos, "SYMMETRY %s: permutations must map model values to model values, got %s", name, shortString(p))
			}
			m[a] = b
			if a != b {
				identity = false
			}
		}
		if !identity {
			s.symmetry = append(s.symmetry, m)
		}
	}
	s.symmetry, s.symProduct, err = symmetryGroup(s.symmetry)
	if err != nil {
		return errAt(ErrConfig, d.pos, "SYMMETRY %s: %v", name, err)
	}
	return nil
}

// Vars returns the spec's variables sorted by name.
func (s *Spec) Vars() []string {
	out := append([]string(nil), s.vars...)
	sort.Strings(out)
	return out
}

// stateRecord renders a state as a record value with variables as fields.
func (s *Spec) stateRecord(st []Value) Value {
	keys := make([]Value, len(st))
	vals := make([]Value, len(st))
	for i, v := range st {
		keys[i] = Str(s.vars[i])
		vals[i] = v
	}
	return mkFunc(keys, vals)
}

// formatState prints a state TLC-style: one /\ var = value line per variable.
func (s *Spec) formatState(st []Value) string {
	var b strings.Builder
	order := make([]int, len(s.vars))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return s.vars[order[i]] < s.vars[order[j]] })
	for _, i := range order {
		fmt.Fprintf(&b, "/\\ %s = %s\n", s.vars[i], st[i].String())
	}
	return b.String()
}
