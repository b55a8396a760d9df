package smt

import (
	"sort"
	"strings"
)

// kind is the SMT shape of a TLA+ value: the translation gives every expression one.
type kind int

const (
	kBool kind = iota
	kInt
	kStr  // a string literal of the module: the constructors of the datatype Str
	kSort // an element of a constant set of model values: an uninterpreted sort
	kSet  // (Array E Bool)
	kFun  // (Array D R), D always an uninterpreted sort (the whole of the constant)
	kRec  // a datatype with one constructor, one field per record field
)

// typ is the type of a translated expression; a set whose elem is nil is {} before
// its element type is known (unify fills it in from the other side).
type typ struct {
	k        kind
	sort     string // kSort: the constant's name, which is the sort's name
	elem     *typ   // kSet
	dom, rng *typ   // kFun
	fields   []string
	ftys     []*typ // kRec: fields sorted by name, with their types
}

var (
	boolT = &typ{k: kBool}
	intT  = &typ{k: kInt}
	strT  = &typ{k: kStr}
)

func setOf(e *typ) *typ      { return &typ{k: kSet, elem: e} }
func funOf(d, r *typ) *typ   { return &typ{k: kFun, dom: d, rng: r} }
func sortT(name string) *typ { return &typ{k: kSort, sort: name} }

// recOf builds a record type from fields in any order.
func recOf(names []string, tys []*typ) *typ {
	idx := make([]int, len(names))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return names[idx[a]] < names[idx[b]] })
	t := &typ{k: kRec}
	for _, i := range idx {
		t.fields = append(t.fields, names[i])
		t.ftys = append(t.ftys, tys[i])
	}
	return t
}

func (t *typ) field(name string) (*typ, bool) {
	for i, f := range t.fields {
		if f == name {
			return t.ftys[i], true
		}
	}
	return nil, false
}

// String is the type as the refusals print it, TLA+-like.
func (t *typ) String() string {
	if t == nil {
		return "?"
	}
	switch t.k {
	case kBool:
		return "BOOLEAN"
	case kInt:
		return "Int"
	case kStr:
		return "STRING"
	case kSort:
		return t.sort
	case kSet:
		return "SUBSET " + t.elem.String()
	case kFun:
		return "[" + t.dom.String() + " -> " + t.rng.String() + "]"
	}
	var parts []string
	for i, f := range t.fields {
		parts = append(parts, f+" : "+t.ftys[i].String())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// complete reports whether no {} of unknown element type is left in t.
func (t *typ) complete() bool {
	switch t.k {
	case kSet:
		return t.elem != nil && t.elem.complete()
	case kFun:
		return t.dom.complete() && t.rng.complete()
	case kRec:
		for _, f := range t.ftys {
			if !f.complete() {
				return false
			}
		}
	}
	return true
}

// unify returns the most specific type both a and b describe, or false when they
// are different types (a comparison the translator refuses).
func unify(a, b *typ) (*typ, bool) {
	if a == nil {
		return b, true
	}
	if b == nil {
		return a, true
	}
	if a.k != b.k {
		return nil, false
	}
	switch a.k {
	case kSort:
		return a, a.sort == b.sort
	case kSet:
		e, ok := unify(a.elem, b.elem)
		if !ok {
			return nil, false
		}
		if e == a.elem {
			return a, true
		}
		return setOf(e), true
	case kFun:
		d, ok1 := unify(a.dom, b.dom)
		r, ok2 := unify(a.rng, b.rng)
		if !ok1 || !ok2 {
			return nil, false
		}
		return funOf(d, r), true
	case kRec:
		if len(a.fields) != len(b.fields) {
			return nil, false
		}
		var tys []*typ
		for i := range a.fields {
			if a.fields[i] != b.fields[i] {
				return nil, false
			}
			u, ok := unify(a.ftys[i], b.ftys[i])
			if !ok {
				return nil, false
			}
			tys = append(tys, u)
		}
		return recOf(a.fields, tys), true
	}
	return a, true
}

func sameType(a, b *typ) bool { return a.String() == b.String() && a.complete() && b.complete() }
