package tlacheck

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
)

// Operators describes the operators of a module for drift auditing (cmd/drift): what
// each definition means, apart from where it is written.
type Operators struct {
	// Defs maps each operator defined in the module to the canonical encoding of its
	// definition: its parameters and parsed body, without positions, whitespace or
	// comments. Two definitions have equal encodings exactly when they parse to the
	// same tree.
	Defs map[string]string
	// Refs maps each operator to the module's operators its definition names.
	Refs map[string][]string
	// Actions are the operators Next names that change a variable (their definitions,
	// or an operator they reach, prime one), in the order Next names them.
	Actions []string
}

// ParseOperators parses a module's source (no configuration) into its Operators.
func ParseOperators(src string) (*Operators, error) {
	m, err := parseModule(src)
	if err != nil {
		return nil, err
	}
	ops := &Operators{Defs: map[string]string{}, Refs: map[string][]string{}}
	defs := map[string]*def{}
	for _, d := range m.defs {
		defs[d.name] = d
	}
	for _, d := range m.defs {
		var b canonBuf
		b.value(reflect.ValueOf(*d))
		ops.Defs[d.name] = string(b)
		ops.Refs[d.name] = namesIn(d, defs)
	}
	next, ok := defs["Next"]
	if !ok {
		return nil, fmt.Errorf("tlacheck: the module defines no Next")
	}
	for _, name := range namesIn(next, defs) {
		if ops.primes(name, defs) {
			ops.Actions = append(ops.Actions, name)
		}
	}
	return ops, nil
}

// Closure returns op and every operator its definition reaches, sorted.
func (ops *Operators) Closure(op string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		if _, ok := ops.Defs[n]; !ok {
			return
		}
		seen[n] = true
		for _, r := range ops.Refs[n] {
			walk(r)
		}
	}
	walk(op)
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Pin is the fingerprint of op's meaning: a hash of the canonical definitions of op
// and of every operator it reaches. It changes when any of them changes, and only
// then; "" if the module does not define op.
func (ops *Operators) Pin(op string) string {
	if _, ok := ops.Defs[op]; !ok {
		return ""
	}
	h := sha256.New()
	for _, n := range ops.Closure(op) {
		fmt.Fprintf(h, "%d:%s%d:%s", len(n), n, len(ops.Defs[n]), ops.Defs[n])
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// primes reports whether the definition of name, or one it reaches, primes a variable.
func (ops *Operators) primes(name string, defs map[string]*def) bool {
	for _, n := range ops.Closure(name) {
		found := false
		walkExprs(reflect.ValueOf(defs[n]), func(e reflect.Value) {
			if e.Type() == reflect.TypeOf(eOp{}) && e.FieldByName("op").String() == "'" {
				found = true
			}
		})
		if found {
			return true
		}
	}
	return false
}

// namesIn returns the operators of defs that d's definition names, in the order it
// first names them. A bound name that shadows an operator counts as naming it: a
// pin may then change without need, never stay when it should not.
func namesIn(d *def, defs map[string]*def) []string {
	var out []string
	seen := map[string]bool{}
	walkExprs(reflect.ValueOf(*d), func(e reflect.Value) {
		if t := e.Type(); t != reflect.TypeOf(eIdent{}) && t != reflect.TypeOf(eApply{}) {
			return
		}
		name := e.FieldByName("name").String()
		if _, ok := defs[name]; ok && !seen[name] && name != d.name {
			seen[name] = true
			out = append(out, name)
		}
	})
	return out
}

var exprType = reflect.TypeOf((*expr)(nil)).Elem()

// walkExprs calls f on every expression node (the struct a pointer of an expr type
// points to) in v's tree, parents before children. LET definitions are inside it.
func walkExprs(v reflect.Value, f func(reflect.Value)) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Kind() == reflect.Pointer && v.Type().Implements(exprType) {
			f(v.Elem())
		}
		walkExprs(v.Elem(), f)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			walkExprs(v.Field(i), f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkExprs(v.Index(i), f)
		}
	}
}

var posType = reflect.TypeOf(Pos{})

// canonBuf is the canonical encoding of a syntax tree: each node's type and fields in
// order, lengths before contents, positions left out.
type canonBuf []byte

func (b *canonBuf) str(s string) {
	*b = binary.AppendUvarint(*b, uint64(len(s)))
	*b = append(*b, s...)
}

func (b *canonBuf) value(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			b.str("nil")
			return
		}
		b.value(v.Elem())
	case reflect.Struct:
		if v.Type() == posType {
			return
		}
		b.str(v.Type().Name())
		for i := 0; i < v.NumField(); i++ {
			b.value(v.Field(i))
		}
	case reflect.Slice:
		b.str(fmt.Sprint(v.Len()))
		for i := 0; i < v.Len(); i++ {
			b.value(v.Index(i))
		}
	case reflect.String:
		b.str(v.String())
	case reflect.Bool:
		b.str(fmt.Sprint(v.Bool()))
	case reflect.Int, reflect.Int64, reflect.Int32:
		b.str(fmt.Sprint(v.Int()))
	default:
		panic(fmt.Sprintf("tlacheck: no canonical encoding of %s", v.Type()))
	}
}
