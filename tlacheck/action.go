package tlacheck

// Successor generation. enum walks an action (or, in initMode, the initial
// predicate) and calls k once for every way of satisfying it; the assignments made
// so far live in c.next (or c.cur in initMode) and are undone on the way back.

func (c *ctx) target(n node) (int, bool) {
	if c.initMode {
		if v, ok := n.(*varNode); ok {
			return v.idx, true
		}
		return 0, false
	}
	if v, ok := n.(*primeVarNode); ok {
		return v.idx, true
	}
	return 0, false
}

func (c *ctx) slots() []Value {
	if c.initMode {
		return c.cur
	}
	return c.next
}

func (c *ctx) enters(level int) bool {
	if c.initMode {
		return level >= levelState
	}
	return level >= levelAction
}

// enum calls k once for every way of satisfying n: the constructs that assign or
// branch are walked by the enum* functions, anything else is a guard.
func enum(c *ctx, n node, k func()) {
	switch x := n.(type) {
	case *andNode:
		enumAnd(c, x.items, k)
		return
	case *orNode:
		for _, it := range x.items {
			enum(c, it, k)
		}
		return
	case *quantNode:
		enumQuant(c, x, k)
		return
	case *binNode:
		if enumAssign(c, x, k) {
			return
		}
	case *unchangedNode:
		if x.vars != nil && !c.initMode {
			enumUnchanged(c, x.vars, 0, x.p, k)
			return
		}
	case *actSubNode:
		if x.vars != nil && !c.initMode {
			enumActSub(c, x, k)
			return
		}
	case *ifNode:
		if asBool(x.c.eval(c), x.p, "the condition of IF") {
			enum(c, x.t, k)
		} else {
			enum(c, x.e, k)
		}
		return
	case *caseNode:
		enumCase(c, x, k)
		return
	case *letNode:
		for _, s := range x.reset {
			c.frame[s] = nil
		}
		enum(c, x.body, k)
		return
	case *letValNode:
		if c.enters(x.level) {
			enum(c, x.body, k)
			return
		}
	case *callNode:
		if c.enters(x.def.level) {
			enumCall(c, x, k)
			return
		}
	case *letCallNode:
		if c.enters(x.op.level) {
			enumLetCall(c, x, k)
			return
		}
	}
	// A guard: an expression that constrains but does not assign.
	if asBool(n.eval(c), Pos{}, "an action conjunct") {
		k()
	}
}

// enumAssign walks x' = e and x' \in S (x = e, x \in S in initMode) for an x
// not assigned yet; it reports false, having done nothing, for any other x.
func enumAssign(c *ctx, x *binNode, k func()) bool {
	if x.code != opEq && x.code != opIn {
		return false
	}
	i, ok := c.target(x.a)
	if !ok {
		return false
	}
	s := c.slots()
	if s[i] != nil {
		return false
	}
	if x.code == opEq {
		s[i] = norm(x.b.eval(c))
		k()
		s[i] = nil
		return true
	}
	set := asSet(x.b.eval(c), x.p, "the right of \\in")
	for _, e := range set.elems {
		s[i] = e
		k()
	}
	s[i] = nil
	return true
}

// enumActSub walks [A]_v (A, or v unchanged) and <<A>>_v (A, changing v), v being
// a tuple of variables.
func enumActSub(c *ctx, x *actSubNode, k func()) {
	if x.angle {
		enum(c, x.act, func() {
			for _, i := range x.vars {
				if compare(c.next[i], c.cur[i]) != 0 {
					k()
					return
				}
			}
		})
		return
	}
	enum(c, x.act, k)
	enumUnchanged(c, x.vars, 0, x.p, k)
}

// enumCase walks the first arm whose condition holds, or OTHER.
func enumCase(c *ctx, x *caseNode, k func()) {
	for i, cond := range x.conds {
		if asBool(cond.eval(c), x.p, "a CASE condition") {
			enum(c, x.vals[i], k)
			return
		}
	}
	if x.other != nil {
		enum(c, x.other, k)
		return
	}
	throw(x.p, "no CASE arm applies and there is no OTHER")
}

// enumCall walks the body of an operator in a frame of its own. The first call of
// an action operator (other than the next-state action itself) names the action
// taken: its label.
func enumCall(c *ctx, x *callNode, k func()) {
	d := x.def
	if d.recursive {
		c.enterRecursive(x) // k runs inside the call, so within its count
	}
	frame, stack, sp := c.push(d.frameSize)
	for i, a := range x.args {
		frame[i] = a.eval(c)
	}
	saved := c.frame
	labelled := false
	if !c.initMode && c.labelDef == nil && d.ownPrime && d != c.root {
		c.labelDef, c.labelArgs = d, frame[:len(x.args)]
		labelled = true
	}
	c.frame = frame
	enum(c, d.body, func() {
		inner := c.frame
		c.frame = saved
		k()
		c.frame = inner
	})
	c.frame = saved
	c.pop(frame, stack, sp)
	if d.recursive {
		c.depth--
	}
	if labelled {
		c.labelDef, c.labelArgs = nil, nil
	}
}

// enumLetCall walks the body of a LET operator, its parameters bound in the
// enclosing frame while the body runs and restored around k.
func enumLetCall(c *ctx, x *letCallNode, k func()) {
	vals := make([]Value, len(x.args))
	for i, a := range x.args {
		vals[i] = a.eval(c)
	}
	saved := make([]Value, len(vals))
	for i, s := range x.op.params {
		saved[i] = c.frame[s]
		c.frame[s] = vals[i]
	}
	enum(c, x.op.body, func() {
		inner := make([]Value, len(vals))
		for i, s := range x.op.params {
			inner[i] = c.frame[s]
			c.frame[s] = saved[i]
		}
		k()
		for i, s := range x.op.params {
			c.frame[s] = inner[i]
		}
	})
	for i, s := range x.op.params {
		c.frame[s] = saved[i]
	}
}

func enumAnd(c *ctx, items []node, k func()) {
	if len(items) == 0 {
		k()
		return
	}
	if len(items) == 1 {
		enum(c, items[0], k)
		return
	}
	enum(c, items[0], func() { enumAnd(c, items[1:], k) })
}

// enumQuant walks \E x \in S : A as the disjunction of A over S, and \A as the
// conjunction.
func enumQuant(c *ctx, q *quantNode, k func()) {
	if q.all {
		enumAll(c, q, k)
		return
	}
	forBinds(c, q.binds, func() bool {
		enum(c, q.body, k)
		return true
	})
}

// enumAll treats \A x \in S : A as the conjunction of A over S.
func enumAll(c *ctx, q *quantNode, k func()) {
	type binding struct{ vals []Value }
	var envs [][]Value
	var slots []int
	for _, b := range q.binds {
		slots = append(slots, b.slots...)
	}
	forBinds(c, q.binds, func() bool {
		env := make([]Value, len(slots))
		for i, s := range slots {
			env[i] = c.frame[s]
		}
		envs = append(envs, env)
		return true
	})
	var step func(i int)
	step = func(i int) {
		if i == len(envs) {
			k()
			return
		}
		for j, s := range slots {
			c.frame[s] = envs[i][j]
		}
		enum(c, q.body, func() { step(i + 1) })
	}
	step(0)
}

func enumUnchanged(c *ctx, vars []int, i int, p Pos, k func()) {
	if i == len(vars) {
		k()
		return
	}
	v := vars[i]
	if c.next[v] == nil {
		c.next[v] = c.cur[v]
		enumUnchanged(c, vars, i+1, p, k)
		c.next[v] = nil
		return
	}
	if compare(c.next[v], c.cur[v]) == 0 {
		enumUnchanged(c, vars, i+1, p, k)
	}
}
