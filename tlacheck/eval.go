package tlacheck

import (
	"fmt"
	"os"
	"sort"
)

// node is a compiled expression.
type node interface {
	eval(c *ctx) Value
}

// ctx is the evaluation context: the current and next state and the current frame.
type ctx struct {
	cur   []Value // current state; nil entries are unassigned (initial-state search)
	next  []Value // next state; nil entries are unassigned
	frame []Value
	depth int // calls of RECURSIVE operators under way
	vars  []string
	stack []Value // frames are carved from here (push/pop)
	sp    int
	spare []Value // a chunk left by pop, reused by push

	// successor generation
	labelDef  *opDef
	labelArgs []Value
	root      *opDef
	initMode  bool
}

type (
	constNode struct{ v Value }
	slotNode  struct{ slot int }
	varNode   struct {
		idx  int
		name string
	}
	primeVarNode struct {
		idx  int
		name string
		p    Pos
	}
	primeNode struct {
		e node
		p Pos
	}
	letValNode struct {
		slot  int
		body  node
		level int
	}
	callNode struct {
		def  *opDef
		args []node
		p    Pos
	}
	letCallNode struct {
		op   *letOp
		args []node
		p    Pos
	}
	letNode struct {
		reset []int
		body  node
	}
	andNode struct {
		items []node
		p     Pos
	}
	orNode struct {
		items []node
		p     Pos
	}
	unNode struct {
		code int
		a    node
		p    Pos
	}
	binNode struct {
		code int
		a, b node
		p    Pos
	}
	cbind struct {
		slots []int
		tuple bool
		set   node
		p     Pos
	}
	quantNode struct {
		all   bool
		binds []cbind
		body  node
		p     Pos
	}
	chooseNode struct {
		binds []cbind
		body  node
		p     Pos
	}
	setEnumNode   struct{ elems []node }
	setFilterNode struct {
		bind cbind
		pred node
		p    Pos
	}
	setMapNode struct {
		binds []cbind
		body  node
		p     Pos
	}
	funcCtorNode struct {
		binds []cbind
		body  node
		p     Pos
	}
	applyNode struct {
		f, arg node
		p      Pos
	}
	fieldNode struct {
		rec  node
		name string
		p    Pos
	}
	recordNode struct {
		keys []Value
		vals []node
	}
	recSetNode struct {
		names []string
		sets  []node
	}
	funcSetNode struct{ dom, rng node }
	cexcept     struct {
		path   []node
		atSlot int
		val    node
	}
	exceptNode struct {
		f     node
		specs []cexcept
		p     Pos
	}
	tupleNode struct{ elems []node }
	ifNode    struct {
		c, t, e node
		p       Pos
	}
	caseNode struct {
		conds, vals []node
		other       node
		p           Pos
	}
	actSubNode struct {
		angle    bool
		act, sub node
		vars     []int
		p        Pos
	}
	unchangedNode struct {
		sub  node
		vars []int
		p    Pos
	}
	crossNode   struct{ sets []node }
	builtinNode struct {
		name string
		fn   func(n *builtinNode, args []Value) Value
		args []node
		p    Pos
	}
)

func (n *constNode) eval(*ctx) Value  { return n.v }
func (n *slotNode) eval(c *ctx) Value { return c.frame[n.slot] }
func (n *varNode) eval(c *ctx) Value {
	v := c.cur[n.idx]
	if v == nil {
		throw(Pos{}, "variable %s has no value yet (initial predicate must define it first)", n.name)
	}
	return v
}
func (n *primeVarNode) eval(c *ctx) Value {
	if c.next == nil {
		throw(n.p, "%s' is used where there is no next state", n.name)
	}
	v := c.next[n.idx]
	if v == nil {
		throw(n.p, "%s' is read before the action gives it a value", n.name)
	}
	return v
}
func (n *primeNode) eval(c *ctx) Value {
	if c.next == nil {
		throw(n.p, "a primed expression is used where there is no next state")
	}
	cur, next := c.cur, c.next
	c.cur, c.next = next, nil
	defer func() { c.cur, c.next = cur, next }()
	return n.e.eval(c)
}

func (n *letValNode) eval(c *ctx) Value {
	if v := c.frame[n.slot]; v != nil && n.level < levelAction {
		return v
	}
	v := n.body.eval(c)
	c.frame[n.slot] = v
	return v
}

func (n *letNode) eval(c *ctx) Value {
	for _, s := range n.reset {
		c.frame[s] = nil
	}
	return n.body.eval(c)
}

func (n *callNode) eval(c *ctx) Value {
	d := n.def
	if d.nparams == 0 && d.level == levelConst {
		if v := d.cached.Load(); v != nil {
			return *v
		}
	}
	if d.recursive {
		c.enterRecursive(n)
	}
	frame, stack, sp := c.push(d.frameSize)
	for i, a := range n.args {
		frame[i] = a.eval(c)
	}
	saved := c.frame
	c.frame = frame
	v := d.body.eval(c)
	c.frame = saved
	c.pop(frame, stack, sp)
	if d.recursive {
		c.depth--
	}
	if d.nparams == 0 && d.level == levelConst {
		d.cached.Store(&v)
	}
	return v
}

// enterRecursive counts the call n of a RECURSIVE operator, which the caller
// uncounts (c.depth--) when it returns; past MaxRecursionDepth it throws a
// RecursionError. An error abandons the whole evaluation, so it is not uncounted.
func (c *ctx) enterRecursive(n *callNode) {
	c.depth++
	if c.depth > MaxRecursionDepth {
		panic(evalPanic{&RecursionError{Op: n.def.name, Pos: n.p}})
	}
}

func (n *letCallNode) eval(c *ctx) Value {
	tmp, stack, sp := c.push(2 * len(n.args))
	vals, saved := tmp[:len(n.args)], tmp[len(n.args):]
	for i, a := range n.args {
		vals[i] = a.eval(c)
	}
	for i, s := range n.op.params {
		saved[i] = c.frame[s]
		c.frame[s] = vals[i]
	}
	v := n.op.body.eval(c)
	for i, s := range n.op.params {
		c.frame[s] = saved[i]
	}
	c.pop(tmp, stack, sp)
	return v
}

// frameChunk is the number of values in one chunk of the frame stack.
const frameChunk = 4096

// push takes a zeroed frame of n values from the frame stack; frames are released
// in LIFO order by pop with the returned stack and sp.
func (c *ctx) push(n int) (frame, stack []Value, sp int) {
	stack, sp = c.stack, c.sp
	if c.sp+n > len(c.stack) {
		if len(c.spare) >= n {
			c.stack, c.spare = c.spare, nil
		} else {
			c.stack = make([]Value, max(frameChunk, n))
		}
		c.sp = 0
	}
	frame = c.stack[c.sp : c.sp+n : c.sp+n]
	c.sp += n
	return frame, stack, sp
}

func (c *ctx) pop(frame, stack []Value, sp int) {
	clear(frame)
	if len(c.stack) > 0 && (len(stack) == 0 || &stack[0] != &c.stack[0]) {
		c.spare = c.stack // leaving a chunk: keep it for the next push
	}
	c.stack, c.sp = stack, sp
}

func asBool(v Value, p Pos, what string) bool {
	b, ok := v.(*boolV)
	if !ok {
		throw(p, "%s must be a boolean, got %s", what, kindErr(v))
	}
	return b.b
}

func asInt(v Value, p Pos, what string) int64 {
	i, ok := v.(*intV)
	if !ok {
		throw(p, "%s must be an integer, got %s", what, kindErr(v))
	}
	return i.n
}

func asSet(v Value, p Pos, what string) *setV {
	switch s := v.(type) {
	case *setV:
		return s
	case lazySet:
		return s.enum()
	}
	throw(p, "%s must be a set, got %s", what, kindErr(v))
	return nil
}

func asFunc(v Value, p Pos, what string) *funcV {
	f, ok := v.(*funcV)
	if !ok {
		throw(p, "%s must be a function, record or sequence, got %s", what, kindErr(v))
	}
	return f
}

func asSeq(v Value, p Pos, what string) *funcV {
	f := asFunc(v, p, what)
	if len(f.keys) > 0 && !isTupleKeysFast(f.keys) {
		throw(p, "%s must be a sequence, got %s", what, shortString(v))
	}
	return f
}

func (n *andNode) eval(c *ctx) Value {
	for _, it := range n.items {
		if !asBool(it.eval(c), n.p, "a conjunct") {
			return falseV
		}
	}
	return trueV
}

func (n *orNode) eval(c *ctx) Value {
	for _, it := range n.items {
		if asBool(it.eval(c), n.p, "a disjunct") {
			return trueV
		}
	}
	return falseV
}

const (
	opNot = iota
	opNeg
	opDomain
	opSubset
	opUnion
	opImplies
	opEquiv
	opEq
	opNeq
	opLt
	opLe
	opGt
	opGe
	opIn
	opNotin
	opSubseteq
	opSubsetProper
	opSupseteq
	opSupsetProper
	opCup
	opCap
	opSetminus
	opRange
	opPlus
	opMinus
	opTimes
	opDiv
	opMod
	opPow
	opConcat
	opColonGt
	opAtAt
	opSlash
)

var unaryCodes = map[string]int{"~": opNot, "neg": opNeg, "DOMAIN": opDomain, "SUBSET": opSubset, "UNION": opUnion}

var binCodes = map[string]int{
	"=>": opImplies, "<=>": opEquiv, "=": opEq, "#": opNeq, "<": opLt, "<=": opLe, ">": opGt,
	">=": opGe, "\\in": opIn, "\\notin": opNotin, "\\subseteq": opSubseteq,
	"\\subset": opSubsetProper, "\\supseteq": opSupseteq, "\\supset": opSupsetProper,
	"\\cup": opCup, "\\cap": opCap, "\\": opSetminus, "..": opRange, "+": opPlus, "-": opMinus,
	"*": opTimes, "\\div": opDiv, "%": opMod, "^": opPow, "\\o": opConcat, ":>": opColonGt,
	"@@": opAtAt, "/": opSlash,
}

func (n *unNode) eval(c *ctx) Value {
	a := n.a.eval(c)
	switch n.code {
	case opNot:
		return Bool(!asBool(a, n.p, "the operand of ~"))
	case opNeg:
		return mkInt(-asInt(a, n.p, "the operand of -"))
	case opDomain:
		f := asFunc(a, n.p, "the operand of DOMAIN")
		if len(f.keys) == 0 {
			return emptySet
		}
		return &setV{elems: f.keys}
	case opSubset:
		return &powerSetV{base: asSet(a, n.p, "the operand of SUBSET")}
	case opUnion:
		var out []Value
		for _, s := range asSet(a, n.p, "the operand of UNION").elems {
			out = append(out, asSet(s, n.p, "an element of UNION's operand").elems...)
		}
		return mkSet(out)
	}
	throw(n.p, "unknown prefix operator")
	return nil
}

func valEq(a, b Value, p Pos) bool {
	if !comparable(a, b) {
		throw(p, "attempted to compare %s with %s", kindErr(a), kindErr(b))
	}
	return compare(a, b) == 0
}

func (n *binNode) eval(c *ctx) Value {
	switch n.code {
	case opImplies:
		if !asBool(n.a.eval(c), n.p, "the left of =>") {
			return trueV
		}
		return Bool(asBool(n.b.eval(c), n.p, "the right of =>"))
	}
	a, b := n.a.eval(c), n.b.eval(c)
	switch n.code {
	case opEquiv:
		return Bool(asBool(a, n.p, "the left of <=>") == asBool(b, n.p, "the right of <=>"))
	case opEq:
		return Bool(valEq(a, b, n.p))
	case opNeq:
		return Bool(!valEq(a, b, n.p))
	case opLt:
		return Bool(asInt(a, n.p, "the left of <") < asInt(b, n.p, "the right of <"))
	case opLe:
		return Bool(asInt(a, n.p, "the left of <=") <= asInt(b, n.p, "the right of <="))
	case opGt:
		return Bool(asInt(a, n.p, "the left of >") > asInt(b, n.p, "the right of >"))
	case opGe:
		return Bool(asInt(a, n.p, "the left of >=") >= asInt(b, n.p, "the right of >="))
	case opIn:
		return Bool(member(a, b, n.p))
	case opNotin:
		return Bool(!member(a, b, n.p))
	case opSubseteq, opSubsetProper:
		return Bool(subsetOf(asSet(a, n.p, "the left of \\subseteq"), b, n.code == opSubsetProper, n.p))
	case opSupseteq, opSupsetProper:
		return Bool(subsetOf(asSet(b, n.p, "the right of \\supseteq"), a, n.code == opSupsetProper, n.p))
	case opCup:
		return union(asSet(a, n.p, "the left of \\cup"), asSet(b, n.p, "the right of \\cup"))
	case opCap:
		return intersect(asSet(a, n.p, "the left of \\cap"), b, n.p)
	case opSetminus:
		return difference(asSet(a, n.p, "the left of \\"), b, n.p)
	case opRange:
		return &intervalV{lo: asInt(a, n.p, "the left of .."), hi: asInt(b, n.p, "the right of ..")}
	case opPlus:
		return mkInt(asInt(a, n.p, "the left of +") + asInt(b, n.p, "the right of +"))
	case opMinus:
		return mkInt(asInt(a, n.p, "the left of -") - asInt(b, n.p, "the right of -"))
	case opTimes:
		return mkInt(asInt(a, n.p, "the left of *") * asInt(b, n.p, "the right of *"))
	case opDiv, opMod:
		return divMod(asInt(a, n.p, "the left of \\div or %"), asInt(b, n.p, "the right of \\div or %"), n.code == opMod, n.p)
	case opPow:
		return power(asInt(a, n.p, "the left of ^"), asInt(b, n.p, "the right of ^"), n.p)
	case opConcat:
		sa, sb := asSeq(a, n.p, "the left of \\o"), asSeq(b, n.p, "the right of \\o")
		out := make([]Value, 0, len(sa.vals)+len(sb.vals))
		return mkTuple(append(append(out, sa.vals...), sb.vals...))
	case opColonGt:
		return mkFunc([]Value{a}, []Value{b})
	case opAtAt:
		fa, fb := asFunc(a, n.p, "the left of @@"), asFunc(b, n.p, "the right of @@")
		keys := append(append([]Value(nil), fb.keys...), fa.keys...)
		vals := append(append([]Value(nil), fb.vals...), fa.vals...)
		return mkFunc(keys, vals) // later keys (fa's) win
	case opSlash:
		throw(n.p, "real division / is not supported (use \\div)")
	}
	throw(n.p, "unknown operator")
	return nil
}

// subsetOf decides sub \subseteq super, or, when proper, sub \subset super.
func subsetOf(sub *setV, super Value, proper bool, p Pos) bool {
	for _, e := range sub.elems {
		if !member(e, super, p) {
			return false
		}
	}
	if proper {
		return int64(len(sub.elems)) != setSize(norm(super))
	}
	return true
}

// union is a \cup b; an empty operand returns the other as it is.
func union(a, b *setV) Value {
	if len(a.elems) == 0 {
		return b
	}
	if len(b.elems) == 0 {
		return a
	}
	out := make([]Value, 0, len(a.elems)+len(b.elems))
	out = append(append(out, a.elems...), b.elems...)
	return mkSet(out)
}

// intersect is a \cap b; it keeps a's order, so the result needs no sorting.
func intersect(a *setV, b Value, p Pos) Value {
	var out []Value
	for _, e := range a.elems {
		if member(e, b, p) {
			out = append(out, e)
		}
	}
	return &setV{elems: out}
}

// difference is a \ b; it keeps a's order, so the result needs no sorting.
func difference(a *setV, b Value, p Pos) Value {
	out := make([]Value, 0, len(a.elems))
	for _, e := range a.elems {
		if !member(e, b, p) {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return emptySet
	}
	return &setV{elems: out}
}

// divMod is x \div y, or x % y when mod: TLC's floor division, whose remainder
// has the sign of a positive y.
func divMod(x, y int64, mod bool, p Pos) Value {
	if y == 0 {
		throw(p, "division by zero")
	}
	if mod && y < 0 {
		throw(p, "the right of %% must be positive, got %d", y)
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	if !mod {
		return mkInt(q)
	}
	return mkInt(x - q*y)
}

// power is x ^ y for y >= 0.
func power(x, y int64, p Pos) Value {
	if y < 0 {
		throw(p, "negative exponent %d", y)
	}
	r := int64(1)
	for i := int64(0); i < y; i++ {
		r *= x
	}
	return mkInt(r)
}

func member(x, s Value, p Pos) (res bool) {
	defer func() {
		if r := recover(); r != nil {
			if ep, ok := r.(evalPanic); ok {
				if e, ok := ep.err.(*Error); ok && e.Pos.Line == 0 {
					e.Pos = p
				}
				panic(ep)
			}
			panic(r)
		}
	}()
	return memberOf(x, s)
}

// forBinds iterates the bindings; fn returns false to stop. It returns false when
// stopped. As in TLC, the first bound name varies fastest: \E x \in S, y \in T
// takes <<x1, y1>>, <<x2, y1>>, ... (which fixes the order of successors, and so
// TLC's figures at a violation).
func forBinds(c *ctx, bs []cbind, fn func() bool) bool {
	if len(bs) == 1 && (len(bs[0].slots) == 1 || bs[0].tuple) {
		b := bs[0]
		set := asSet(b.set.eval(c), b.p, "the set of a bound variable")
		for _, e := range set.elems {
			bindOne(c, b, e)
			if !fn() {
				return false
			}
		}
		return true
	}
	// One position per name (or per <<...>> pattern), each with its elements.
	type position struct {
		b     cbind
		slot  int // for a single name
		elems []Value
	}
	var pos []position
	for _, b := range bs {
		set := asSet(b.set.eval(c), b.p, "the set of a bound variable")
		if len(set.elems) == 0 {
			return true
		}
		if b.tuple {
			pos = append(pos, position{b: b, slot: -1, elems: set.elems})
			continue
		}
		for _, s := range b.slots {
			pos = append(pos, position{b: b, slot: s, elems: set.elems})
		}
	}
	idx := make([]int, len(pos))
	for {
		for i, p := range pos {
			if p.slot >= 0 {
				c.frame[p.slot] = p.elems[idx[i]]
			} else {
				bindOne(c, p.b, p.elems[idx[i]])
			}
		}
		if !fn() {
			return false
		}
		i := 0
		for ; i < len(idx); i++ {
			idx[i]++
			if idx[i] < len(pos[i].elems) {
				break
			}
			idx[i] = 0
		}
		if i == len(idx) {
			return true
		}
	}
}

// bindOne binds the single name of b, or its <<...>> pattern, to e.
func bindOne(c *ctx, b cbind, e Value) {
	if !b.tuple {
		c.frame[b.slots[0]] = e
		return
	}
	f, ok := e.(*funcV)
	if !ok || len(f.vals) != len(b.slots) || (len(f.keys) > 0 && !isTupleKeysFast(f.keys)) {
		throw(b.p, "cannot bind <<...>> to %s", shortString(e))
	}
	for i, s := range b.slots {
		c.frame[s] = f.vals[i]
	}
}

func (n *quantNode) eval(c *ctx) Value {
	res := n.all
	forBinds(c, n.binds, func() bool {
		v := asBool(n.body.eval(c), n.p, "the body of a quantifier")
		if v != n.all {
			res = v
			return false
		}
		return true
	})
	return Bool(res)
}

func (n *chooseNode) eval(c *ctx) Value {
	var res Value
	forBinds(c, n.binds, func() bool {
		if asBool(n.body.eval(c), n.p, "the body of CHOOSE") {
			res = boundValue(c, n.binds)
			return false
		}
		return true
	})
	if res == nil {
		throw(n.p, "CHOOSE found no value satisfying its predicate")
	}
	return res
}

func boundValue(c *ctx, bs []cbind) Value {
	var vals []Value
	for _, b := range bs {
		if b.tuple {
			vs := make([]Value, len(b.slots))
			for i, s := range b.slots {
				vs[i] = c.frame[s]
			}
			vals = append(vals, mkTuple(vs))
			continue
		}
		for _, s := range b.slots {
			vals = append(vals, c.frame[s])
		}
	}
	if len(vals) == 1 {
		return vals[0]
	}
	return mkTuple(vals)
}

func (n *setEnumNode) eval(c *ctx) Value { return mkSet(evalAll(c, n.elems)) }

// evalAll evaluates ns in order into a new slice.
func evalAll(c *ctx, ns []node) []Value {
	vals := make([]Value, len(ns))
	for i, e := range ns {
		vals[i] = e.eval(c)
	}
	return vals
}

func (n *setFilterNode) eval(c *ctx) Value {
	var out []Value
	forBinds(c, []cbind{n.bind}, func() bool {
		if asBool(n.pred.eval(c), n.p, "the predicate of a set filter") {
			out = append(out, boundValue(c, []cbind{n.bind}))
		}
		return true
	})
	return mkSet(out)
}

func (n *setMapNode) eval(c *ctx) Value {
	var out []Value
	forBinds(c, n.binds, func() bool {
		out = append(out, n.body.eval(c))
		return true
	})
	return mkSet(out)
}

func (n *funcCtorNode) eval(c *ctx) Value {
	var keys, vals []Value
	forBinds(c, n.binds, func() bool {
		keys = append(keys, boundValue(c, n.binds))
		vals = append(vals, n.body.eval(c))
		return true
	})
	return mkFunc(keys, vals)
}

func (n *applyNode) eval(c *ctx) Value {
	fv := n.f.eval(c)
	arg := n.arg.eval(c)
	f := asFunc(fv, n.p, "the function in f[x]")
	if v, ok := f.Apply(arg); ok {
		return v
	}
	throw(n.p, "f[x]: %s is not in the domain of %s", shortString(arg), shortString(fv))
	return nil
}

func (n *fieldNode) eval(c *ctx) Value {
	rv := n.rec.eval(c)
	r := asFunc(rv, n.p, "the record in r."+n.name)
	if v, ok := r.Field(n.name); ok {
		return v
	}
	throw(n.p, "record %s has no field %s", shortString(rv), n.name)
	return nil
}

func (n *recordNode) eval(c *ctx) Value {
	vals := make([]Value, len(n.vals))
	for i, v := range n.vals {
		vals[i] = norm(v.eval(c))
	}
	return &funcV{keys: n.keys, vals: vals}
}

func (n *recSetNode) eval(c *ctx) Value {
	return &recSetV{names: n.names, sets: evalAll(c, n.sets)}
}

func (n *funcSetNode) eval(c *ctx) Value {
	return &funcSetV{dom: n.dom.eval(c), rng: n.rng.eval(c)}
}

func (n *exceptNode) eval(c *ctx) Value {
	f := n.f.eval(c)
	for _, s := range n.specs {
		path := make([]Value, len(s.path))
		for i, p := range s.path {
			path[i] = p.eval(c)
		}
		f = n.update(c, f, path, s)
	}
	return f
}

func (n *exceptNode) update(c *ctx, fv Value, path []Value, s cexcept) Value {
	f := asFunc(fv, n.p, "the function in EXCEPT")
	i := f.find(path[0])
	if i < 0 {
		return f // [f EXCEPT ![x] = e] is f when x is not in DOMAIN f
	}
	var nv Value
	if len(path) == 1 {
		saved := c.frame[s.atSlot]
		c.frame[s.atSlot] = f.vals[i]
		nv = norm(s.val.eval(c))
		c.frame[s.atSlot] = saved
	} else {
		nv = n.update(c, f.vals[i], path[1:], s)
	}
	vals := make([]Value, len(f.vals))
	copy(vals, f.vals)
	vals[i] = nv
	return &funcV{keys: f.keys, vals: vals}
}

func (n *tupleNode) eval(c *ctx) Value { return mkTuple(evalAll(c, n.elems)) }

func (n *ifNode) eval(c *ctx) Value {
	if asBool(n.c.eval(c), n.p, "the condition of IF") {
		return n.t.eval(c)
	}
	return n.e.eval(c)
}

func (n *caseNode) eval(c *ctx) Value {
	for i, cond := range n.conds {
		if asBool(cond.eval(c), n.p, "a CASE condition") {
			return n.vals[i].eval(c)
		}
	}
	if n.other != nil {
		return n.other.eval(c)
	}
	throw(n.p, "no CASE arm applies and there is no OTHER")
	return nil
}

func (n *actSubNode) eval(c *ctx) Value {
	changed := !unchanged(c, n.sub, n.p)
	if n.angle {
		return Bool(changed && asBool(n.act.eval(c), n.p, "an action"))
	}
	return Bool(!changed || asBool(n.act.eval(c), n.p, "an action"))
}

func unchanged(c *ctx, sub node, p Pos) bool {
	if c.next == nil {
		throw(p, "UNCHANGED is used where there is no next state")
	}
	now := sub.eval(c)
	cur, next := c.cur, c.next
	c.cur, c.next = next, nil
	later := sub.eval(c)
	c.cur, c.next = cur, next
	return compare(now, later) == 0
}

func (n *unchangedNode) eval(c *ctx) Value { return Bool(unchanged(c, n.sub, n.p)) }

func (n *crossNode) eval(c *ctx) Value { return &crossV{sets: evalAll(c, n.sets)} }

func (n *builtinNode) eval(c *ctx) Value { return n.fn(n, evalAll(c, n.args)) }

// builtinFns are the standard modules' operators, by name (builtinArity gives their arity).
var builtinFns = map[string]func(n *builtinNode, args []Value) Value{
	"Len":          builtinLen,
	"Append":       builtinAppend,
	"Head":         builtinHead,
	"Tail":         builtinTail,
	"SubSeq":       builtinSubSeq,
	"Seq":          builtinSeq,
	"Cardinality":  builtinCardinality,
	"IsFiniteSet":  builtinIsFiniteSet,
	"Permutations": builtinPermutations,
	"Print":        builtinPrint,
	"PrintT":       builtinPrintT,
	"Assert":       builtinAssert,
	"ToString":     builtinToString,
}

func builtinLen(n *builtinNode, a []Value) Value {
	return mkInt(int64(len(asSeq(a[0], n.p, "the argument of Len").vals)))
}

func builtinAppend(n *builtinNode, a []Value) Value {
	s := asSeq(a[0], n.p, "the first argument of Append")
	out := make([]Value, len(s.vals), len(s.vals)+1)
	copy(out, s.vals)
	return mkTuple(append(out, a[1]))
}

func builtinHead(n *builtinNode, a []Value) Value {
	s := asSeq(a[0], n.p, "the argument of Head")
	if len(s.vals) == 0 {
		throw(n.p, "Head of the empty sequence")
	}
	return s.vals[0]
}

func builtinTail(n *builtinNode, a []Value) Value {
	s := asSeq(a[0], n.p, "the argument of Tail")
	if len(s.vals) == 0 {
		throw(n.p, "Tail of the empty sequence")
	}
	return mkTuple(append([]Value(nil), s.vals[1:]...))
}

func builtinSubSeq(n *builtinNode, a []Value) Value {
	s := asSeq(a[0], n.p, "the first argument of SubSeq")
	m, k := asInt(a[1], n.p, "the second argument of SubSeq"), asInt(a[2], n.p, "the third argument of SubSeq")
	if m > k {
		return emptyFunc
	}
	if m < 1 || k > int64(len(s.vals)) {
		throw(n.p, "SubSeq(s, %d, %d) out of range for a sequence of length %d", m, k, len(s.vals))
	}
	return mkTuple(append([]Value(nil), s.vals[m-1:k]...))
}

func builtinSeq(n *builtinNode, a []Value) Value { return &seqSetV{base: a[0]} }

// builtinCardinality counts a lazy set without enumerating it when it can.
func builtinCardinality(n *builtinNode, a []Value) Value {
	if l, ok := a[0].(lazySet); ok {
		if k := l.size(); k >= 0 {
			return mkInt(k)
		}
	}
	return mkInt(int64(len(asSet(a[0], n.p, "the argument of Cardinality").elems)))
}

func builtinIsFiniteSet(n *builtinNode, a []Value) Value {
	switch s := a[0].(type) {
	case *setV:
		return trueV
	case lazySet:
		_, inf := s.(*infSetV)
		_, seq := s.(*seqSetV)
		return Bool(!inf && !seq)
	}
	throw(n.p, "IsFiniteSet of %s", kindErr(a[0]))
	return nil
}

func builtinPermutations(n *builtinNode, a []Value) Value {
	s := asSet(a[0], n.p, "the argument of Permutations")
	return mkSet(permutations(s.elems))
}

func builtinPrint(n *builtinNode, a []Value) Value {
	fmt.Fprintln(os.Stderr, a[0].String(), "", a[1].String())
	return a[1]
}

func builtinPrintT(n *builtinNode, a []Value) Value {
	fmt.Fprintln(os.Stderr, a[0].String())
	return trueV
}

func builtinAssert(n *builtinNode, a []Value) Value {
	if !asBool(a[0], n.p, "the first argument of Assert") {
		throw(n.p, "Assert failed: %s", a[1].String())
	}
	return trueV
}

func builtinToString(n *builtinNode, a []Value) Value { return Str(a[0].String()) }

// permutations returns every bijection of elems onto itself, as functions.
func permutations(elems []Value) []Value {
	var out []Value
	idx := make([]int, len(elems))
	for i := range idx {
		idx[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == len(idx) {
			vals := make([]Value, len(idx))
			for i, j := range idx {
				vals[i] = elems[j]
			}
			out = append(out, mkFunc(append([]Value(nil), elems...), vals))
			return
		}
		for i := k; i < len(idx); i++ {
			idx[k], idx[i] = idx[i], idx[k]
			rec(k + 1)
			idx[k], idx[i] = idx[i], idx[k]
		}
	}
	rec(0)
	sort.Slice(out, func(i, j int) bool { return compare(out[i], out[j]) < 0 })
	return out
}
