package tlacheck

// An exported, read-only copy of the parser's syntax tree, so that other tools
// (tlacheck/smt, the SMT translation) read a spec through this one parser instead of
// writing a second one. The checker itself keeps using the unexported tree.

// NodeKind names the syntactic form of a Node.
type NodeKind string

// The forms of a Node; the comment says which fields each one fills.
const (
	NIdent     NodeKind = "ident"     // Name
	NNum       NodeKind = "num"       // Num
	NStr       NodeKind = "str"       // Str
	NBool      NodeKind = "bool"      // Bool
	NApply     NodeKind = "apply"     // Name(Args)
	NOp        NodeKind = "op"        // Name is the operator (canonical spelling; unary minus is "neg", prime is "'"), Args
	NAnd       NodeKind = "and"       // Args, a conjunction (bullets or infix)
	NOr        NodeKind = "or"        // Args, a disjunction
	NQuant     NodeKind = "quant"     // Name is \A, \E or CHOOSE; Binds; Args[0] the body
	NSetEnum   NodeKind = "setenum"   // Args
	NSetFilter NodeKind = "setfilter" // Binds[0]; Args[0] the predicate
	NSetMap    NodeKind = "setmap"    // Args[0] the body; Binds
	NFuncCtor  NodeKind = "funcctor"  // Binds; Args[0] the body
	NFuncApp   NodeKind = "funcapp"   // Args[0] the function, Args[1:] the arguments
	NField     NodeKind = "field"     // Args[0] the record, Name the field
	NRecord    NodeKind = "record"    // Names, Args the values
	NRecSet    NodeKind = "recset"    // Names, Args the sets
	NFuncSet   NodeKind = "funcset"   // Args[0] the domain, Args[1] the range
	NExcept    NodeKind = "except"    // Args[0] the function, Excepts
	NAt        NodeKind = "at"        // @
	NTuple     NodeKind = "tuple"     // Args
	NIf        NodeKind = "if"        // Args: condition, then, else
	NCase      NodeKind = "case"      // Arms, Other (nil without OTHER)
	NLet       NodeKind = "let"       // Defs, Args[0] the body
	NActSub    NodeKind = "actsub"    // Bool: <<A>>_v when true, [A]_v when false; Args: A, v
	NFair      NodeKind = "fair"      // Bool: SF when true; Args: v, A
	NCross     NodeKind = "cross"     // Args, the factors of \X
)

// Node is one expression of the syntax tree, with its position in the source.
type Node struct {
	Kind    NodeKind
	Pos     Pos
	Name    string
	Num     int64
	Str     string
	Bool    bool
	Names   []string
	Args    []*Node
	Binds   []Binding
	Excepts []ExceptSpec
	Arms    []CaseArm
	Other   *Node
	Defs    []*Def
}

// Binding is x, y \in S (Tuple: <<x, y>> \in S).
type Binding struct {
	Pos   Pos
	Names []string
	Tuple bool
	Set   *Node
}

// ExceptSpec is one ![a].f = e of an EXCEPT; a path element with Index nil is .Field.
type ExceptSpec struct {
	Path []PathElem
	Val  *Node
}

// PathElem is one [a] or .f of an EXCEPT path.
type PathElem struct {
	Field string
	Index *Node
}

// CaseArm is one cond -> val of a CASE.
type CaseArm struct{ Cond, Val *Node }

// Def is one definition: Name == Body, Name(Params) == Body, or Name[FnBinds] == Body.
type Def struct {
	Pos       Pos
	Name      string
	Params    []string
	FnBinds   []Binding
	Body      *Node
	Recursive bool
}

// Ident is a declared constant or variable.
type Ident struct {
	Pos  Pos
	Name string
}

// Module is a parsed module: what it extends, declares, defines and assumes.
type Module struct {
	Name      string
	Extends   []string
	Constants []Ident
	Variables []Ident
	Defs      []*Def
	Assumes   []*Node
}

// ParseSyntax parses the text of a module with the checker's parser and returns
// its exported syntax tree (errors are the parser's, positioned, without a file name).
func ParseSyntax(src string) (*Module, error) {
	m, err := parseModule(src)
	if err != nil {
		return nil, err
	}
	out := &Module{Name: m.name, Extends: m.extends}
	for _, c := range m.constants {
		out.Constants = append(out.Constants, Ident{c.p, c.name})
	}
	for _, v := range m.variables {
		out.Variables = append(out.Variables, Ident{v.p, v.name})
	}
	for _, d := range m.defs {
		out.Defs = append(out.Defs, exportDef(d))
	}
	for _, a := range m.assumes {
		out.Assumes = append(out.Assumes, exportExpr(a))
	}
	return out, nil
}

func exportDef(d *def) *Def {
	return &Def{Pos: d.p, Name: d.name, Params: d.params, FnBinds: exportBinds(d.fnBinds), Body: exportExpr(d.body), Recursive: d.recursive}
}

func exportBinds(bs []binding) []Binding {
	var out []Binding
	for _, b := range bs {
		out = append(out, Binding{Pos: b.p, Names: b.names, Tuple: b.tuple, Set: exportExpr(b.set)})
	}
	return out
}

func exportExprs(es []expr) []*Node {
	out := make([]*Node, len(es))
	for i, e := range es {
		out[i] = exportExpr(e)
	}
	return out
}

// exportExpr copies one expression, recursively.
func exportExpr(e expr) *Node {
	if e == nil {
		return nil
	}
	n := &Node{Pos: e.at()}
	switch x := e.(type) {
	case *eIdent:
		n.Kind, n.Name = NIdent, x.name
	case *eNum:
		n.Kind, n.Num = NNum, x.n
	case *eStr:
		n.Kind, n.Str = NStr, x.s
	case *eBool:
		n.Kind, n.Bool = NBool, x.b
	case *eApply:
		n.Kind, n.Name, n.Args = NApply, x.name, exportExprs(x.args)
	case *eOp:
		n.Kind, n.Name, n.Args = NOp, x.op, exportExprs(x.args)
	case *eJunction:
		n.Kind, n.Args = NOr, exportExprs(x.items)
		if x.and {
			n.Kind = NAnd
		}
	case *eQuant:
		n.Kind, n.Name, n.Binds, n.Args = NQuant, x.kind, exportBinds(x.binds), []*Node{exportExpr(x.body)}
	case *eSetEnum:
		n.Kind, n.Args = NSetEnum, exportExprs(x.elems)
	case *eSetFilter:
		n.Kind, n.Binds, n.Args = NSetFilter, exportBinds([]binding{x.bind}), []*Node{exportExpr(x.pred)}
	case *eSetMap:
		n.Kind, n.Binds, n.Args = NSetMap, exportBinds(x.binds), []*Node{exportExpr(x.body)}
	case *eFuncCtor:
		n.Kind, n.Binds, n.Args = NFuncCtor, exportBinds(x.binds), []*Node{exportExpr(x.body)}
	case *eFuncApp:
		n.Kind, n.Args = NFuncApp, append([]*Node{exportExpr(x.f)}, exportExprs(x.args)...)
	case *eField:
		n.Kind, n.Name, n.Args = NField, x.name, []*Node{exportExpr(x.rec)}
	case *eRecord:
		n.Kind, n.Names, n.Args = NRecord, x.names, exportExprs(x.vals)
	case *eRecSet:
		n.Kind, n.Names, n.Args = NRecSet, x.names, exportExprs(x.sets)
	case *eFuncSet:
		n.Kind, n.Args = NFuncSet, []*Node{exportExpr(x.dom), exportExpr(x.rng)}
	case *eExcept:
		n.Kind, n.Args = NExcept, []*Node{exportExpr(x.f)}
		for _, s := range x.specs {
			es := ExceptSpec{Val: exportExpr(s.val)}
			for _, p := range s.path {
				es.Path = append(es.Path, PathElem{Field: p.field, Index: exportExpr(p.idx)})
			}
			n.Excepts = append(n.Excepts, es)
		}
	case *eAt:
		n.Kind = NAt
	case *eTuple:
		n.Kind, n.Args = NTuple, exportExprs(x.elems)
	case *eIf:
		n.Kind, n.Args = NIf, []*Node{exportExpr(x.c), exportExpr(x.t), exportExpr(x.e)}
	case *eCase:
		n.Kind, n.Other = NCase, exportExpr(x.other)
		for _, a := range x.arms {
			n.Arms = append(n.Arms, CaseArm{Cond: exportExpr(a.cond), Val: exportExpr(a.val)})
		}
	case *eLet:
		n.Kind, n.Args = NLet, []*Node{exportExpr(x.body)}
		for _, d := range x.defs {
			n.Defs = append(n.Defs, exportDef(d))
		}
	case *eActSub:
		n.Kind, n.Bool, n.Args = NActSub, x.angle, []*Node{exportExpr(x.act), exportExpr(x.sub)}
	case *eFair:
		n.Kind, n.Bool, n.Args = NFair, x.strong, []*Node{exportExpr(x.sub), exportExpr(x.act)}
	case *eCross:
		n.Kind, n.Args = NCross, exportExprs(x.sets)
	default:
		panic("tlacheck: exportExpr: unknown expression type")
	}
	return n
}
