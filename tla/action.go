package tla

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
		if x.all {
			enumAll(c, x, k)
			return
		}
		forBinds(c, x.binds, func() bool {
			enum(c, x.body, k)
			return true
		})
		return
	case *binNode:
		if x.code == opEq || x.code == opIn {
			if i, ok := c.target(x.a); ok {
				s := c.slots()
				if s[i] == nil {
					if x.code == opEq {
						s[i] = norm(x.b.eval(c))
						k()
						s[i] = nil
						return
					}
					set := asSet(x.b.eval(c), x.p, "the right of \\in")
					for _, e := range set.elems {
						s[i] = e
						k()
					}
					s[i] = nil
					return
				}
			}
		}
	case *unchangedNode:
		if x.vars != nil && !c.initMode {
			enumUnchanged(c, x.vars, 0, x.p, k)
			return
		}
	case *actSubNode:
		if x.vars != nil && !c.initMode {
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
		d := x.def
		if c.enters(d.level) {
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
			if labelled {
				c.labelDef, c.labelArgs = nil, nil
			}
			return
		}
	case *letCallNode:
		if c.enters(x.op.level) {
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
			return
		}
	}
	// A guard: an expression that constrains but does not assign.
	if asBool(n.eval(c), Pos{}, "an action conjunct") {
		k()
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
