package mutation

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/internal/goast"
)

// edit is a candidate mutation proposed by an operator, before type checking.
type edit struct {
	op    Operator
	start token.Pos // replaced range [start, end); start == end is an insertion
	end   token.Pos
	repl  string
	alt   string   // fallback replacement that keeps variables used, if repl does not compile
	ctx   ast.Node // the enclosing statement or declaration, hashed into the id
	// host is the smallest expression or statement that a mutant schema can wrap to
	// switch this edit on at run time (schema.go); nil when it cannot be wrapped.
	host     ast.Node
	hostKind hostKind
	fn       string
	span     [2]token.Pos // lines this mutant belongs to, for --diff
	body     bool
}

// fileGen proposes the edits for one file.
type fileGen struct {
	fset  *token.FileSet
	info  *types.Info
	pkg   *types.Package
	file  *ast.File
	src   []byte
	base  int // file base offset in fset
	edits []edit
	fn    string
	body  bool
	stmt  ast.Node
	scope ast.Node // enclosing function declaration, for --diff spans of insertions
}

func (g *fileGen) text(n ast.Node) string {
	return string(g.src[g.off(n.Pos()):g.off(n.End())])
}

func (g *fileGen) off(p token.Pos) int { return g.fset.Position(p).Offset }

// hostKind says how a schema switches a host between its variants.
type hostKind int

const (
	hostNone   hostKind = iota
	hostExpr            // func() T { if on(k) { return variant }; return original }()
	hostStmt            // if on(k) { variant } else { original }
	hostInsert          // if on(k) { inserted }
)

func (g *fileGen) add(op Operator, start, end token.Pos, repl string, host ast.Node, kind hostKind) {
	if !g.body || host == nil {
		host, kind = nil, hostNone // package-level code is never wrapped
	}
	g.edits = append(g.edits, edit{
		op: op, start: start, end: end, repl: repl, ctx: g.stmt, fn: g.fn,
		span: [2]token.Pos{start, end}, body: g.body, host: host, hostKind: kind,
	})
}

// inList reports whether parent holds its statements in a list, where a statement
// can be wrapped in an if (a for statement's init and post cannot).
func inList(parent ast.Node) bool {
	switch parent.(type) {
	case *ast.BlockStmt, *ast.CaseClause, *ast.CommClause:
		return true
	}
	return false
}

func stmtHost(s ast.Stmt, parent ast.Node) (ast.Node, hostKind) {
	if inList(parent) {
		return s, hostStmt
	}
	return nil, hostNone
}

// generate walks the file and collects every operator's edits.
func (g *fileGen) generate() []edit {
	for _, d := range g.file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.fn = goast.FuncName(d)
			g.stmt = d
			g.body = false
			if d.Body == nil {
				continue
			}
			g.earlyReturn(d)
			g.body = true
			g.walk(d.Body)
		case *ast.GenDecl:
			g.fn = ""
			g.body = false
			for _, s := range d.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok {
					continue
				}
				g.stmt = vs
				for _, v := range vs.Values {
					g.walk(v)
				}
			}
		}
	}
	return g.edits
}

// walk visits a subtree, tracking the innermost statement for id contexts.
func (g *fileGen) walk(root ast.Node) {
	type frame struct {
		node ast.Node
		stmt ast.Node // g.stmt before entering node
	}
	var stack []frame
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			g.stmt = top.stmt
			return false
		}
		var parent ast.Node
		if len(stack) > 0 {
			parent = stack[len(stack)-1].node
		}
		if _, ok := n.(*ast.ArrayType); ok {
			// An array length is a type: changing it changes types, not behaviour.
			return false
		}
		stack = append(stack, frame{n, g.stmt})
		if s, ok := n.(ast.Stmt); ok {
			if _, isBlock := n.(*ast.BlockStmt); !isBlock {
				g.stmt = s
			}
		}
		switch n := n.(type) {
		case *ast.BinaryExpr:
			g.binary(n)
		case *ast.UnaryExpr:
			if n.Op == token.NOT {
				g.add(OpBoolean, n.Pos(), n.End(), g.text(n.X), n, hostExpr)
			}
		case *ast.BasicLit:
			g.literal(n, parent)
		case *ast.Ident:
			g.boolIdent(n)
		case *ast.IfStmt:
			g.condition(n.Cond)
		case *ast.ForStmt:
			if n.Cond != nil {
				g.condition(n.Cond)
			}
		case *ast.BlockStmt:
			g.block(n.List)
		case *ast.CaseClause:
			g.block(n.Body)
		case *ast.CommClause:
			g.block(n.Body)
		case *ast.AssignStmt:
			g.assignOp(n, parent)
		case *ast.IncDecStmt:
			if isNumeric(g.info.TypeOf(n.X)) {
				tok := "--"
				if n.Tok == token.DEC {
					tok = "++"
				}
				h, k := stmtHost(n, parent)
				g.add(OpArith, n.TokPos, n.TokPos+2, tok, h, k)
			}
		case *ast.CallExpr:
			g.callExpr(n, parent)
		}
		return true
	})
}

var negated = map[token.Token]token.Token{
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.GTR: token.LEQ, token.LEQ: token.GTR,
}

var boundary = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS,
	token.GTR: token.GEQ, token.GEQ: token.GTR,
}

var arith = map[token.Token]token.Token{
	token.ADD: token.SUB, token.SUB: token.ADD,
	token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL,
	token.AND: token.OR, token.OR: token.AND, token.XOR: token.AND,
	token.SHL: token.SHR, token.SHR: token.SHL, token.AND_NOT: token.AND,
}

var arithAssign = map[token.Token]token.Token{
	token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
	token.REM_ASSIGN: token.MUL_ASSIGN,
	token.AND_ASSIGN: token.OR_ASSIGN, token.OR_ASSIGN: token.AND_ASSIGN,
	token.XOR_ASSIGN: token.AND_ASSIGN,
	token.SHL_ASSIGN: token.SHR_ASSIGN, token.SHR_ASSIGN: token.SHL_ASSIGN,
	token.AND_NOT_ASSIGN: token.AND_ASSIGN,
}

func (g *fileGen) binary(n *ast.BinaryExpr) {
	if g.isConst(n) {
		return // folded by the compiler into one constant: mutate its literals instead
	}
	opEnd := n.OpPos + token.Pos(len(n.Op.String()))
	if t, ok := negated[n.Op]; ok {
		g.add(OpNegateCond, n.OpPos, opEnd, t.String(), n, hostExpr)
	}
	if t, ok := boundary[n.Op]; ok {
		g.add(OpBoundary, n.OpPos, opEnd, t.String(), n, hostExpr)
	}
	switch n.Op {
	case token.LAND:
		g.add(OpBoolean, n.OpPos, opEnd, "||", n, hostExpr)
	case token.LOR:
		g.add(OpBoolean, n.OpPos, opEnd, "&&", n, hostExpr)
	}
	if t, ok := arith[n.Op]; ok && isNumeric(g.info.TypeOf(n)) {
		g.add(OpArith, n.OpPos, opEnd, t.String(), n, hostExpr)
	}
}

func (g *fileGen) isConst(e ast.Expr) bool {
	tv, ok := g.info.Types[e]
	return ok && tv.Value != nil
}

func (g *fileGen) assignOp(n *ast.AssignStmt, parent ast.Node) {
	if t, ok := arithAssign[n.Tok]; ok && len(n.Lhs) == 1 && isNumeric(g.info.TypeOf(n.Lhs[0])) {
		h, k := stmtHost(n, parent)
		g.add(OpArith, n.TokPos, n.TokPos+token.Pos(len(n.Tok.String())), t.String(), h, k)
	}
}

// condition negates an if or for condition that is not already a comparison or a
// logical expression (those have their own operators).
func (g *fileGen) condition(cond ast.Expr) {
	switch c := ast.Unparen(cond).(type) {
	case *ast.BinaryExpr:
		if _, ok := negated[c.Op]; ok || c.Op == token.LAND || c.Op == token.LOR {
			return
		}
	case *ast.UnaryExpr:
		if c.Op == token.NOT {
			return
		}
	}
	if g.isConst(cond) {
		return
	}
	g.add(OpNegateCond, cond.Pos(), cond.End(), "!("+g.text(cond)+")", cond, hostExpr)
}

func (g *fileGen) literal(n *ast.BasicLit, parent ast.Node) {
	if n.Kind != token.INT {
		return
	}
	v := constant.MakeFromLiteral(n.Value, n.Kind, 0)
	if v.Kind() != constant.Int {
		return
	}
	if _, ok := parent.(*ast.ImportSpec); ok {
		return
	}
	next := constant.BinaryOp(v, token.ADD, constant.MakeInt64(1))
	g.add(OpConstant, n.Pos(), n.End(), next.ExactString(), n, hostExpr)
}

func (g *fileGen) boolIdent(n *ast.Ident) {
	obj, ok := g.info.Uses[n].(*types.Const)
	if !ok || obj.Pkg() != nil || (n.Name != "true" && n.Name != "false") {
		return // only the universe's true and false, not a shadowing declaration
	}
	repl := "false"
	if n.Name == "false" {
		repl = "true"
	}
	g.add(OpConstant, n.Pos(), n.End(), repl, n, hostExpr)
}

// block proposes the removal of each removable statement of a statement list.
func (g *fileGen) block(list []ast.Stmt) {
	for _, s := range list {
		saved := g.stmt
		g.stmt = s
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				break
			}
			op := OpRemoveStmt
			if w := g.writeKind(s); w != "" {
				op = w
			}
			g.remove(op, s)
		case *ast.IncDecStmt:
			g.remove(OpRemoveStmt, s)
		case *ast.ExprStmt:
			call, ok := ast.Unparen(s.X).(*ast.CallExpr)
			if !ok {
				break
			}
			if op := g.callKind(call); op != "" {
				g.remove(op, s)
			}
		case *ast.DeferStmt:
			if g.callKind(s.Call) == OpUnlockDrop {
				g.remove(OpUnlockDrop, s)
			}
		}
		g.stmt = saved
	}
}

// writeKind classifies an assignment that writes a map or slice element, or appends.
func (g *fileGen) writeKind(s *ast.AssignStmt) Operator {
	for _, l := range s.Lhs {
		if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok {
			switch under(g.info.TypeOf(ix.X)).(type) {
			case *types.Map:
				return OpMapWrite
			case *types.Slice, *types.Array, *types.Pointer:
				return OpSliceWrite
			}
		}
	}
	if s.Tok == token.ASSIGN && len(s.Rhs) == 1 {
		if call, ok := ast.Unparen(s.Rhs[0]).(*ast.CallExpr); ok && g.isBuiltin(call, "append") {
			return OpSliceWrite
		}
	}
	return ""
}

func under(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	return t.Underlying()
}

func (g *fileGen) isBuiltin(call *ast.CallExpr, name string) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	b, ok := g.info.Uses[id].(*types.Builtin)
	return ok && b.Name() == name
}

// callKind classifies a call statement: which operator removes it ("" for none).
func (g *fileGen) callKind(call *ast.CallExpr) Operator {
	switch {
	case g.isBuiltin(call, "delete"):
		return OpMapWrite
	case g.isBuiltin(call, "copy"):
		return OpSliceWrite
	case g.isBuiltin(call, "clear") && len(call.Args) == 1:
		if _, ok := under(g.info.TypeOf(call.Args[0])).(*types.Map); ok {
			return OpMapWrite
		}
		return OpSliceWrite
	}
	if tv, ok := g.info.Types[call.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return "" // conversions and the other builtins (panic, print, close) stay
	}
	name, recv := g.callee(call)
	switch name {
	case "Unlock", "RUnlock":
		if isSyncType(recv, "Mutex", "RWMutex") {
			return OpUnlockDrop
		}
	case "Wait":
		if isSyncType(recv, "WaitGroup", "Cond") || returnsOnlyError(g.info.TypeOf(call.Fun)) {
			return OpWaitDrop
		}
	case "Sync", "Fsync", "Fdatasync":
		return OpSyncDrop
	}
	return OpRemoveCall
}

// callee names the called function and, for a method, the receiver's type.
func (g *fileGen) callee(call *ast.CallExpr) (string, types.Type) {
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		return f.Name, nil
	case *ast.SelectorExpr:
		if sel, ok := g.info.Selections[f]; ok {
			return f.Sel.Name, sel.Recv()
		}
		return f.Sel.Name, nil
	}
	return "", nil
}

func isSyncType(t types.Type, names ...string) bool {
	if t == nil {
		return false
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != "sync" {
		return false
	}
	for _, name := range names {
		if n.Obj().Name() == name {
			return true
		}
	}
	return false
}

func returnsOnlyError(t types.Type) bool {
	sig, ok := under(t).(*types.Signature)
	if !ok || sig.Results().Len() != 1 {
		return false
	}
	return types.Identical(sig.Results().At(0).Type(), types.Universe.Lookup("error").Type())
}

// callExpr handles a Sync, Fsync or Wait whose error result is used in an expression:
// the call is replaced by a nil error.
func (g *fileGen) callExpr(call *ast.CallExpr, parent ast.Node) {
	if _, ok := parent.(*ast.ExprStmt); ok {
		return // statements are handled by block
	}
	if _, ok := parent.(*ast.DeferStmt); ok {
		return
	}
	if _, ok := parent.(*ast.GoStmt); ok {
		return
	}
	if !returnsOnlyError(g.info.TypeOf(call.Fun)) {
		return
	}
	op := g.callKind(call)
	if op != OpSyncDrop && op != OpWaitDrop {
		return
	}
	g.add(op, call.Pos(), call.End(), "error(nil)", call, hostExpr)
	if keep := g.liveVars(call); len(keep) > 0 {
		g.edits[len(g.edits)-1].alt = "func(...any) error { return nil }(" + strings.Join(keep, ", ") + ")"
	}
}

// remove deletes a statement; if that leaves a variable unused, the fallback replaces
// it by uses of the local variables it mentions, so the mutant still compiles.
func (g *fileGen) remove(op Operator, s ast.Stmt) {
	g.add(op, s.Pos(), s.End(), "", s, hostStmt)
	keep := g.liveVars(s)
	alt := ""
	for i, v := range keep {
		if i > 0 {
			alt += "; "
		}
		alt += "_ = " + v
	}
	g.edits[len(g.edits)-1].alt = alt
}

// liveVars lists the local variables used in n and declared outside it, sorted.
func (g *fileGen) liveVars(n ast.Node) []string {
	seen := map[string]bool{}
	ast.Inspect(n, func(x ast.Node) bool {
		id, ok := x.(*ast.Ident)
		if !ok {
			return true
		}
		v, ok := g.info.Uses[id].(*types.Var)
		if !ok || v.IsField() || v.Parent() == nil || v.Parent() == g.pkg.Scope() || v.Pkg() != g.pkg {
			return true
		}
		if v.Pos() >= n.Pos() && v.Pos() < n.End() {
			return true
		}
		seen[id.Name] = true
		return true
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// earlyReturn inserts a return of zero values at the top of a function.
func (g *fileGen) earlyReturn(d *ast.FuncDecl) {
	if len(d.Body.List) == 0 {
		return
	}
	if _, ok := d.Body.List[0].(*ast.ReturnStmt); ok {
		return
	}
	obj, ok := g.info.Defs[d.Name].(*types.Func)
	if !ok {
		return
	}
	sig := obj.Type().(*types.Signature)
	var zeros []string
	for i := 0; i < sig.Results().Len(); i++ {
		z, ok := g.zero(sig.Results().At(i).Type())
		if !ok {
			return
		}
		zeros = append(zeros, z)
	}
	repl := " return"
	if len(zeros) > 0 {
		repl += " " + strings.Join(zeros, ", ")
	}
	repl += ";"
	at := d.Body.Lbrace + 1
	g.edits = append(g.edits, edit{
		op: OpEarlyReturn, start: at, end: at, repl: repl, ctx: d, fn: g.fn,
		span: [2]token.Pos{d.Pos(), d.End()}, body: true, hostKind: hostInsert,
	})
}

// zero spells the zero value of t in this file, if it can.
func (g *fileGen) zero(t types.Type) (string, bool) {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsBoolean != 0:
			return "false", true
		case u.Info()&types.IsNumeric != 0:
			return "0", true
		case u.Info()&types.IsString != 0:
			return `""`, true
		case u.Kind() == types.UnsafePointer:
			return "nil", true
		}
		return "", false
	case *types.Pointer, *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface:
		if _, isParam := t.(*types.TypeParam); isParam {
			break
		}
		return "nil", true
	}
	s, ok := g.spell(t)
	if !ok {
		return "", false
	}
	if _, isParam := t.(*types.TypeParam); isParam {
		return "*new(" + s + ")", true
	}
	return s + "{}", true
}

// spell writes type t as this file can name it (untyped constants get their default
// type), or reports that it cannot (a package the file does not import).
func (g *fileGen) spell(t types.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
		t = types.Default(t)
		if b, ok := t.(*types.Basic); ok && b.Kind() == types.UntypedNil {
			return "", false
		}
	}
	ok := true
	s := types.TypeString(t, func(p *types.Package) string {
		if p == g.pkg {
			return ""
		}
		for _, imp := range g.file.Imports {
			if strings.Trim(imp.Path.Value, `"`) == p.Path() {
				if imp.Name != nil {
					return imp.Name.Name
				}
				return p.Name()
			}
		}
		ok = false
		return p.Name()
	})
	return s, ok
}

func isNumeric(t types.Type) bool {
	if t == nil {
		return false
	}
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsNumeric != 0
}

// describe renders an edit for error messages.
func (e edit) describe() string { return fmt.Sprintf("%s %q", e.op, e.repl) }
