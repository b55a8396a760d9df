package tlacheck

import "fmt"

// State is one state of a spec: its variables' values in declaration order. A
// Stepper's states are only read: each step builds new ones.
type State []Value

// Stepper takes single, named steps of a spec from given states, for trace
// validation: which successors one action with given arguments has, and what an
// operator evaluates to in a state. Not safe for concurrent use.
type Stepper struct {
	s *Spec
	c *ctx
}

// Stepper returns a stepper over s.
func (s *Spec) Stepper() *Stepper {
	return &Stepper{s: s, c: &ctx{vars: s.vars, root: s.next}}
}

// Init returns the initial states.
func (t *Stepper) Init() ([]State, error) {
	var out []State
	err := t.s.newExplorer(Options{NoSymmetry: true}).initStates(func(st []Value) { out = append(out, st) })
	return out, err
}

// Var returns the value of the variable name in st, and false if the spec has none.
func (t *Stepper) Var(st State, name string) (Value, bool) {
	for i, v := range t.s.vars {
		if v == name {
			return st[i], true
		}
	}
	return nil, false
}

// Record is st as the record [var |-> value] the checker prints.
func (t *Stepper) Record(st State) Value { return t.s.stateRecord(st) }

// op returns the compiled definition of name, taking nargs arguments.
func (t *Stepper) op(name string, nargs int) (*opDef, error) {
	d := t.s.comp.defs[name]
	if d == nil {
		return nil, errAt(ErrConfig, Pos{}, "no definition %s in module %s", name, t.s.mod.name)
	}
	if err := t.s.compile(d); err != nil {
		return nil, err
	}
	if d.nparams != nargs {
		return nil, errAt(ErrConfig, d.pos, "%s takes %d arguments, not %d", name, d.nparams, nargs)
	}
	return d, nil
}

// Step returns every successor of st under the action name applied to args (none
// when the action is not enabled). Each successor gives every variable a value.
func (t *Stepper) Step(st State, name string, args ...Value) (out []State, err error) {
	d, err := t.op(name, len(args))
	if err != nil {
		return nil, err
	}
	defer catch(&err)
	c := t.c
	c.initMode, c.cur, c.next = false, st, make([]Value, len(st))
	c.labelDef, c.labelArgs = nil, nil
	frame := make([]Value, max(d.frameSize, len(args)))
	copy(frame, args)
	c.frame = frame
	enum(c, d.body, func() {
		for i, v := range c.next {
			if v == nil {
				throw(d.pos, "action %s does not give %s' a value", name, t.s.vars[i])
			}
		}
		out = append(out, append(State(nil), c.next...))
	})
	return out, nil
}

// Eval evaluates the operator name, applied to args, in st (an operator without
// primes: a constant, a state function, an answer).
func (t *Stepper) Eval(st State, name string, args ...Value) (v Value, err error) {
	d, err := t.op(name, len(args))
	if err != nil {
		return nil, err
	}
	if d.level > levelState {
		return nil, fmt.Errorf("tlacheck: %s is an action, not a state function: Step it", name)
	}
	defer catch(&err)
	c := t.c
	c.initMode, c.cur, c.next = false, st, nil
	frame := make([]Value, max(d.frameSize, len(args)))
	copy(frame, args)
	c.frame = frame
	return d.body.eval(c), nil
}

// Constant returns the value the configuration gives the constant name.
func (t *Stepper) Constant(name string) (Value, bool) {
	v, ok := t.s.comp.consts[name]
	return v, ok
}
