package tlacheck

type expr interface{ at() Pos }

type (
	eIdent struct {
		p    Pos
		name string
	}
	eNum struct {
		p Pos
		n int64
	}
	eStr struct {
		p Pos
		s string
	}
	eBool struct {
		p Pos
		b bool
	}
	// eApply is Op(args) for a named operator.
	eApply struct {
		p    Pos
		name string
		args []expr
	}
	// eOp is a built-in prefix, infix or postfix operator.
	eOp struct {
		p    Pos
		op   string
		args []expr
	}
	eJunction struct {
		p     Pos
		and   bool
		items []expr
	}
	eQuant struct {
		p     Pos
		kind  string // "\\A", "\\E", "CHOOSE"
		binds []binding
		body  expr
	}
	eSetEnum struct {
		p     Pos
		elems []expr
	}
	eSetFilter struct {
		p    Pos
		bind binding
		pred expr
	}
	eSetMap struct {
		p     Pos
		body  expr
		binds []binding
	}
	eFuncCtor struct {
		p     Pos
		binds []binding
		body  expr
	}
	eFuncApp struct {
		p    Pos
		f    expr
		args []expr
	}
	eField struct {
		p    Pos
		rec  expr
		name string
	}
	eRecord struct {
		p     Pos
		names []string
		vals  []expr
	}
	eRecSet struct {
		p     Pos
		names []string
		sets  []expr
	}
	eFuncSet struct {
		p        Pos
		dom, rng expr
	}
	eExcept struct {
		p     Pos
		f     expr
		specs []exceptSpec
	}
	eAt struct {
		p Pos
	}
	eTuple struct {
		p     Pos
		elems []expr
	}
	eIf struct {
		p       Pos
		c, t, e expr
	}
	eCase struct {
		p     Pos
		arms  []caseArm
		other expr
	}
	eLet struct {
		p    Pos
		defs []*def
		body expr
	}
	eActSub struct {
		p        Pos
		angle    bool
		act, sub expr
	}
	eFair struct {
		p        Pos
		strong   bool
		sub, act expr
	}
	eCross struct {
		p    Pos
		sets []expr
	}
)

type binding struct {
	p     Pos
	names []string
	tuple bool // \E <<a, b>> \in S
	set   expr
}

type exceptSpec struct {
	path []pathElem
	val  expr
}

type pathElem struct {
	field string // .field when idx == nil
	idx   expr
}

type caseArm struct{ cond, val expr }

type def struct {
	p         Pos
	name      string
	params    []string
	fnBinds   []binding // f[x \in S] == e
	body      expr
	recursive bool
}

type module struct {
	name      string
	extends   []string
	constants []ident
	variables []ident
	defs      []*def
	assumes   []expr
}

type ident struct {
	p    Pos
	name string
}

func (e *eIdent) at() Pos     { return e.p }
func (e *eNum) at() Pos       { return e.p }
func (e *eStr) at() Pos       { return e.p }
func (e *eBool) at() Pos      { return e.p }
func (e *eApply) at() Pos     { return e.p }
func (e *eOp) at() Pos        { return e.p }
func (e *eJunction) at() Pos  { return e.p }
func (e *eQuant) at() Pos     { return e.p }
func (e *eSetEnum) at() Pos   { return e.p }
func (e *eSetFilter) at() Pos { return e.p }
func (e *eSetMap) at() Pos    { return e.p }
func (e *eFuncCtor) at() Pos  { return e.p }
func (e *eFuncApp) at() Pos   { return e.p }
func (e *eField) at() Pos     { return e.p }
func (e *eRecord) at() Pos    { return e.p }
func (e *eRecSet) at() Pos    { return e.p }
func (e *eFuncSet) at() Pos   { return e.p }
func (e *eExcept) at() Pos    { return e.p }
func (e *eAt) at() Pos        { return e.p }
func (e *eTuple) at() Pos     { return e.p }
func (e *eIf) at() Pos        { return e.p }
func (e *eCase) at() Pos      { return e.p }
func (e *eLet) at() Pos       { return e.p }
func (e *eActSub) at() Pos    { return e.p }
func (e *eFair) at() Pos      { return e.p }
func (e *eCross) at() Pos     { return e.p }
