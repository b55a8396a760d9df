package tlacheck

import (
	"sort"
	"sync/atomic"
)

// Levels of expressions: constant, state (reads variables), action (reads primes).
const (
	levelConst  = 0
	levelState  = 1
	levelAction = 2
)

// opDef is a compiled top-level operator definition.
type opDef struct {
	name      string
	pos       Pos
	nparams   int
	frameSize int
	body      node
	level     int
	ownPrime  bool // its own body contains a prime or UNCHANGED (action label)
	recursive bool // declared RECURSIVE: its calls are counted (MaxRecursionDepth)
	ast       *def
	compiled  bool
	compiling bool
	cached    atomic.Pointer[Value] // a constant's value once evaluated (workers share it)
	temporal  bool                  // body mentions [] or <> or WF_/SF_: only usable as SPECIFICATION
}

// letOp is a LET definition with parameters; it lives in its enclosing frame.
type letOp struct {
	name   string
	params []int // slots
	body   node
	level  int
}

type scopeEntry struct {
	slot    int
	letVal  *letValNode // zero-arity LET definition
	letOp   *letOp
	isBound bool
}

type scope struct {
	names  map[string]scopeEntry
	parent *scope
}

func (s *scope) lookup(name string) (scopeEntry, bool) {
	for ; s != nil; s = s.parent {
		if e, ok := s.names[name]; ok {
			return e, true
		}
	}
	return scopeEntry{}, false
}

type compiler struct {
	mod      *module
	defs     map[string]*opDef
	consts   map[string]Value
	substs   map[string]string // constant or operator <- definition
	vars     map[string]int
	varNames []string
	builtins map[string]bool

	// per top-level definition
	cur      *opDef
	nslots   int
	ownPrime bool
	atSlot   int // slot of @ inside EXCEPT, -1 outside
	primed   int // >0 while compiling inside a prime
	slotRefs int // references to bound names compiled so far (constant folding)
}

var stdModules = map[string]bool{"Naturals": true, "Integers": true, "Sequences": true, "FiniteSets": true, "TLC": true}

func (c *compiler) fail(kind error, p Pos, format string, args ...any) {
	panic(parseError{errAt(kind, p, format, args...)})
}

func (c *compiler) def(name string) *opDef {
	if target, ok := c.substs[name]; ok {
		name = target
	}
	d := c.defs[name]
	if d == nil {
		return nil
	}
	c.ensure(d)
	return d
}

// ensure compiles d (and, recursively, what it uses) if not done yet.
func (c *compiler) ensure(d *opDef) {
	if d.compiled || d.compiling {
		return
	}
	saved := *c
	d.compiling = true
	c.cur = d
	c.nslots = len(d.ast.params)
	c.ownPrime = false
	c.atSlot = -1
	c.primed = 0
	sc := &scope{names: map[string]scopeEntry{}}
	for i, p := range d.ast.params {
		sc.names[p] = scopeEntry{slot: i, isBound: true}
	}
	var body node
	var lvl int
	if d.ast.fnBinds != nil {
		body, lvl = c.funcCtor(&eFuncCtor{p: d.ast.p, binds: d.ast.fnBinds, body: d.ast.body}, sc)
	} else {
		body, lvl = c.expr(d.ast.body, sc)
	}
	d.body, d.level = body, lvl
	d.frameSize = c.nslots
	d.ownPrime = c.ownPrime
	d.compiled, d.compiling = true, false
	c.cur, c.nslots, c.ownPrime, c.atSlot, c.primed = saved.cur, saved.nslots, saved.ownPrime, saved.atSlot, saved.primed
}

func (c *compiler) newSlot() int {
	c.nslots++
	return c.nslots - 1
}

func maxl(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func (c *compiler) exprs(es []expr, sc *scope) ([]node, int) {
	out := make([]node, len(es))
	lvl := 0
	for i, e := range es {
		var l int
		out[i], l = c.expr(e, sc)
		lvl = maxl(lvl, l)
	}
	return out, lvl
}

func (c *compiler) binds(bs []binding, sc *scope) ([]cbind, *scope, int) {
	inner := &scope{names: map[string]scopeEntry{}, parent: sc}
	out := make([]cbind, len(bs))
	lvl := 0
	for i, b := range bs {
		set, l := c.expr(b.set, sc)
		lvl = maxl(lvl, l)
		cb := cbind{set: set, tuple: b.tuple, p: b.p}
		for _, n := range b.names {
			s := c.newSlot()
			cb.slots = append(cb.slots, s)
			inner.names[n] = scopeEntry{slot: s, isBound: true}
		}
		out[i] = cb
	}
	return out, inner, lvl
}

func (c *compiler) funcCtor(e *eFuncCtor, sc *scope) (node, int) {
	bs, inner, l1 := c.binds(e.binds, sc)
	if c.cur != nil && c.cur.ast.fnBinds != nil && c.cur.ast.body == e.body {
		// f[x \in S] == body: a reference to f inside body is recursion.
		inner.names[c.cur.name] = scopeEntry{slot: -2}
	}
	body, l2 := c.expr(e.body, inner)
	return &funcCtorNode{binds: bs, body: body, p: e.p}, maxl(l1, l2)
}

// expr compiles an expression in scope sc; it returns the node and its level.
// A constant expression that refers to no bound name is evaluated once, here.
func (c *compiler) expr(e expr, sc *scope) (node, int) {
	refs := c.slotRefs
	n, lvl := c.expr0(e, sc)
	if lvl != levelConst || c.slotRefs != refs {
		return n, lvl
	}
	switch n.(type) {
	case *constNode, *slotNode:
		return n, lvl
	}
	if v, ok := foldConst(n, c.nslots); ok {
		return &constNode{v}, lvl
	}
	return n, lvl
}

// foldConst evaluates a closed constant expression; ok is false if it fails (the
// error then surfaces, with its position, when the expression is evaluated).
func foldConst(n node, frameSize int) (v Value, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isEval := r.(evalPanic); !isEval {
				panic(r)
			}
			v, ok = nil, false
		}
	}()
	return n.eval(&ctx{frame: make([]Value, frameSize)}), true
}

// expr0 compiles e by its kind; expr wraps it with constant folding.
func (c *compiler) expr0(e expr, sc *scope) (node, int) {
	switch e := e.(type) {
	case *eNum:
		return &constNode{mkInt(e.n)}, levelConst
	case *eStr:
		return &constNode{Str(e.s)}, levelConst
	case *eBool:
		return &constNode{Bool(e.b)}, levelConst
	case *eIdent:
		return c.ident(e.name, nil, e.p, sc)
	case *eApply:
		return c.ident(e.name, e.args, e.p, sc)
	case *eAt:
		return c.at(e)
	case *eJunction:
		return c.junction(e, sc)
	case *eOp:
		return c.op(e, sc)
	case *eQuant:
		return c.quant(e, sc)
	case *eSetEnum:
		elems, l := c.exprs(e.elems, sc)
		return &setEnumNode{elems: elems}, l
	case *eSetFilter:
		return c.setFilter(e, sc)
	case *eSetMap:
		return c.setMap(e, sc)
	case *eFuncCtor:
		return c.funcCtor(e, sc)
	case *eFuncApp:
		return c.funcApp(e, sc)
	case *eField:
		r, l := c.expr(e.rec, sc)
		return &fieldNode{rec: r, name: e.name, p: e.p}, l
	case *eRecord:
		vals, l := c.exprs(e.vals, sc)
		return c.record(e.names, vals, e.p, false), l
	case *eRecSet:
		sets, l := c.exprs(e.sets, sc)
		return c.record(e.names, sets, e.p, true), l
	case *eFuncSet:
		d, l1 := c.expr(e.dom, sc)
		r, l2 := c.expr(e.rng, sc)
		return &funcSetNode{dom: d, rng: r}, maxl(l1, l2)
	case *eExcept:
		return c.except(e, sc)
	case *eTuple:
		elems, l := c.exprs(e.elems, sc)
		return &tupleNode{elems: elems}, l
	case *eIf:
		return c.ifThen(e, sc)
	case *eCase:
		return c.caseArms(e, sc)
	case *eLet:
		return c.let(e, sc)
	case *eActSub:
		return c.actSub(e, sc)
	case *eFair:
		c.fail(ErrUnsupported, e.p, "fairness (WF_/SF_) is only accepted as a conjunct of the SPECIFICATION formula")
	case *eCross:
		sets, l := c.exprs(e.sets, sc)
		return &crossNode{sets: sets}, l
	}
	c.fail(ErrSemantic, e.at(), "cannot compile expression")
	return nil, 0
}

// at compiles @, the slot of the value being replaced in an EXCEPT update.
func (c *compiler) at(e *eAt) (node, int) {
	if c.atSlot < 0 {
		c.fail(ErrSemantic, e.p, "@ used outside an EXCEPT")
	}
	c.slotRefs++
	return &slotNode{c.atSlot}, levelConst
}

func (c *compiler) junction(e *eJunction, sc *scope) (node, int) {
	items, l := c.exprs(e.items, sc)
	if e.and {
		return &andNode{items: items, p: e.p}, l
	}
	return &orNode{items: items, p: e.p}, l
}

func (c *compiler) setFilter(e *eSetFilter, sc *scope) (node, int) {
	bs, inner, l1 := c.binds([]binding{e.bind}, sc)
	pred, l2 := c.expr(e.pred, inner)
	return &setFilterNode{bind: bs[0], pred: pred, p: e.p}, maxl(l1, l2)
}

func (c *compiler) setMap(e *eSetMap, sc *scope) (node, int) {
	bs, inner, l1 := c.binds(e.binds, sc)
	body, l2 := c.expr(e.body, inner)
	return &setMapNode{binds: bs, body: body, p: e.p}, maxl(l1, l2)
}

func (c *compiler) ifThen(e *eIf, sc *scope) (node, int) {
	cn, l1 := c.expr(e.c, sc)
	t, l2 := c.expr(e.t, sc)
	f, l3 := c.expr(e.e, sc)
	return &ifNode{c: cn, t: t, e: f, p: e.p}, maxl(l1, maxl(l2, l3))
}

func (c *compiler) quant(e *eQuant, sc *scope) (node, int) {
	bs, inner, l1 := c.binds(e.binds, sc)
	body, l2 := c.expr(e.body, inner)
	switch e.kind {
	case "\\A":
		return &quantNode{all: true, binds: bs, body: body, p: e.p}, maxl(l1, l2)
	case "\\E":
		return &quantNode{binds: bs, body: body, p: e.p}, maxl(l1, l2)
	}
	return &chooseNode{binds: bs, body: body, p: e.p}, maxl(l1, l2)
}

// funcApp compiles f[a] and f[a, b] (the application to the tuple <<a, b>>).
func (c *compiler) funcApp(e *eFuncApp, sc *scope) (node, int) {
	f, l1 := c.expr(e.f, sc)
	var arg node
	var l2 int
	if len(e.args) == 1 {
		arg, l2 = c.expr(e.args[0], sc)
	} else {
		args, l := c.exprs(e.args, sc)
		arg, l2 = &tupleNode{elems: args}, l
	}
	return &applyNode{f: f, arg: arg, p: e.p}, maxl(l1, l2)
}

// except compiles [f EXCEPT ...]; each update's value sees @ in a slot of its own.
func (c *compiler) except(e *eExcept, sc *scope) (node, int) {
	f, lvl := c.expr(e.f, sc)
	n := &exceptNode{f: f, p: e.p}
	savedAt := c.atSlot
	for _, s := range e.specs {
		var cs cexcept
		for _, pe := range s.path {
			if pe.idx == nil {
				cs.path = append(cs.path, &constNode{Str(pe.field)})
				continue
			}
			ix, l := c.expr(pe.idx, sc)
			lvl = maxl(lvl, l)
			cs.path = append(cs.path, ix)
		}
		cs.atSlot = c.newSlot()
		c.atSlot = cs.atSlot
		var l int
		cs.val, l = c.expr(s.val, sc)
		lvl = maxl(lvl, l)
		c.atSlot = savedAt
		n.specs = append(n.specs, cs)
	}
	return n, lvl
}

func (c *compiler) caseArms(e *eCase, sc *scope) (node, int) {
	n := &caseNode{p: e.p}
	lvl := 0
	for _, a := range e.arms {
		cn, l1 := c.expr(a.cond, sc)
		v, l2 := c.expr(a.val, sc)
		n.conds = append(n.conds, cn)
		n.vals = append(n.vals, v)
		lvl = maxl(lvl, maxl(l1, l2))
	}
	if e.other != nil {
		var l int
		n.other, l = c.expr(e.other, sc)
		lvl = maxl(lvl, l)
	}
	return n, lvl
}

// actSub compiles [A]_v and <<A>>_v, action-level whatever A is.
func (c *compiler) actSub(e *eActSub, sc *scope) (node, int) {
	act, l1 := c.expr(e.act, sc)
	sub, _ := c.expr(e.sub, sc)
	c.ownPrime = true
	return &actSubNode{angle: e.angle, act: act, sub: sub, vars: c.varList(sub), p: e.p}, maxl(l1, levelAction)
}

func (c *compiler) record(names []string, vals []node, p Pos, isSet bool) node {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return names[idx[i]] < names[idx[j]] })
	sn := make([]string, len(names))
	sv := make([]node, len(names))
	for i, j := range idx {
		sn[i], sv[i] = names[j], vals[j]
		if i > 0 && sn[i] == sn[i-1] {
			c.fail(ErrSemantic, p, "field %s appears twice", sn[i])
		}
	}
	if isSet {
		return &recSetNode{names: sn, sets: sv}
	}
	keys := make([]Value, len(sn))
	for i, n := range sn {
		keys[i] = Str(n)
	}
	return &recordNode{keys: keys, vals: sv}
}

// varList expands a subscript or UNCHANGED argument into variable indices, when it
// is a variable, a tuple of them, or a definition that is one; nil otherwise.
func (c *compiler) varList(n node) []int {
	switch x := n.(type) {
	case *varNode:
		return []int{x.idx}
	case *tupleNode:
		var out []int
		for _, e := range x.elems {
			vs := c.varList(e)
			if vs == nil {
				return nil
			}
			out = append(out, vs...)
		}
		if out == nil {
			return []int{}
		}
		return out
	case *callNode:
		if len(x.args) == 0 && x.def.compiled {
			return c.varList(x.def.body)
		}
	}
	return nil
}

func (c *compiler) let(e *eLet, sc *scope) (node, int) {
	inner := &scope{names: map[string]scopeEntry{}, parent: sc}
	n := &letNode{}
	for _, d := range e.defs {
		if d.fnBinds != nil {
			slot := c.newSlot()
			lv := &letValNode{slot: slot}
			body, l := c.funcCtor(&eFuncCtor{p: d.p, binds: d.fnBinds, body: d.body}, inner)
			lv.body, lv.level = body, l
			inner.names[d.name] = scopeEntry{letVal: lv}
			n.reset = append(n.reset, slot)
			continue
		}
		if len(d.params) == 0 {
			slot := c.newSlot()
			lv := &letValNode{slot: slot}
			lv.body, lv.level = c.expr(d.body, inner)
			inner.names[d.name] = scopeEntry{letVal: lv}
			n.reset = append(n.reset, slot)
			continue
		}
		op := &letOp{name: d.name}
		opScope := &scope{names: map[string]scopeEntry{}, parent: inner}
		for _, p := range d.params {
			s := c.newSlot()
			op.params = append(op.params, s)
			opScope.names[p] = scopeEntry{slot: s, isBound: true}
		}
		op.body, op.level = c.expr(d.body, opScope)
		inner.names[d.name] = scopeEntry{letOp: op}
	}
	body, l := c.expr(e.body, inner)
	n.body = body
	return n, l
}

func (c *compiler) op(e *eOp, sc *scope) (node, int) {
	switch e.op {
	case "'":
		c.primed++
		a, _ := c.expr(e.args[0], sc)
		c.primed--
		c.ownPrime = true
		if v, ok := a.(*varNode); ok {
			return &primeVarNode{idx: v.idx, name: v.name, p: e.p}, levelAction
		}
		return &primeNode{e: a, p: e.p}, levelAction
	case "UNCHANGED":
		a, _ := c.expr(e.args[0], sc)
		c.ownPrime = true
		return &unchangedNode{sub: a, vars: c.varList(a), p: e.p}, levelAction
	case "[]", "<>":
		c.fail(ErrUnsupported, e.p, "temporal operator %s is only accepted in the SPECIFICATION formula (Init /\\ [][Next]_vars)", e.op)
	case "ENABLED":
		c.fail(ErrUnsupported, e.p, "ENABLED is not supported")
	case "/":
		c.fail(ErrUnsupported, e.p, "real division / is not supported (Reals); use \\div")
	}
	args, lvl := c.exprs(e.args, sc)
	if m := opModule[e.op]; m != "" {
		c.need(m, e.op, e.p)
	}
	if len(args) == 1 {
		code, ok := unaryCodes[e.op]
		if !ok {
			c.fail(ErrUnsupported, e.p, "prefix operator %s is not supported", e.op)
		}
		return &unNode{code: code, a: args[0], p: e.p}, lvl
	}
	code, ok := binCodes[e.op]
	if !ok {
		c.fail(ErrUnsupported, e.p, "operator %s is not supported", e.op)
	}
	return &binNode{code: code, a: args[0], b: args[1], p: e.p}, lvl
}

// ident resolves a name (with arguments, if any).
func (c *compiler) ident(name string, args []expr, p Pos, sc *scope) (node, int) {
	if en, ok := sc.lookup(name); ok {
		c.slotRefs++
		switch {
		case en.slot == -2:
			c.fail(ErrUnsupported, p, "recursive function definition %s[...] is not supported", name)
		case en.letVal != nil:
			if args != nil {
				c.fail(ErrSemantic, p, "%s takes no arguments", name)
			}
			return en.letVal, en.letVal.level
		case en.letOp != nil:
			if len(args) != len(en.letOp.params) {
				c.fail(ErrSemantic, p, "%s takes %d arguments, got %d", name, len(en.letOp.params), len(args))
			}
			an, l := c.exprs(args, sc)
			return &letCallNode{op: en.letOp, args: an, p: p}, maxl(l, en.letOp.level)
		default:
			if args != nil {
				c.fail(ErrSemantic, p, "%s is not an operator", name)
			}
			return &slotNode{en.slot}, levelConst
		}
	}
	if v, ok := c.consts[name]; ok {
		if args != nil {
			c.fail(ErrSemantic, p, "constant %s takes no arguments", name)
		}
		return &constNode{v}, levelConst
	}
	if d := c.def(name); d != nil {
		if len(args) != len(d.ast.params) {
			c.fail(ErrSemantic, p, "%s takes %d arguments, got %d", name, len(d.ast.params), len(args))
		}
		if d.compiling && !d.ast.recursive && d.ast.fnBinds == nil {
			c.fail(ErrSemantic, p, "%s is used in its own definition; declare it RECURSIVE", name)
		}
		if d.compiling && d.ast.fnBinds != nil {
			c.fail(ErrUnsupported, p, "recursive function definition %s[...] is not supported", name)
		}
		an, l := c.exprs(args, sc)
		lvl := d.level
		if d.compiling {
			lvl = levelAction // unknown yet: be conservative for recursive operators
		}
		if d.temporal {
			c.fail(ErrUnsupported, p, "%s is a temporal formula; it can only be the SPECIFICATION", name)
		}
		return &callNode{def: d, args: an, p: p}, maxl(l, lvl)
	}
	if i, ok := c.vars[name]; ok {
		if args != nil {
			c.fail(ErrSemantic, p, "variable %s takes no arguments", name)
		}
		return &varNode{idx: i, name: name}, levelState
	}
	return c.builtin(name, args, p, sc)
}

func (c *compiler) builtin(name string, args []expr, p Pos, sc *scope) (node, int) {
	arity, ok := builtinArity[name]
	if !ok {
		if unsupportedBuiltins[name] {
			c.fail(ErrUnsupported, p, "standard operator %s is not supported", name)
		}
		for _, cn := range c.mod.constants {
			if cn.name == name {
				c.fail(ErrConfig, p, "constant %s has no value in the config", name)
			}
		}
		c.fail(ErrSemantic, p, "unknown name %s", name)
	}
	if len(args) != arity {
		c.fail(ErrSemantic, p, "%s takes %d arguments, got %d", name, arity, len(args))
	}
	if m := opModule[name]; m != "" {
		c.need(m, name, p)
	}
	switch name {
	case "Nat", "Int", "STRING":
		return &constNode{&infSetV{name: name}}, levelConst
	case "BOOLEAN":
		return &constNode{&setV{elems: []Value{falseV, trueV}}}, levelConst
	}
	an, l := c.exprs(args, sc)
	return &builtinNode{name: name, fn: builtinFns[name], args: an, p: p}, l
}

var builtinArity = map[string]int{
	"Nat": 0, "Int": 0, "STRING": 0, "BOOLEAN": 0,
	"Len": 1, "Append": 2, "Head": 1, "Tail": 1, "SubSeq": 3, "Seq": 1,
	"Cardinality": 1, "IsFiniteSet": 1, "Permutations": 1,
	"Print": 2, "PrintT": 1, "Assert": 2, "ToString": 1,
}

var unsupportedBuiltins = map[string]bool{
	"SelectSeq": true, "RandomElement": true, "TLCGet": true, "TLCSet": true, "JavaTime": true,
	"Any": true, "TLCEval": true, "SortSeq": true, "Real": true, "Infinity": true,
	"TLCToString": true, "Seq_": false,
}

// opModule names the standard module that defines an operator.
var opModule = map[string]string{
	"Nat": "Naturals", "Int": "Integers", "neg": "Integers",
	"+": "Naturals", "-": "Naturals", "*": "Naturals", "^": "Naturals", "<": "Naturals",
	">": "Naturals", "<=": "Naturals", ">=": "Naturals", "\\div": "Naturals", "%": "Naturals",
	"..":  "Naturals",
	"Len": "Sequences", "Append": "Sequences", "Head": "Sequences", "Tail": "Sequences",
	"SubSeq": "Sequences", "Seq": "Sequences", "\\o": "Sequences",
	"Cardinality": "FiniteSets", "IsFiniteSet": "FiniteSets",
	"Permutations": "TLC", "Print": "TLC", "PrintT": "TLC", "Assert": "TLC", "ToString": "TLC",
	":>": "TLC", "@@": "TLC",
}

// moduleImplies lists what each standard module brings with it (its own EXTENDS).
var moduleImplies = map[string][]string{
	"Naturals":   {"Naturals"},
	"Integers":   {"Integers", "Naturals"},
	"Sequences":  {"Sequences", "Naturals"},
	"FiniteSets": {"FiniteSets", "Sequences", "Naturals"},
	"TLC":        {"TLC", "Naturals", "Sequences", "FiniteSets"},
}

// need fails unless the module EXTENDS one that defines op.
func (c *compiler) need(m, op string, p Pos) {
	for _, e := range c.mod.extends {
		for _, have := range moduleImplies[e] {
			if have == m {
				return
			}
		}
	}
	c.fail(ErrSemantic, p, "%s is defined in module %s, which this module does not EXTEND", op, m)
}
