package tla

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
		if e, ok := err.(*Error); ok && e.File == "" {
			e.File = file
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

func (s *Spec) build() (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case parseError:
				err = e.err
			case evalPanic:
				err = e.err
			default:
				panic(r)
			}
		}
	}()
	mod, cfg := s.mod, s.Config
	for _, m := range mod.extends {
		if !stdModules[m] {
			return errAt(ErrUnsupported, Pos{}, "EXTENDS %s: only Naturals, Integers, Sequences, FiniteSets and TLC are supported", m)
		}
	}
	c := &compiler{mod: mod, defs: map[string]*opDef{}, consts: map[string]Value{}, substs: cfg.Substs, vars: map[string]int{}, atSlot: -1}
	s.comp = c
	declared := map[string]bool{}
	for _, k := range mod.constants {
		declared[k.name] = true
	}
	for _, d := range mod.defs {
		if _, dup := c.defs[d.name]; dup {
			return errAt(ErrSemantic, d.p, "%s is defined twice", d.name)
		}
		c.defs[d.name] = &opDef{name: d.name, pos: d.p, nparams: len(d.params), ast: d}
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
	for i, v := range mod.variables {
		if _, dup := c.vars[v.name]; dup {
			return errAt(ErrSemantic, v.p, "variable %s is declared twice", v.name)
		}
		c.vars[v.name] = i
		s.vars = append(s.vars, v.name)
	}
	c.varNames = s.vars
	// ASSUME
	for _, a := range mod.assumes {
		d := s.synth("ASSUME", a)
		ok, err := s.evalConst(d)
		if err != nil {
			return err
		}
		if !ok {
			return errAt(ErrAssume, a.at(), "ASSUME evaluates to FALSE")
		}
	}
	if cfg.Spec != "" {
		if err := s.fromSpecification(cfg.Spec); err != nil {
			return err
		}
	} else {
		if s.init, err = s.named(cfg.Init, "INIT"); err != nil {
			return err
		}
		if s.next, err = s.named(cfg.Next, "NEXT"); err != nil {
			return err
		}
	}
	for _, n := range cfg.Invariants {
		d, err := s.named(n, "INVARIANT")
		if err != nil {
			return err
		}
		if d.level == levelAction {
			return errAt(ErrUnsupported, d.pos, "INVARIANT %s is an action (contains primes); action properties are not supported", n)
		}
		s.invariants = append(s.invariants, d)
	}
	for _, n := range cfg.Constraints {
		d, err := s.named(n, "CONSTRAINT")
		if err != nil {
			return err
		}
		s.constraints = append(s.constraints, d)
	}
	if cfg.Symmetry != "" {
		if err := s.buildSymmetry(cfg.Symmetry); err != nil {
			return err
		}
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
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case parseError:
				err = e.err
			case evalPanic:
				err = e.err
			default:
				panic(r)
			}
		}
	}()
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
func (s *Spec) fromSpecification(name string) error {
	d := s.comp.defs[name]
	if d == nil {
		return errAt(ErrConfig, Pos{}, "SPECIFICATION %s: no such definition", name)
	}
	d.temporal = true
	var inits []expr
	var next expr
	var flatten func(e expr) error
	flatten = func(e expr) error {
		switch x := e.(type) {
		case *eJunction:
			if !x.and {
				return errAt(ErrUnsupported, x.p, "SPECIFICATION %s: a disjunction of temporal formulas is not supported", name)
			}
			for _, it := range x.items {
				if err := flatten(it); err != nil {
					return err
				}
			}
			return nil
		case *eFair:
			return nil
		case *eOp:
			if x.op == "[]" {
				if as, ok := x.args[0].(*eActSub); ok && !as.angle {
					if next != nil {
						return errAt(ErrUnsupported, x.p, "SPECIFICATION %s has two [][A]_v conjuncts", name)
					}
					next = as.act
					return nil
				}
			}
			if x.op == "[]" || x.op == "<>" {
				return errAt(ErrUnsupported, x.p, "SPECIFICATION %s: only Init /\\ [][Next]_vars (and WF_/SF_ fairness) is supported", name)
			}
		case *eIdent:
			if dd := s.comp.defs[x.name]; dd != nil && len(dd.ast.params) == 0 && isTemporalExpr(dd.ast.body) {
				return flatten(dd.ast.body)
			}
		}
		inits = append(inits, e)
		return nil
	}
	if err := flatten(d.ast.body); err != nil {
		return err
	}
	if next == nil {
		return errAt(ErrUnsupported, d.pos, "SPECIFICATION %s has no [][Next]_vars conjunct", name)
	}
	if len(inits) == 0 {
		return errAt(ErrUnsupported, d.pos, "SPECIFICATION %s has no initial predicate", name)
	}
	if id, ok := inits[0].(*eIdent); ok && len(inits) == 1 {
		dd, err := s.named(id.name, "SPECIFICATION initial predicate")
		if err != nil {
			return err
		}
		s.init = dd
	} else {
		s.init = s.synth("Init", &eJunction{p: inits[0].at(), and: true, items: inits})
	}
	if id, ok := next.(*eIdent); ok {
		dd, err := s.named(id.name, "SPECIFICATION next-state action")
		if err != nil {
			return err
		}
		s.next = dd
	} else {
		s.next = s.synth("Next", next)
	}
	return nil
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

func (s *Spec) buildSymmetry(name string) error {
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
