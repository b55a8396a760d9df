package smt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/tlacheck"
)

// Refusal is a construct the translation does not support, with its position:
// refused rather than approximated, so that no obligation is weaker than the spec.
type Refusal struct {
	File string
	Pos  tlacheck.Pos
	Msg  string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s:%d:%d: not translated to SMT: %s", r.File, r.Pos.Line, r.Pos.Col, r.Msg)
}

// refuse stops the translation at pos; Translate recovers it into a *Refusal.
func (tr *translator) refuse(pos tlacheck.Pos, format string, args ...any) {
	panic(&Refusal{File: tr.file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// val is a translated expression. Scalars always have a term; sets, functions and
// records may be known only by their membership, application or fields (lazy), so
// that comprehensions, EXCEPTs and unions need no lambda: they are compared
// pointwise under a quantifier where they meet.
type val struct {
	t       *typ
	term    string             // the SMT term, "" when the value is lazy
	mem     func(x val) string // kSet: membership of x
	app     func(x val) val    // kFun: application to x
	fields  map[string]val     // kRec, lazy
	enum    []val              // kSet: the elements, when isEnum
	isEnum  bool
	lo, hi  string // kSet of Int: lo..hi, when isRange
	isRange bool
	whole   bool // kSet: every value of the element type (Runs, BOOLEAN, Int)
	// rebuild, when set, builds the value again at a more specific type (an IF whose
	// branches hold a {} of unknown type), so that it can still become a term.
	rebuild func(t *typ) val
}

// constInfo is one CONSTANT: an uninterpreted sort (a set of model values) or an integer.
type constInfo struct {
	isInt bool
}

type memoKey struct {
	name   string
	primed bool
}

// env is a scope of bound names: bound variables, parameters, LET definitions.
type env struct {
	parent *env
	name   string
	v      val
	op     *tlacheck.Def // a LET operator with parameters
	opEnv  *env          // the scope the LET operator was defined in
}

func (e *env) lookup(name string) *env {
	for ; e != nil; e = e.parent {
		if e.name == name {
			return e
		}
	}
	return nil
}

func (e *env) bind(name string, v val) *env { return &env{parent: e, name: name, v: v} }

// ctx is where an expression is translated: its scope, whether it is primed, and
// the value @ stands for inside an EXCEPT.
type ctx struct {
	env    *env
	primed bool
	at     *val
}

// translator turns the expressions of one module into SMT-LIB terms.
type translator struct {
	mod       *tlacheck.Module
	file      string
	defs      map[string]*tlacheck.Def
	consts    map[string]constInfo
	sorts     []string // the sort constants, in declaration order
	vars      map[string]*typ
	order     []string // variables, in declaration order
	strs      []string // every string literal of the module, sorted
	recs      []*typ   // record types, in the order first needed (inner before outer)
	recKey    map[string]string
	fresh     int
	memo      map[memoKey]val
	finite    map[string]int // sort constant -> element count, in finite mode (nil: unbounded)
	pinConsts bool
	lits      map[string]bool // canonical terms of distinct values: equal iff the same text
	consts2   []constArray    // finite mode: the constant arrays, each a declared constant
	constBy   map[string]string
}

// constArray is a constant array of finite mode: declared, and pinned at every index.
type constArray struct {
	name, sort string
	pins       []string
}

// constArr is the array of type t (a set or function sort) holding v everywhere:
// (as const) in general; in finite mode, over a finite domain, a declared constant
// fixed at each index instead, since cvc5 1.0.3 refuses store chains over two
// different (as const) arrays ("write-chains connecting two different constant arrays").
func (tr *translator) constArr(t *typ, v string) string {
	sortS := tr.smtSort(t)
	dom := t.dom
	if t.k == kSet {
		dom = t.elem
	}
	if tr.finite != nil && tr.pinConsts {
		if es, ok := tr.finiteElems(dom); ok {
			key := sortS + " " + v
			if n, ok := tr.constBy[key]; ok {
				return n
			}
			if tr.constBy == nil {
				tr.constBy = map[string]string{}
			}
			name := fmt.Sprintf("const!%d", len(tr.consts2)+1)
			ca := constArray{name: name, sort: sortS}
			for _, e := range es {
				ca.pins = append(ca.pins, "(= (select "+name+" "+e.term+") "+v+")")
			}
			tr.consts2 = append(tr.consts2, ca)
			tr.constBy[key] = name
			return name
		}
	}
	return "((as const " + sortS + ") " + v + ")"
}

var reserved = map[string]bool{
	"Int": true, "Bool": true, "Array": true, "Str": true, "select": true, "store": true,
	"and": true, "or": true, "not": true, "ite": true, "true": true, "false": true, "let": true,
	"forall": true, "exists": true, "distinct": true, "as": true, "const": true, "div": true, "mod": true,
	"abs": true, "xor": true, "par": true, "match": true, "_": true, "!": true,
}

// smtName is the SMT symbol of a string literal (a constructor of Str): the
// characters [A-Za-z0-9_] as they are, others as .hh, so the map is injective.
func strSym(s string) string {
	var b strings.Builder
	b.WriteString("s!")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, ".%02x", c)
		}
	}
	return b.String()
}

func (tr *translator) gensym(prefix string) string {
	tr.fresh++
	return fmt.Sprintf("%s!%d", prefix, tr.fresh)
}

// smtSort is the SMT-LIB sort of a complete type.
func (tr *translator) smtSort(t *typ) string {
	switch t.k {
	case kBool:
		return "Bool"
	case kInt:
		return "Int"
	case kStr:
		return "Str"
	case kSort:
		return t.sort
	case kSet:
		return "(Array " + tr.smtSort(t.elem) + " Bool)"
	case kFun:
		return "(Array " + tr.smtSort(t.dom) + " " + tr.smtSort(t.rng) + ")"
	}
	return tr.recName(t)
}

// recName registers the record type t (a datatype) and returns its name, built from
// its field names (and a number when two record types share them).
func (tr *translator) recName(t *typ) string {
	key := t.String()
	if n, ok := tr.recKey[key]; ok {
		return n
	}
	for _, f := range t.ftys {
		tr.smtSort(f) // inner record types first
	}
	base := "Rec_" + strings.Join(t.fields, "_")
	name := base
	for i := 2; ; i++ {
		used := false
		for _, n := range tr.recKey {
			if n == name {
				used = true
			}
		}
		if !used {
			break
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
	tr.recKey[key] = name
	tr.recs = append(tr.recs, t)
	return name
}

// ---- values ----------------------------------------------------------------

// concrete is the value of an SMT term of the complete type t.
func (tr *translator) concrete(t *typ, term string) val {
	v := val{t: t, term: term}
	switch t.k {
	case kSet:
		v.mem = func(x val) string { return "(select " + term + " " + tr.termOf(x, tlacheck.Pos{}) + ")" }
	case kFun:
		v.app = func(x val) val {
			return tr.concrete(t.rng, "(select "+term+" "+tr.termOf(x, tlacheck.Pos{})+")")
		}
	}
	return v
}

func boolV(term string) val { return val{t: boolT, term: term} }

// tryTerm is v's SMT term, built from its parts where it can be; "" when v is a
// lazy set or function (or of an unknown type).
func (tr *translator) tryTerm(v val) string {
	if v.term != "" {
		return v.term
	}
	if !v.t.complete() {
		return ""
	}
	switch v.t.k {
	case kSet:
		if !v.isEnum {
			return ""
		}
		s := tr.constArr(v.t, "false")
		for _, e := range v.enum {
			et := tr.tryTerm(e)
			if et == "" {
				return ""
			}
			s = "(store " + s + " " + et + " true)"
		}
		return s
	case kRec:
		parts := []string{"mk_" + tr.recName(v.t)}
		for _, f := range v.t.fields {
			ft := tr.tryTerm(v.fields[f])
			if ft == "" {
				return ""
			}
			parts = append(parts, ft)
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	return ""
}

// termOf is tryTerm, refusing (at pos) a value that has no SMT term.
func (tr *translator) termOf(v val, pos tlacheck.Pos) string {
	if s := tr.tryTerm(v); s != "" {
		return s
	}
	if !v.t.complete() {
		tr.refuse(pos, "the type of this value (%s) cannot be determined", v.t)
	}
	tr.refuse(pos, "a %s built by a comprehension, EXCEPT or set operator is used where an SMT term is needed (inside a record, a set or an argument)", v.t)
	return ""
}

// coerce gives v the type t, which unify(v.t, t) returned: it fills in the element
// type of {} (and of records and functions built from it).
func (tr *translator) coerce(v val, t *typ, pos tlacheck.Pos) val {
	if v.t.String() == t.String() {
		return v
	}
	u, ok := unify(v.t, t)
	if !ok {
		tr.refuse(pos, "a value of type %s where %s is expected", v.t, t)
	}
	if v.term != "" {
		return v // a term's type is complete: unify left it as it is
	}
	if v.rebuild != nil {
		return v.rebuild(u)
	}
	w := v
	w.t = u
	switch u.k {
	case kSet:
		if v.isEnum {
			w.enum = nil
			for _, e := range v.enum {
				w.enum = append(w.enum, tr.coerce(e, u.elem, pos))
			}
			w.mem = tr.enumMem(w.enum, u.elem, pos)
		} else if v.mem != nil {
			inner := v.mem
			w.mem = func(x val) string { return inner(x) }
		}
	case kFun:
		inner := v.app
		w.app = func(x val) val { return tr.coerce(inner(x), u.rng, pos) }
	case kRec:
		w.fields = map[string]val{}
		for i, f := range u.fields {
			w.fields[f] = tr.coerce(v.fields[f], u.ftys[i], pos)
		}
	}
	return w
}

func (tr *translator) enumMem(elems []val, et *typ, pos tlacheck.Pos) func(x val) string {
	return func(x val) string {
		var ors []string
		for _, e := range elems {
			ors = append(ors, tr.eq(x, e, pos))
		}
		return or(ors...)
	}
}

// enumSet is {e1, ..., en}.
func (tr *translator) enumSet(elems []val, pos tlacheck.Pos) val {
	var et *typ
	for _, e := range elems {
		u, ok := unify(et, e.t)
		if !ok {
			tr.refuse(pos, "a set of values of different types (%s and %s)", et, e.t)
		}
		et = u
	}
	if et != nil {
		for i := range elems {
			elems[i] = tr.coerce(elems[i], et, pos)
		}
	}
	return val{t: setOf(et), isEnum: true, enum: elems, mem: tr.enumMem(elems, et, pos)}
}

// eq is the formula a = b.
func (tr *translator) eq(a, b val, pos tlacheck.Pos) string {
	t, ok := unify(a.t, b.t)
	if !ok {
		tr.refuse(pos, "= between a %s and a %s", a.t, b.t)
	}
	if t.k == kSet && a.isEnum && b.isEnum && len(a.enum) == 0 && len(b.enum) == 0 {
		return "true"
	}
	a, b = tr.coerce(a, t, pos), tr.coerce(b, t, pos)
	ta, tb := tr.tryTerm(a), tr.tryTerm(b)
	if ta != "" && tb != "" {
		if tr.isLit(ta) && tr.isLit(tb) {
			if ta == tb {
				return "true"
			}
			return "false"
		}
		return "(= " + ta + " " + tb + ")"
	}
	if !t.complete() {
		tr.refuse(pos, "the type of this comparison (%s) cannot be determined", t)
	}
	switch t.k {
	case kSet:
		return tr.forall(t.elem, func(x val) string { return "(= " + tr.member(x, a, pos) + " " + tr.member(x, b, pos) + ")" })
	case kFun:
		return tr.forall(t.dom, func(x val) string { return tr.eq(tr.apply(a, x, pos), tr.apply(b, x, pos), pos) })
	case kRec:
		var ands []string
		for _, f := range t.fields {
			ands = append(ands, tr.eq(tr.field(a, f, pos), tr.field(b, f, pos), pos))
		}
		return and(ands...)
	}
	tr.refuse(pos, "= of a %s", t)
	return ""
}

// isLit reports whether term is the canonical term of one value: a string, a
// Boolean, a sort element of finite mode, or a set or record finiteElems built. Two
// such terms of one type are equal exactly when their texts are, which lets finite
// mode decide comparisons of expanded values at translation time.
func (tr *translator) isLit(term string) bool {
	if term == "true" || term == "false" || strings.HasPrefix(term, "s!") && !strings.ContainsAny(term, " ()") {
		return true
	}
	return tr.lits[term]
}

func (tr *translator) lit(v val) val {
	if tr.lits == nil {
		tr.lits = map[string]bool{}
	}
	tr.lits[v.term] = true
	return v
}

// maxExpand bounds the values a quantifier is expanded into in finite mode.
const maxExpand = 4096

// finiteElems lists every value of t when t is finite: Booleans, strings and, in
// finite mode, the sorts and the sets and records built from them. In finite mode
// quantifiers over such types are expanded, so that a sat check is quantifier-free
// (both solvers are complete there and give a model).
func (tr *translator) finiteElems(t *typ) ([]val, bool) {
	switch t.k {
	case kBool:
		return []val{boolV("true"), boolV("false")}, true
	case kStr:
		if tr.finite == nil {
			return nil, false
		}
		var out []val
		for _, s := range tr.strs {
			out = append(out, tr.concrete(strT, strSym(s)))
		}
		return out, true
	case kSort:
		n, ok := tr.finite[t.sort]
		if !ok {
			return nil, false
		}
		var out []val
		for i := 1; i <= n; i++ {
			out = append(out, tr.lit(tr.concrete(t, fmt.Sprintf("%s!%d", t.sort, i))))
		}
		return out, true
	case kSet:
		if tr.finite == nil {
			return nil, false
		}
		es, ok := tr.finiteElems(t.elem)
		if !ok || len(es) > 12 || 1<<len(es) > maxExpand {
			return nil, false
		}
		for _, e := range es {
			if !tr.isLit(e.term) {
				return nil, false
			}
		}
		var out []val
		for m := 0; m < 1<<len(es); m++ {
			// the same text as tryTerm gives the enumeration of these elements in this order
			term := tr.constArr(t, "false")
			for i, e := range es {
				if m&(1<<i) != 0 {
					term = "(store " + term + " " + e.term + " true)"
				}
			}
			out = append(out, tr.lit(tr.concrete(t, term)))
		}
		return out, true
	case kRec:
		if tr.finite == nil {
			return nil, false
		}
		combos := [][]val{{}}
		for _, ft := range t.ftys {
			es, ok := tr.finiteElems(ft)
			if !ok || len(combos)*len(es) > maxExpand {
				return nil, false
			}
			var next [][]val
			for _, c := range combos {
				for _, e := range es {
					next = append(next, append(append([]val(nil), c...), e))
				}
			}
			combos = next
		}
		var out []val
		for _, c := range combos {
			parts := []string{"mk_" + tr.recName(t)}
			fs := map[string]val{}
			for i, e := range c {
				parts = append(parts, e.term)
				fs[t.fields[i]] = e
			}
			v := tr.concrete(t, "("+strings.Join(parts, " ")+")")
			v.fields = fs
			out = append(out, tr.lit(v))
		}
		return out, true
	}
	return nil, false
}

// forall is \A x of type t : body(x), over the whole type.
func (tr *translator) forall(t *typ, body func(x val) string) string {
	if es, ok := tr.finiteElems(t); ok && (t.k == kBool || tr.finite != nil) {
		var parts []string
		for _, e := range es {
			parts = append(parts, body(e))
		}
		return and(parts...)
	}
	x := tr.gensym("x")
	b := body(tr.concrete(t, x))
	if !strings.Contains(b, x) {
		return b
	}
	return "(forall ((" + x + " " + tr.smtSort(t) + ")) " + b + ")"
}

func (tr *translator) exists(t *typ, body func(x val) string) string {
	if es, ok := tr.finiteElems(t); ok && (t.k == kBool || tr.finite != nil) {
		var parts []string
		for _, e := range es {
			parts = append(parts, body(e))
		}
		return or(parts...)
	}
	x := tr.gensym("x")
	b := body(tr.concrete(t, x))
	if !strings.Contains(b, x) {
		return b
	}
	return "(exists ((" + x + " " + tr.smtSort(t) + ")) " + b + ")"
}

// member is the formula x \in s.
func (tr *translator) member(x val, s val, pos tlacheck.Pos) string {
	if s.t.k != kSet {
		tr.refuse(pos, "\\in of a %s, not a set", s.t)
	}
	if s.t.elem == nil {
		return "false" // {}
	}
	x = tr.coerce(x, s.t.elem, pos)
	return s.mem(x)
}

// apply is f[x].
func (tr *translator) apply(f, x val, pos tlacheck.Pos) val {
	if f.t.k != kFun {
		tr.refuse(pos, "function application of a %s", f.t)
	}
	x = tr.coerce(x, f.t.dom, pos)
	return f.app(x)
}

// field is r.name.
func (tr *translator) field(r val, name string, pos tlacheck.Pos) val {
	if r.t.k != kRec {
		tr.refuse(pos, "field .%s of a %s, not a record", name, r.t)
	}
	ft, ok := r.t.field(name)
	if !ok {
		tr.refuse(pos, "the record type %s has no field %s", r.t, name)
	}
	if r.fields != nil {
		return r.fields[name]
	}
	return tr.concrete(ft, "("+tr.recName(r.t)+"_"+name+" "+r.term+")")
}

// ite is IF c THEN a ELSE b on values of any type.
func (tr *translator) ite(c string, a, b val, pos tlacheck.Pos) val {
	t, ok := unify(a.t, b.t)
	if !ok {
		tr.refuse(pos, "IF with branches of different types (%s and %s)", a.t, b.t)
	}
	a, b = tr.coerce(a, t, pos), tr.coerce(b, t, pos)
	if c == "true" {
		return a
	}
	if !t.complete() {
		v := val{t: t, rebuild: func(u *typ) val { return tr.ite(c, tr.coerce(a, u, pos), tr.coerce(b, u, pos), pos) }}
		switch t.k {
		case kSet:
			v.mem = func(x val) string { return ite(c, tr.member(x, a, pos), tr.member(x, b, pos)) }
		case kRec:
			v.fields = map[string]val{}
			for _, f := range t.fields {
				v.fields[f] = tr.ite(c, tr.field(a, f, pos), tr.field(b, f, pos), pos)
			}
		}
		return v
	}
	if c == "false" {
		return b
	}
	ta, tb := tr.tryTerm(a), tr.tryTerm(b)
	if ta != "" && tb != "" {
		if ta == tb {
			return tr.concrete(t, ta)
		}
		return tr.concrete(t, "(ite "+c+" "+ta+" "+tb+")")
	}
	switch t.k {
	case kSet:
		return val{t: t, mem: func(x val) string { return ite(c, tr.member(x, a, pos), tr.member(x, b, pos)) }}
	case kFun:
		return val{t: t, app: func(x val) val { return tr.ite(c, tr.apply(a, x, pos), tr.apply(b, x, pos), pos) }}
	case kRec:
		fs := map[string]val{}
		for _, f := range t.fields {
			fs[f] = tr.ite(c, tr.field(a, f, pos), tr.field(b, f, pos), pos)
		}
		return val{t: t, fields: fs}
	}
	tr.refuse(pos, "IF of a %s", t)
	return val{}
}

// ---- formulas --------------------------------------------------------------

func and(xs ...string) string {
	var keep []string
	for _, x := range xs {
		switch x {
		case "true":
		case "false":
			return "false"
		default:
			keep = append(keep, x)
		}
	}
	switch len(keep) {
	case 0:
		return "true"
	case 1:
		return keep[0]
	}
	return "(and " + strings.Join(keep, " ") + ")"
}

func or(xs ...string) string {
	var keep []string
	for _, x := range xs {
		switch x {
		case "false":
		case "true":
			return "true"
		default:
			keep = append(keep, x)
		}
	}
	switch len(keep) {
	case 0:
		return "false"
	case 1:
		return keep[0]
	}
	return "(or " + strings.Join(keep, " ") + ")"
}

func not(x string) string {
	switch x {
	case "true":
		return "false"
	case "false":
		return "true"
	}
	return "(not " + x + ")"
}

func implies(a, b string) string {
	switch {
	case a == "true":
		return b
	case a == "false" || b == "true":
		return "true"
	}
	return "(=> " + a + " " + b + ")"
}

func ite(c, a, b string) string {
	switch {
	case c == "true" || a == b:
		return a
	case c == "false":
		return b
	}
	return "(ite " + c + " " + a + " " + b + ")"
}

// ---- expressions -----------------------------------------------------------

// formula translates n, which must be a Boolean.
func (tr *translator) formula(n *tlacheck.Node, c ctx) string {
	v := tr.expr(n, c)
	if v.t.k != kBool {
		tr.refuse(n.Pos, "a %s where a Boolean is expected", v.t)
	}
	return v.term
}

// set translates n, which must be a set.
func (tr *translator) set(n *tlacheck.Node, c ctx) val {
	v := tr.expr(n, c)
	if v.t.k != kSet {
		tr.refuse(n.Pos, "a %s where a set is expected", v.t)
	}
	return v
}

func (tr *translator) intTerm(n *tlacheck.Node, c ctx) string {
	v := tr.expr(n, c)
	if v.t.k != kInt {
		tr.refuse(n.Pos, "a %s where an integer is expected", v.t)
	}
	return v.term
}

// expr translates one expression.
func (tr *translator) expr(n *tlacheck.Node, c ctx) val {
	switch n.Kind {
	case tlacheck.NBool:
		if n.Bool {
			return boolV("true")
		}
		return boolV("false")
	case tlacheck.NNum:
		if n.Num < 0 {
			return tr.concrete(intT, fmt.Sprintf("(- %d)", -n.Num))
		}
		return tr.concrete(intT, fmt.Sprint(n.Num))
	case tlacheck.NStr:
		if strings.ContainsAny(n.Str, "|\\") {
			tr.refuse(n.Pos, "a string with | or \\")
		}
		return tr.concrete(strT, strSym(n.Str))
	case tlacheck.NIdent:
		return tr.ident(n, c)
	case tlacheck.NApply:
		return tr.call(n, c)
	case tlacheck.NAnd, tlacheck.NOr:
		var parts []string
		for _, a := range n.Args {
			parts = append(parts, tr.formula(a, c))
		}
		if n.Kind == tlacheck.NAnd {
			return boolV(and(parts...))
		}
		return boolV(or(parts...))
	case tlacheck.NOp:
		return tr.op(n, c)
	case tlacheck.NQuant:
		if n.Name == "CHOOSE" {
			tr.refuse(n.Pos, "CHOOSE")
		}
		return boolV(tr.quant(n.Name == "\\A", n.Binds, 0, 0, c, func(c ctx) string { return tr.formula(n.Args[0], c) }))
	case tlacheck.NSetEnum:
		var elems []val
		for _, a := range n.Args {
			elems = append(elems, tr.expr(a, c))
		}
		return tr.enumSet(elems, n.Pos)
	case tlacheck.NSetFilter:
		b := n.Binds[0]
		if b.Tuple || len(b.Names) != 1 {
			tr.refuse(b.Pos, "a set filter over a tuple pattern")
		}
		s := tr.set(b.Set, c)
		pred := n.Args[0]
		return val{t: s.t, mem: func(x val) string {
			return and(tr.member(x, s, n.Pos), tr.formula(pred, ctx{env: c.env.bind(b.Names[0], x), primed: c.primed, at: c.at}))
		}}
	case tlacheck.NFuncCtor:
		return tr.funcCtor(n, c)
	case tlacheck.NFuncApp:
		if len(n.Args) != 2 {
			tr.refuse(n.Pos, "a function of several arguments f[a, b]")
		}
		return tr.apply(tr.expr(n.Args[0], c), tr.expr(n.Args[1], c), n.Pos)
	case tlacheck.NField:
		return tr.field(tr.expr(n.Args[0], c), n.Name, n.Pos)
	case tlacheck.NRecord:
		var tys []*typ
		fs := map[string]val{}
		for i, name := range n.Names {
			v := tr.expr(n.Args[i], c)
			fs[name] = v
			tys = append(tys, v.t)
		}
		return val{t: recOf(n.Names, tys), fields: fs}
	case tlacheck.NRecSet:
		var sets []val
		var tys []*typ
		for i := range n.Names {
			s := tr.set(n.Args[i], c)
			if s.t.elem == nil {
				tr.refuse(n.Args[i].Pos, "a record set with an empty field set")
			}
			sets = append(sets, s)
			tys = append(tys, s.t.elem)
		}
		rt := recOf(n.Names, tys)
		return val{t: setOf(rt), mem: func(x val) string {
			var ands []string
			for i, name := range n.Names {
				ands = append(ands, tr.member(tr.field(x, name, n.Pos), sets[i], n.Pos))
			}
			return and(ands...)
		}}
	case tlacheck.NFuncSet:
		dom, rng := tr.set(n.Args[0], c), tr.set(n.Args[1], c)
		if !dom.whole || dom.t.elem.k != kSort {
			tr.refuse(n.Args[0].Pos, "a function set whose domain is not a CONSTANT set of model values (the SMT array would have no DOMAIN)")
		}
		if rng.t.elem == nil {
			tr.refuse(n.Args[1].Pos, "a function set with an empty range")
		}
		ft := funOf(dom.t.elem, rng.t.elem)
		return val{t: setOf(ft), mem: func(f val) string {
			if rng.whole {
				return "true"
			}
			return tr.forall(ft.dom, func(x val) string { return tr.member(tr.apply(f, x, n.Pos), rng, n.Pos) })
		}}
	case tlacheck.NExcept:
		f := tr.expr(n.Args[0], c)
		for _, s := range n.Excepts {
			f = tr.except(f, s.Path, s.Val, c, n.Pos)
		}
		return f
	case tlacheck.NAt:
		if c.at == nil {
			tr.refuse(n.Pos, "@ outside an EXCEPT")
		}
		return *c.at
	case tlacheck.NIf:
		cond := tr.formula(n.Args[0], c)
		return tr.ite(cond, tr.expr(n.Args[1], c), tr.expr(n.Args[2], c), n.Pos)
	case tlacheck.NCase:
		if n.Other == nil {
			tr.refuse(n.Pos, "CASE without OTHER (its value is unspecified when no arm holds)")
		}
		v := tr.expr(n.Other, c)
		for i := len(n.Arms) - 1; i >= 0; i-- {
			v = tr.ite(tr.formula(n.Arms[i].Cond, c), tr.expr(n.Arms[i].Val, c), v, n.Pos)
		}
		return v
	case tlacheck.NLet:
		e := c.env
		for _, d := range n.Defs {
			switch {
			case len(d.FnBinds) > 0:
				tr.refuse(d.Pos, "a function definition %s[...] in a LET", d.Name)
			case len(d.Params) > 0:
				e = &env{parent: e, name: d.Name, op: d, opEnv: e}
			default:
				e = e.bind(d.Name, tr.expr(d.Body, ctx{env: e, primed: c.primed, at: c.at}))
			}
		}
		return tr.expr(n.Args[0], ctx{env: e, primed: c.primed, at: c.at})
	case tlacheck.NTuple:
		tr.refuse(n.Pos, "a tuple (tuples are translated only as the argument of UNCHANGED)")
	case tlacheck.NSetMap:
		tr.refuse(n.Pos, "a set map {e : x \\in S}")
	case tlacheck.NCross:
		tr.refuse(n.Pos, "a Cartesian product \\X")
	case tlacheck.NActSub:
		tr.refuse(n.Pos, "[A]_v / <<A>>_v (temporal; the obligations take the actions one by one)")
	case tlacheck.NFair:
		tr.refuse(n.Pos, "WF_/SF_ (temporal)")
	}
	tr.refuse(n.Pos, "the construct %s", n.Kind)
	return val{}
}

// ident resolves a name: a bound name, a variable, a constant, a definition, a built-in set.
func (tr *translator) ident(n *tlacheck.Node, c ctx) val {
	if b := c.env.lookup(n.Name); b != nil {
		if b.op != nil {
			tr.refuse(n.Pos, "operator %s used without its arguments", n.Name)
		}
		return b.v
	}
	if t, ok := tr.vars[n.Name]; ok {
		if t == nil {
			tr.refuse(n.Pos, "variable %s is used before its type is known (its type comes from TypeOK's %s \\in S)", n.Name, n.Name)
		}
		if c.primed {
			return tr.concrete(t, "|"+n.Name+"'|")
		}
		return tr.concrete(t, n.Name)
	}
	if ci, ok := tr.consts[n.Name]; ok {
		if ci.isInt {
			return tr.concrete(intT, n.Name)
		}
		return val{t: setOf(sortT(n.Name)), whole: true, mem: func(val) string { return "true" }}
	}
	if d, ok := tr.defs[n.Name]; ok {
		if len(d.Params) > 0 {
			tr.refuse(n.Pos, "operator %s used without its arguments", n.Name)
		}
		if len(d.FnBinds) > 0 {
			tr.refuse(d.Pos, "a function definition %s[...]", d.Name)
		}
		key := memoKey{n.Name, c.primed}
		if v, ok := tr.memo[key]; ok {
			return v
		}
		v := tr.expr(d.Body, ctx{primed: c.primed})
		tr.memo[key] = v
		return v
	}
	switch n.Name {
	case "BOOLEAN":
		return val{t: setOf(boolT), whole: true, isEnum: true, enum: []val{boolV("true"), boolV("false")},
			mem: func(val) string { return "true" }}
	case "Int":
		return val{t: setOf(intT), whole: true, mem: func(val) string { return "true" }}
	case "Nat":
		return val{t: setOf(intT), mem: func(x val) string { return "(<= 0 " + x.term + ")" }}
	}
	tr.refuse(n.Pos, "the name %s", n.Name)
	return val{}
}

// call translates Op(args): the operator's body with its parameters bound (inlined;
// the subset has no recursion the translation would accept).
func (tr *translator) call(n *tlacheck.Node, c ctx) val {
	var d *tlacheck.Def
	var scope *env
	if b := c.env.lookup(n.Name); b != nil && b.op != nil {
		d, scope = b.op, b.opEnv
	} else if g, ok := tr.defs[n.Name]; ok {
		d = g
	} else {
		tr.refuse(n.Pos, "the operator %s (not a definition of the module)", n.Name)
	}
	if d.Recursive {
		tr.refuse(n.Pos, "the RECURSIVE operator %s", n.Name)
	}
	if len(d.Params) != len(n.Args) {
		tr.refuse(n.Pos, "%s takes %d arguments, not %d", n.Name, len(d.Params), len(n.Args))
	}
	e := scope
	for i, p := range d.Params {
		e = e.bind(p, tr.expr(n.Args[i], c))
	}
	return tr.expr(d.Body, ctx{env: e, primed: c.primed})
}

// quant is \A / \E over the bindings bs (from binding bi, name ni on), body at the end.
func (tr *translator) quant(all bool, bs []tlacheck.Binding, bi, ni int, c ctx, body func(ctx) string) string {
	if bi == len(bs) {
		return body(c)
	}
	b := bs[bi]
	if b.Tuple {
		tr.refuse(b.Pos, "a quantifier over a tuple pattern <<x, y>>")
	}
	nbi, nni := bi, ni+1
	if nni == len(b.Names) {
		nbi, nni = bi+1, 0
	}
	s := tr.set(b.Set, c)
	name := b.Names[ni]
	inner := func(x val) string {
		return tr.quant(all, bs, nbi, nni, ctx{env: c.env.bind(name, x), primed: c.primed, at: c.at}, body)
	}
	return tr.quantSet(all, s, b.Pos, inner)
}

// quantSet is \A x \in s : body(x) (all) or \E x \in s : body(x).
func (tr *translator) quantSet(all bool, s val, pos tlacheck.Pos, body func(x val) string) string {
	if s.t.elem == nil {
		if all {
			return "true"
		}
		return "false"
	}
	if s.isEnum {
		var parts []string
		for _, e := range s.enum {
			parts = append(parts, body(e))
		}
		if all {
			return and(parts...)
		}
		return or(parts...)
	}
	if !s.t.elem.complete() {
		tr.refuse(pos, "a quantifier over a set of unknown element type")
	}
	guard := func(x val) string {
		if s.whole {
			return "true"
		}
		return tr.member(x, s, pos)
	}
	if all {
		return tr.forall(s.t.elem, func(x val) string { return implies(guard(x), body(x)) })
	}
	return tr.exists(s.t.elem, func(x val) string { return and(guard(x), body(x)) })
}

// funcCtor is [x \in S |-> e] for S a CONSTANT set of model values: a constant
// array when e does not depend on x, else a lazy function.
func (tr *translator) funcCtor(n *tlacheck.Node, c ctx) val {
	if len(n.Binds) != 1 || len(n.Binds[0].Names) != 1 || n.Binds[0].Tuple {
		tr.refuse(n.Pos, "a function of several arguments [x, y \\in S |-> e]")
	}
	b := n.Binds[0]
	s := tr.set(b.Set, c)
	if !s.whole || s.t.elem.k != kSort {
		tr.refuse(b.Set.Pos, "a function whose domain is not a CONSTANT set of model values (the SMT array would have no DOMAIN)")
	}
	dom := s.t.elem
	body := func(x val) val {
		return tr.expr(n.Args[0], ctx{env: c.env.bind(b.Names[0], x), primed: c.primed, at: c.at})
	}
	probe := tr.gensym("fc") + "!"
	pv := body(tr.concrete(dom, probe))
	if pt := tr.tryTerm(pv); pt != "" && !strings.Contains(pt, probe) {
		ft := funOf(dom, pv.t)
		return tr.concrete(ft, tr.constArr(ft, pt))
	}
	return val{t: funOf(dom, pv.t), app: body}
}

// except applies one ![a]...[b] = v (or !.f = v) to f.
func (tr *translator) except(f val, path []tlacheck.PathElem, vn *tlacheck.Node, c ctx, pos tlacheck.Pos) val {
	p := path[0]
	if p.Index == nil { // .field of a record
		if f.t.k != kRec {
			tr.refuse(pos, "EXCEPT !.%s of a %s", p.Field, f.t)
		}
		old := tr.field(f, p.Field, pos)
		nv := tr.exceptValue(old, path[1:], vn, c, pos)
		fs := map[string]val{}
		for _, name := range f.t.fields {
			fs[name] = tr.field(f, name, pos)
		}
		fs[p.Field] = nv
		return val{t: f.t, fields: fs}
	}
	if p.Index.Kind == tlacheck.NTuple {
		tr.refuse(p.Index.Pos, "EXCEPT ![a, b] of a function of several arguments")
	}
	if f.t.k != kFun {
		tr.refuse(pos, "EXCEPT ![...] of a %s", f.t)
	}
	a := tr.coerce(tr.expr(p.Index, c), f.t.dom, p.Index.Pos)
	old := tr.apply(f, a, pos)
	nv := tr.coerce(tr.exceptValue(old, path[1:], vn, c, pos), f.t.rng, pos)
	ft, at, nt := tr.tryTerm(f), tr.tryTerm(a), tr.tryTerm(nv)
	if ft != "" && at != "" && nt != "" {
		return tr.concrete(f.t, "(store "+ft+" "+at+" "+nt+")")
	}
	return val{t: f.t, app: func(x val) val { return tr.ite(tr.eq(x, a, pos), nv, tr.apply(f, x, pos), pos) }}
}

// exceptValue is the new value at the end of the path, old being the value there (@).
func (tr *translator) exceptValue(old val, rest []tlacheck.PathElem, vn *tlacheck.Node, c ctx, pos tlacheck.Pos) val {
	if len(rest) > 0 {
		return tr.except(old, rest, vn, c, pos)
	}
	return tr.expr(vn, ctx{env: c.env, primed: c.primed, at: &old})
}

// unchanged lists the variables of UNCHANGED's argument: a variable, a tuple of
// them, or a definition that is one.
func (tr *translator) unchanged(n *tlacheck.Node, out []string) []string {
	switch n.Kind {
	case tlacheck.NTuple:
		for _, a := range n.Args {
			out = tr.unchanged(a, out)
		}
		return out
	case tlacheck.NIdent:
		if _, ok := tr.vars[n.Name]; ok {
			return append(out, n.Name)
		}
		if d, ok := tr.defs[n.Name]; ok && len(d.Params) == 0 {
			return tr.unchanged(d.Body, out)
		}
	}
	tr.refuse(n.Pos, "UNCHANGED of something that is not a variable or a tuple of variables")
	return nil
}

var binInt = map[string]string{"+": "+", "-": "-", "*": "*"}
var cmpInt = map[string]string{"<": "<", ">": ">", "<=": "<=", ">=": ">="}

// op translates a built-in operator.
func (tr *translator) op(n *tlacheck.Node, c ctx) val {
	a := n.Args
	switch n.Name {
	case "'":
		if c.primed {
			tr.refuse(n.Pos, "a primed expression inside a primed one")
		}
		return tr.expr(a[0], ctx{env: c.env, primed: true, at: c.at})
	case "UNCHANGED":
		if c.primed {
			tr.refuse(n.Pos, "UNCHANGED inside a primed expression")
		}
		var eqs []string
		for _, v := range tr.unchanged(a[0], nil) {
			eqs = append(eqs, "(= |"+v+"'| "+v+")")
		}
		return boolV(and(eqs...))
	case "~":
		return boolV(not(tr.formula(a[0], c)))
	case "=>":
		return boolV(implies(tr.formula(a[0], c), tr.formula(a[1], c)))
	case "<=>":
		return boolV("(= " + tr.formula(a[0], c) + " " + tr.formula(a[1], c) + ")")
	case "=":
		return boolV(tr.eq(tr.expr(a[0], c), tr.expr(a[1], c), n.Pos))
	case "#":
		return boolV(not(tr.eq(tr.expr(a[0], c), tr.expr(a[1], c), n.Pos)))
	case "neg":
		return tr.concrete(intT, "(- "+tr.intTerm(a[0], c)+")")
	case "..":
		lo, hi := tr.intTerm(a[0], c), tr.intTerm(a[1], c)
		return val{t: setOf(intT), isRange: true, lo: lo, hi: hi,
			mem: func(x val) string { return and("(<= "+lo+" "+x.term+")", "(<= "+x.term+" "+hi+")") }}
	case "\\in":
		return boolV(tr.member(tr.expr(a[0], c), tr.set(a[1], c), n.Pos))
	case "\\notin":
		return boolV(not(tr.member(tr.expr(a[0], c), tr.set(a[1], c), n.Pos)))
	case "\\cup", "\\cap", "\\":
		return tr.setOp(n.Name, tr.set(a[0], c), tr.set(a[1], c), n.Pos)
	case "\\subseteq":
		s, t := tr.set(a[0], c), tr.set(a[1], c)
		return boolV(tr.quantSet(true, s, n.Pos, func(x val) string { return tr.member(x, t, n.Pos) }))
	case "SUBSET":
		s := tr.set(a[0], c)
		if s.t.elem == nil {
			tr.refuse(n.Pos, "SUBSET {}")
		}
		return val{t: setOf(s.t), mem: func(x val) string {
			if s.whole {
				return "true"
			}
			return tr.quantSet(true, x, n.Pos, func(y val) string { return tr.member(y, s, n.Pos) })
		}}
	}
	if o, ok := binInt[n.Name]; ok && len(a) == 2 {
		return tr.concrete(intT, "("+o+" "+tr.intTerm(a[0], c)+" "+tr.intTerm(a[1], c)+")")
	}
	if o, ok := cmpInt[n.Name]; ok {
		return boolV("(" + o + " " + tr.intTerm(a[0], c) + " " + tr.intTerm(a[1], c) + ")")
	}
	tr.refuse(n.Pos, "the operator %s", n.Name)
	return val{}
}

// setOp is s \cup t, s \cap t or s \ t; a concrete set with or without a few concrete
// elements stays a term (store), anything else is a lazy membership.
func (tr *translator) setOp(op string, s, t val, pos tlacheck.Pos) val {
	u, ok := unify(s.t, t.t)
	if !ok {
		tr.refuse(pos, "%s of a %s and a %s", op, s.t, t.t)
	}
	s, t = tr.coerce(s, u, pos), tr.coerce(t, u, pos)
	if op == "\\cup" && s.isEnum && t.isEnum {
		return tr.enumSet(append(append([]val(nil), s.enum...), t.enum...), pos)
	}
	if (op == "\\cup" || op == "\\") && t.isEnum && u.complete() {
		if st := tr.tryTerm(s); st != "" {
			term, flag := st, "true"
			if op == "\\" {
				flag = "false"
			}
			okAll := true
			for _, e := range t.enum {
				et := tr.tryTerm(e)
				if et == "" {
					okAll = false
					break
				}
				term = "(store " + term + " " + et + " " + flag + ")"
			}
			if okAll {
				return tr.concrete(u, term)
			}
		}
	}
	if op == "\\cup" && s.isEnum && u.complete() {
		return tr.setOp(op, t, s, pos)
	}
	mem := func(x val) string {
		a, b := tr.member(x, s, pos), tr.member(x, t, pos)
		switch op {
		case "\\cup":
			return or(a, b)
		case "\\cap":
			return and(a, b)
		}
		return and(a, not(b))
	}
	return val{t: u, mem: mem}
}

// sortedKeys is the keys of m in order (for deterministic output).
func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
