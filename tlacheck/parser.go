package tlacheck

import (
	"strconv"
)

// parser is a recursive-descent parser with precedence climbing. minCol implements
// the bullet-list column rule: while an item of a /\ or \/ list whose bullet is at
// column c is parsed, any token at column <= c ends the item.
type parser struct {
	toks   []token
	i      int
	minCol int
}

type parseError struct{ err *Error }

func (p *parser) fail(kind error, pos Pos, format string, args ...any) {
	panic(parseError{errAt(kind, pos, format, args...)})
}

// parseModule parses the first module of src.
func parseModule(src string) (m *module, err error) {
	toks, lerr := lex(src)
	if lerr != nil {
		return nil, lerr
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			if pe, ok := r.(parseError); ok {
				err = pe.err
				return
			}
			panic(r)
		}
	}()
	return p.module(), nil
}

func (p *parser) raw() token { return p.toks[p.i] }

func (p *parser) peek() token {
	t := p.toks[p.i]
	if t.kind != tEOF && t.pos.Col <= p.minCol {
		return token{kind: tEOF, pos: t.pos}
	}
	return t
}

func (p *parser) peekAt(k int) token {
	if p.i+k >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	t := p.toks[p.i+k]
	if t.kind != tEOF && t.pos.Col <= p.minCol {
		return token{kind: tEOF, pos: t.pos}
	}
	return t
}

func (p *parser) is(text string) bool {
	t := p.peek()
	return (t.kind == tOp || t.kind == tKw) && t.text == text
}

func (p *parser) next() token {
	t := p.peek()
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) expect(text string) token {
	t := p.peek()
	if !p.is(text) {
		p.fail(ErrParse, t.pos, "expected %q, found %s", text, describe(t))
	}
	p.i++
	return t
}

func (p *parser) expectIdent() token {
	t := p.peek()
	if t.kind != tIdent {
		p.fail(ErrParse, t.pos, "expected an identifier, found %s", describe(t))
	}
	p.i++
	return t
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tStr:
		return strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

var proofWords = map[string]bool{"PROOF": true, "BY": true, "OBVIOUS": true, "OMITTED": true, "QED": true,
	"USE": true, "HIDE": true, "DEFINE": true, "PICK": true, "HAVE": true, "TAKE": true,
	"WITNESS": true, "SUFFICES": true}

// module parses a whole module: its header, then unit by unit up to ====.
func (p *parser) module() *module {
	m := &module{name: p.header()}
	recursive := map[string]bool{}
	for {
		if end := p.unit(m, recursive); end {
			return m
		}
	}
}

// header skips the text before ---- MODULE Name ---- and returns Name.
func (p *parser) header() string {
	for {
		t := p.raw()
		if t.kind == tEOF {
			p.fail(ErrParse, t.pos, "no module header ---- MODULE Name ----")
		}
		if t.kind == tSep && p.toks[p.i+1].kind == tKw && p.toks[p.i+1].text == "MODULE" {
			break
		}
		p.i++
	}
	p.i += 2
	name := p.expectIdent().text
	if p.raw().kind != tSep {
		p.fail(ErrParse, p.raw().pos, "expected ---- after the module name")
	}
	p.i++
	return name
}

// unit parses one module-level unit into m (RECURSIVE names into recursive); end
// is true at the module's ==== line.
func (p *parser) unit(m *module, recursive map[string]bool) (end bool) {
	t := p.raw()
	switch {
	case t.kind == tEnd:
		return true
	case t.kind == tEOF:
		p.fail(ErrParse, t.pos, "module %s has no ==== end line", m.name)
	case t.kind == tSep:
		if p.toks[p.i+1].kind == tKw && p.toks[p.i+1].text == "MODULE" {
			p.fail(ErrUnsupported, t.pos, "nested MODULE is not supported")
		}
		p.i++
	case t.kind == tKw && t.text == "EXTENDS":
		p.i++
		p.commaList(func() { m.extends = append(m.extends, p.expectIdent().text) })
	case t.kind == tKw && (t.text == "CONSTANT" || t.text == "CONSTANTS" || t.text == "VARIABLE" || t.text == "VARIABLES"):
		p.i++
		p.declarations(m, t.text[0] == 'C')
	case t.kind == tKw && (t.text == "ASSUME" || t.text == "ASSUMPTION" || t.text == "AXIOM"):
		p.i++
		p.skipUnitName()
		m.assumes = append(m.assumes, p.expr())
	case t.kind == tKw && (t.text == "THEOREM" || t.text == "LEMMA" || t.text == "PROPOSITION" || t.text == "COROLLARY"):
		p.i++
		p.theorem()
	case t.kind == tKw && t.text == "RECURSIVE":
		p.i++
		p.recursiveDecls(recursive)
	case t.kind == tKw && t.text == "LOCAL":
		p.i++
	case t.kind == tKw && t.text == "INSTANCE":
		p.fail(ErrUnsupported, t.pos, "INSTANCE is not supported")
	case t.kind == tKw && proofWords[t.text]:
		p.fail(ErrUnsupported, t.pos, "proofs (%s) are not supported; keep TLAPS proofs in spec/tlaps/", t.text)
	case t.kind == tIdent:
		d := p.definition()
		d.recursive = recursive[d.name]
		m.defs = append(m.defs, d)
	default:
		if t.kind == tOp && (t.text == "~" || t.text == "-") || t.kind == tIdent {
			p.fail(ErrUnsupported, t.pos, "user-defined prefix operator definitions are not supported")
		}
		p.fail(ErrParse, t.pos, "unexpected %s at module level", describe(t))
	}
	return false
}

// commaList calls item for each element of a comma-separated list (at least one).
func (p *parser) commaList(item func()) {
	for {
		item()
		if !p.is(",") {
			return
		}
		p.i++
	}
}

// exprList parses e1, e2, ... (at least one expression).
func (p *parser) exprList() []expr {
	var out []expr
	p.commaList(func() { out = append(out, p.expr()) })
	return out
}

// declarations parses the names of CONSTANTS (constants true) or VARIABLES.
func (p *parser) declarations(m *module, constants bool) {
	p.commaList(func() {
		id := p.expectIdent()
		if p.is("(") {
			p.fail(ErrUnsupported, id.pos, "operator constant %s(...) is not supported", id.text)
		}
		if constants {
			m.constants = append(m.constants, ident{id.pos, id.text})
		} else {
			m.variables = append(m.variables, ident{id.pos, id.text})
		}
	})
}

// skipUnitName skips the Name == of ASSUME Name == e or THEOREM Name == e.
func (p *parser) skipUnitName() {
	if p.raw().kind == tIdent && p.toks[p.i+1].text == "==" {
		p.i += 2
	}
}

// theorem parses and drops a theorem (theorems are not model-checked) and rejects
// its proof.
func (p *parser) theorem() {
	p.skipUnitName()
	p.expr()
	if r := p.raw(); r.kind == tKw && proofWords[r.text] || r.kind == tOp && r.text == "<" {
		p.fail(ErrUnsupported, r.pos, "proofs (%s) are not supported; keep TLAPS proofs in spec/tlaps/", r.text)
	}
}

// recursiveDecls parses RECURSIVE Op(_, _), ... into recursive.
func (p *parser) recursiveDecls(recursive map[string]bool) {
	p.commaList(func() {
		id := p.expectIdent()
		recursive[id.text] = true
		if p.is("(") {
			for !p.is(")") && p.peek().kind != tEOF {
				p.i++
			}
			p.expect(")")
		}
	})
}

// definition parses Name == e, Name(a, b) == e, or f[x \in S] == e.
func (p *parser) definition() *def {
	id := p.expectIdent()
	d := &def{p: id.pos, name: id.text}
	switch {
	case p.is("=="):
	case p.is("("):
		p.i++
		p.commaList(func() {
			a := p.expectIdent()
			if p.is("(") {
				p.fail(ErrUnsupported, a.pos, "higher-order operator parameter %s(...) is not supported", a.text)
			}
			d.params = append(d.params, a.text)
		})
		p.expect(")")
	case p.is("["):
		p.i++
		d.fnBinds = p.binds()
		p.expect("]")
	default:
		t := p.peek()
		if t.kind == tOp {
			p.fail(ErrUnsupported, t.pos, "user-defined infix operator %s is not supported", t.text)
		}
		p.fail(ErrParse, t.pos, "expected == after %s, found %s", id.text, describe(t))
	}
	p.expect("==")
	d.body = p.expr()
	return d
}

func (p *parser) expr() expr { return p.binary(0) }

type opInfo struct {
	lo, hi int
	left   bool
}

var infixOps = map[string]opInfo{
	"=>": {1, 1, false}, "<=>": {2, 2, false}, "\\equiv": {2, 2, false},
	"/\\": {3, 3, true}, "\\land": {3, 3, true}, "\\/": {3, 3, true}, "\\lor": {3, 3, true},
	"=": {5, 5, false}, "#": {5, 5, false}, "/=": {5, 5, false}, "<": {5, 5, false},
	">": {5, 5, false}, "<=": {5, 5, false}, "=<": {5, 5, false}, ">=": {5, 5, false},
	"\\leq": {5, 5, false}, "\\geq": {5, 5, false}, "\\in": {5, 5, false},
	"\\notin": {5, 5, false}, "\\subseteq": {5, 5, false}, "\\subset": {5, 5, false},
	"\\supseteq": {5, 5, false}, "\\supset": {5, 5, false},
	"@@": {6, 6, true}, ":>": {7, 7, false},
	"\\cup": {8, 8, true}, "\\union": {8, 8, true}, "\\cap": {8, 8, true},
	"\\intersect": {8, 8, true}, "\\": {8, 8, true},
	"..": {9, 9, false}, "+": {10, 10, true}, "-": {11, 11, true},
	"\\X": {10, 13, true}, "\\times": {10, 13, true},
	"*": {13, 13, true}, "/": {13, 13, false}, "\\div": {13, 13, false}, "%": {10, 11, false},
	"\\o": {13, 13, true}, "\\circ": {13, 13, true}, "^": {14, 14, false},
	// temporal and other operators, parsed only to be rejected with a clear message
	"~>": {2, 2, false}, "-+->": {2, 2, false}, "\\cdot": {5, 14, true},
}

var unsupportedInfix = map[string]string{
	"~>": "leads-to (~>)", "-+->": "guarantee (-+->)", "\\cdot": "action composition (\\cdot)",
	"\\prec": "\\prec", "\\preceq": "\\preceq", "\\succ": "\\succ", "\\succeq": "\\succeq",
	"\\sqsubset": "\\sqsubset", "\\sqsubseteq": "\\sqsubseteq", "\\sqsupset": "\\sqsupset",
	"\\sqsupseteq": "\\sqsupseteq", "\\sqcap": "\\sqcap", "\\sqcup": "\\sqcup",
	"\\oplus": "\\oplus", "\\ominus": "\\ominus", "\\otimes": "\\otimes", "\\oslash": "\\oslash",
	"\\odot": "\\odot", "\\uplus": "\\uplus", "\\bullet": "\\bullet", "\\star": "\\star",
	"\\bigcirc": "\\bigcirc", "\\sim": "\\sim", "\\simeq": "\\simeq", "\\asymp": "\\asymp",
	"\\approx": "\\approx", "\\cong": "\\cong", "\\doteq": "\\doteq", "\\propto": "\\propto",
	"\\wr": "\\wr", "\\ll": "\\ll", "\\gg": "\\gg", "\\mid": "\\mid", "\\models": "\\models",
	"++": "++", "**": "**", "||": "||", "&": "&", "$": "$", "??": "??", "|": "|",
}

func canonOp(op string) string {
	switch op {
	case "\\land":
		return "/\\"
	case "\\lor":
		return "\\/"
	case "\\equiv":
		return "<=>"
	case "/=":
		return "#"
	case "=<", "\\leq":
		return "<="
	case "\\geq":
		return ">="
	case "\\union":
		return "\\cup"
	case "\\intersect":
		return "\\cap"
	case "\\times":
		return "\\X"
	case "\\circ":
		return "\\o"
	case "\\lnot", "\\neg":
		return "~"
	}
	return op
}

func (p *parser) binary(minPrec int) expr {
	left := p.unary()
	for {
		t := p.peek()
		if t.kind != tOp {
			return left
		}
		if name, bad := unsupportedInfix[t.text]; bad {
			p.fail(ErrUnsupported, t.pos, "operator %s is not supported", name)
		}
		info, ok := infixOps[t.text]
		if !ok || info.lo < minPrec {
			return left
		}
		p.i++
		op := canonOp(t.text)
		if op == "\\X" {
			sets := []expr{left, p.binary(14)}
			for p.is("\\X") || p.is("\\times") {
				p.i++
				sets = append(sets, p.binary(14))
			}
			left = &eCross{p: t.pos, sets: sets}
			continue
		}
		right := p.binary(info.hi + 1)
		if op == "/\\" || op == "\\/" {
			and := op == "/\\"
			if j, ok := left.(*eJunction); ok && j.and == and {
				j.items = append(j.items, right)
				continue
			}
			left = &eJunction{p: left.at(), and: and, items: []expr{left, right}}
			continue
		}
		left = &eOp{p: t.pos, op: op, args: []expr{left, right}}
	}
}

var prefixPrec = map[string]int{
	"~": 4, "\\lnot": 4, "\\neg": 4, "[]": 4, "<>": 4, "ENABLED": 4, "UNCHANGED": 4,
	"SUBSET": 8, "UNION": 8, "DOMAIN": 9, "-": 12,
}

func (p *parser) unary() expr {
	t := p.peek()
	if (t.kind == tOp || t.kind == tKw) && t.text != "" {
		if prec, ok := prefixPrec[t.text]; ok {
			p.i++
			op := canonOp(t.text)
			if op == "-" {
				op = "neg"
			}
			hi := prec
			if op == "[]" || op == "<>" || op == "ENABLED" || op == "UNCHANGED" {
				hi = 15
			}
			arg := p.binary(hi + 1)
			if op == "neg" {
				if n, ok := arg.(*eNum); ok {
					return &eNum{p: t.pos, n: -n.n}
				}
			}
			return &eOp{p: t.pos, op: op, args: []expr{arg}}
		}
	}
	return p.postfix(p.primary())
}

func (p *parser) postfix(e expr) expr {
	for {
		t := p.peek()
		if t.kind != tOp {
			return e
		}
		switch t.text {
		case "'":
			p.i++
			e = &eOp{p: t.pos, op: "'", args: []expr{e}}
		case "[":
			p.i++
			args := p.exprList()
			p.expect("]")
			e = &eFuncApp{p: t.pos, f: e, args: args}
		case ".":
			p.i++
			f := p.peek()
			if f.kind != tIdent && f.kind != tKw {
				p.fail(ErrParse, f.pos, "expected a field name after '.'")
			}
			p.i++
			e = &eField{p: t.pos, rec: e, name: f.text}
		default:
			return e
		}
	}
}

func (p *parser) primary() expr {
	t := p.peek()
	switch t.kind {
	case tEOF:
		p.fail(ErrParse, t.pos, "unexpected end of expression (check the indentation of /\\ and \\/ bullets)")
	case tNum:
		p.i++
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.fail(ErrParse, t.pos, "number %s out of range", t.text)
		}
		return &eNum{p: t.pos, n: n}
	case tStr:
		p.i++
		return &eStr{p: t.pos, s: t.text}
	case tIdent:
		p.i++
		return p.nameOrApply(t)
	case tFair:
		p.i++
		sub := p.subscript()
		p.expect("(")
		act := p.expr()
		p.expect(")")
		return &eFair{p: t.pos, strong: t.text == "SF_", sub: sub, act: act}
	case tKw:
		return p.keywordExpr(t)
	case tOp:
		return p.operatorExpr(t)
	}
	p.fail(ErrParse, t.pos, "unexpected %s", describe(t))
	return nil
}

// nameOrApply parses what follows the identifier t: a name, or Op(args).
func (p *parser) nameOrApply(t token) expr {
	if p.is("(") {
		p.i++
		args := p.exprList()
		p.expect(")")
		if p.is("!") {
			p.fail(ErrUnsupported, p.peek().pos, "module instance reference (!) is not supported")
		}
		return &eApply{p: t.pos, name: t.text, args: args}
	}
	if p.is("!") {
		p.fail(ErrUnsupported, p.peek().pos, "module instance reference (!) is not supported")
	}
	return &eIdent{p: t.pos, name: t.text}
}

// keywordExpr parses an expression that starts with the keyword t.
func (p *parser) keywordExpr(t token) expr {
	switch t.text {
	case "TRUE", "FALSE":
		p.i++
		return &eBool{p: t.pos, b: t.text == "TRUE"}
	case "BOOLEAN", "STRING":
		p.i++
		return &eIdent{p: t.pos, name: t.text}
	case "IF":
		p.i++
		c := p.expr()
		p.expect("THEN")
		a := p.expr()
		p.expect("ELSE")
		b := p.expr()
		return &eIf{p: t.pos, c: c, t: a, e: b}
	case "CASE":
		p.i++
		return p.caseArms(t)
	case "LET":
		p.i++
		return p.let(t)
	case "CHOOSE":
		p.i++
		b := p.binds()
		p.expect(":")
		return &eQuant{p: t.pos, kind: "CHOOSE", binds: b, body: p.expr()}
	case "LAMBDA":
		p.fail(ErrUnsupported, t.pos, "LAMBDA is not supported")
	case "INSTANCE":
		p.fail(ErrUnsupported, t.pos, "INSTANCE is not supported")
	}
	p.fail(ErrParse, t.pos, "unexpected %s", t.text)
	return nil
}

// caseArms parses the arms of CASE (t) up to OTHER or the last arm.
func (p *parser) caseArms(t token) expr {
	ce := &eCase{p: t.pos}
	for {
		if p.is("OTHER") {
			p.i++
			p.expect("->")
			ce.other = p.expr()
			break
		}
		c := p.expr()
		p.expect("->")
		v := p.expr()
		ce.arms = append(ce.arms, caseArm{c, v})
		if !p.is("[]") {
			break
		}
		p.i++
	}
	return ce
}

// let parses the definitions and the body of LET (t) ... IN e.
func (p *parser) let(t token) expr {
	le := &eLet{p: t.pos}
	for !p.is("IN") {
		r := p.peek()
		if r.kind == tKw && r.text == "RECURSIVE" {
			p.fail(ErrUnsupported, r.pos, "RECURSIVE inside LET is not supported")
		}
		if r.kind != tIdent {
			p.fail(ErrParse, r.pos, "expected a definition or IN in LET, found %s", describe(r))
		}
		le.defs = append(le.defs, p.definition())
	}
	p.i++
	le.body = p.expr()
	return le
}

// operatorExpr parses an expression that starts with the operator or bracket t.
func (p *parser) operatorExpr(t token) expr {
	switch t.text {
	case "(":
		p.i++
		e := p.expr()
		p.expect(")")
		return e
	case "/\\", "\\/", "\\land", "\\lor":
		return p.bullets()
	case "\\A", "\\E":
		p.i++
		b := p.binds()
		p.expect(":")
		return &eQuant{p: t.pos, kind: t.text, binds: b, body: p.expr()}
	case "\\AA", "\\EE":
		p.fail(ErrUnsupported, t.pos, "temporal quantifier %s is not supported", t.text)
	case "@":
		p.i++
		return &eAt{p: t.pos}
	case "{":
		return p.braces()
	case "[":
		return p.brackets()
	case "<<":
		p.i++
		return p.angle(t)
	}
	p.fail(ErrParse, t.pos, "unexpected %s", describe(t))
	return nil
}

// angle parses what follows << (t): a tuple <<...>> or an action <<A>>_v.
func (p *parser) angle(t token) expr {
	var elems []expr
	if !p.is(">>") && !p.is(">>_") {
		elems = p.exprList()
	}
	if p.is(">>_") {
		p.i++
		if len(elems) != 1 {
			p.fail(ErrParse, t.pos, "<<A>>_v takes one action")
		}
		return &eActSub{p: t.pos, angle: true, act: elems[0], sub: p.subscript()}
	}
	p.expect(">>")
	return &eTuple{p: t.pos, elems: elems}
}

// subscript parses the v of [A]_v, <<A>>_v, WF_v(A): a name or a tuple.
func (p *parser) subscript() expr {
	t := p.peek()
	if t.kind == tIdent {
		p.i++
		return &eIdent{p: t.pos, name: t.text}
	}
	if p.is("<<") {
		p.i++
		elems := p.exprList()
		p.expect(">>")
		return &eTuple{p: t.pos, elems: elems}
	}
	if p.is("(") {
		p.i++
		e := p.expr()
		p.expect(")")
		return e
	}
	p.fail(ErrParse, t.pos, "expected a subscript (a name or <<...>>), found %s", describe(t))
	return nil
}

// bullets parses a /\ or \/ bullet list; its bullets all sit at one column.
func (p *parser) bullets() expr {
	first := p.peek()
	op := canonOp(first.text)
	col := first.pos.Col
	j := &eJunction{p: first.pos, and: op == "/\\"}
	saved := p.minCol
	for {
		t := p.peek()
		if t.kind != tOp || canonOp(t.text) != op || t.pos.Col != col {
			break
		}
		p.i++
		p.minCol = col
		j.items = append(j.items, p.expr())
		p.minCol = saved
	}
	if len(j.items) == 1 {
		return j.items[0]
	}
	return j
}

// binds parses x \in S, y, z \in T, <<a, b>> \in U.
func (p *parser) binds() []binding {
	var out []binding
	for {
		b := binding{p: p.peek().pos}
		if p.is("<<") {
			p.i++
			b.tuple = true
			p.commaList(func() { b.names = append(b.names, p.expectIdent().text) })
			p.expect(">>")
		} else {
			for {
				b.names = append(b.names, p.expectIdent().text)
				if !p.is(",") || p.peekAt(1).kind != tIdent {
					break
				}
				p.i++
			}
		}
		if !p.is("\\in") {
			t := p.peek()
			if t.kind == tOp && t.text == ":" {
				p.fail(ErrUnsupported, b.p, "unbounded quantifier or CHOOSE (no \\in S) is not supported")
			}
			p.fail(ErrParse, t.pos, "expected \\in in a binding, found %s", describe(t))
		}
		p.i++
		b.set = p.expr()
		out = append(out, b)
		if !p.is(",") {
			return out
		}
		p.i++
	}
}

func (p *parser) braces() expr {
	open := p.expect("{")
	if p.is("}") {
		p.i++
		return &eSetEnum{p: open.pos}
	}
	first := p.expr()
	if p.is(":") {
		p.i++
		if in, ok := first.(*eOp); ok && in.op == "\\in" {
			var b binding
			switch lhs := in.args[0].(type) {
			case *eIdent:
				b = binding{p: lhs.p, names: []string{lhs.name}, set: in.args[1]}
			case *eTuple:
				b = binding{p: lhs.p, tuple: true, set: in.args[1]}
				for _, e := range lhs.elems {
					id, ok := e.(*eIdent)
					if !ok {
						p.fail(ErrParse, e.at(), "expected a name in <<...>> \\in S")
					}
					b.names = append(b.names, id.name)
				}
			}
			if b.names != nil {
				pred := p.expr()
				p.expect("}")
				return &eSetFilter{p: open.pos, bind: b, pred: pred}
			}
		}
		binds := p.binds()
		p.expect("}")
		return &eSetMap{p: open.pos, body: first, binds: binds}
	}
	elems := []expr{first}
	for p.is(",") {
		p.i++
		elems = append(elems, p.expr())
	}
	p.expect("}")
	return &eSetEnum{p: open.pos, elems: elems}
}

func (p *parser) brackets() expr {
	open := p.expect("[")
	t0, t1 := p.peek(), p.peekAt(1)
	if t0.kind == tIdent && t1.kind == tOp && (t1.text == "|->" || t1.text == ":") {
		return p.record(open, t1.text == "|->")
	}
	// [x \in S, y \in T |-> e]
	if t0.kind == tIdent || (t0.kind == tOp && t0.text == "<<") {
		save := p.i
		if binds, ok := p.tryBinds(); ok && p.is("|->") {
			p.i++
			body := p.expr()
			p.expect("]")
			return &eFuncCtor{p: open.pos, binds: binds, body: body}
		}
		p.i = save
	}
	e := p.expr()
	switch {
	case p.is("->"):
		p.i++
		rng := p.expr()
		p.expect("]")
		return &eFuncSet{p: open.pos, dom: e, rng: rng}
	case p.is("EXCEPT"):
		p.i++
		return p.except(open, e)
	case p.is("]_"):
		p.i++
		return &eActSub{p: open.pos, act: e, sub: p.subscript()}
	}
	p.fail(ErrParse, p.peek().pos, "expected ->, EXCEPT, |-> or ]_ in [...], found %s", describe(p.peek()))
	return nil
}

// record parses the fields of a record [a |-> e, ...] (rec) or of a record set
// [a : S, ...], after the opening bracket open.
func (p *parser) record(open token, rec bool) expr {
	var names []string
	var vals []expr
	p.commaList(func() {
		names = append(names, p.expectIdent().text)
		if rec {
			p.expect("|->")
		} else {
			p.expect(":")
		}
		vals = append(vals, p.expr())
	})
	p.expect("]")
	if rec {
		return &eRecord{p: open.pos, names: names, vals: vals}
	}
	return &eRecSet{p: open.pos, names: names, sets: vals}
}

// except parses the ![...] = e, ... updates of [f EXCEPT ...] and the closing bracket.
func (p *parser) except(open token, f expr) expr {
	ex := &eExcept{p: open.pos, f: f}
	p.commaList(func() {
		p.expect("!")
		spec := exceptSpec{path: p.exceptPath()}
		p.expect("=")
		spec.val = p.expr()
		ex.specs = append(ex.specs, spec)
	})
	p.expect("]")
	return ex
}

// exceptPath parses the .field and [index] steps after ! in EXCEPT (at least one).
func (p *parser) exceptPath() []pathElem {
	var path []pathElem
	for {
		switch {
		case p.is("."):
			p.i++
			f := p.next()
			path = append(path, pathElem{field: f.text})
		case p.is("["):
			bp := p.next().pos
			args := p.exprList()
			p.expect("]")
			idx := args[0]
			if len(args) > 1 {
				idx = &eTuple{p: bp, elems: args}
			}
			path = append(path, pathElem{idx: idx})
		default:
			if len(path) == 0 {
				p.fail(ErrParse, p.peek().pos, "expected ![...] or !.field in EXCEPT")
			}
			return path
		}
	}
}

// tryBinds parses bindings without failing; ok is false when the tokens are not bindings.
func (p *parser) tryBinds() (b []binding, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isPE := r.(parseError); isPE {
				b, ok = nil, false
				return
			}
			panic(r)
		}
	}()
	return p.binds(), true
}
