package tlacheck

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Kind is the kind of a Value.
type Kind int

// The kinds of values, in canonical order.
const (
	KindBool Kind = iota
	KindInt
	KindString
	KindModel
	KindSet
	KindFunc
)

var kindNames = [...]string{"boolean", "integer", "string", "model value", "set", "function"}

// String names the kind.
func (k Kind) String() string { return kindNames[k] }

// Value is a TLA+ value in canonical form. Records, tuples and sequences are
// functions (KindFunc); two values are equal exactly when their String texts are.
type Value interface {
	// Kind is the kind of the value.
	Kind() Kind
	// String is the canonical TLA+ text (docs/tla-graph.md).
	String() string
	// Field looks up a record field.
	Field(name string) (Value, bool)
	// Apply applies a function to an argument.
	Apply(arg Value) (Value, bool)
	// Domain is a function's domain in canonical order.
	Domain() []Value
	// Elems is a set's elements in canonical order.
	Elems() []Value
	// AsInt is an integer's value (0 for other kinds).
	AsInt() int64
	// AsString is a string's text ("" for other kinds).
	AsString() string
	// AsBool is a boolean's value (false for other kinds).
	AsBool() bool
	// ModelName is a model value's name ("" for other kinds).
	ModelName() string
	write(b *strings.Builder)
}

type valBase struct{}

func (valBase) Field(string) (Value, bool) { return nil, false }
func (valBase) Apply(Value) (Value, bool)  { return nil, false }
func (valBase) Domain() []Value            { return nil }
func (valBase) Elems() []Value             { return nil }
func (valBase) AsInt() int64               { return 0 }
func (valBase) AsString() string           { return "" }
func (valBase) AsBool() bool               { return false }
func (valBase) ModelName() string          { return "" }

type boolV struct {
	valBase
	b bool
}

type intV struct {
	valBase
	n int64
}

type strV struct {
	valBase
	s string
}

type modelV struct {
	valBase
	name string
	id   int32 // its index in modelByID, for permutations held as slices
}

type setV struct {
	valBase
	elems []Value // sorted by compare, no duplicates
}

type funcV struct {
	valBase
	keys []Value // sorted by compare, no duplicates; never mutated once built
	vals []Value
}

var (
	trueV     = &boolV{b: true}
	falseV    = &boolV{b: false}
	emptySet  = &setV{}
	emptyFunc = &funcV{}
)

const smallIntMin, smallIntMax = -1024, 4096

var smallInts = func() []*intV {
	s := make([]*intV, smallIntMax-smallIntMin+1)
	for i := range s {
		s[i] = &intV{n: int64(i + smallIntMin)}
	}
	return s
}()

// Bool returns the TLA+ boolean b.
func Bool(b bool) Value {
	if b {
		return trueV
	}
	return falseV
}

// Int returns the TLA+ integer n.
func Int(n int64) Value { return mkInt(n) }

func mkInt(n int64) *intV {
	if n >= smallIntMin && n <= smallIntMax {
		return smallInts[n-smallIntMin]
	}
	return &intV{n: n}
}

// Str returns the TLA+ string s.
func Str(s string) Value { return &strV{s: s} }

var (
	modelValues sync.Map // name -> *modelV
	modelMu     sync.Mutex
	modelCount  int32 // model values made so far; the next one's id
)

// ModelValue returns the model value with the given name.
func ModelValue(name string) Value { return mkModel(name) }

func mkModel(name string) *modelV {
	if v, ok := modelValues.Load(name); ok {
		return v.(*modelV)
	}
	modelMu.Lock()
	defer modelMu.Unlock()
	if v, ok := modelValues.Load(name); ok {
		return v.(*modelV)
	}
	v := &modelV{name: name, id: modelCount}
	modelCount++
	modelValues.Store(name, v)
	return v
}

// SetOf returns the set of the given values.
func SetOf(vs ...Value) Value { return mkSet(append([]Value(nil), vs...)) }

// Tuple returns the tuple (sequence) <<vs[0], vs[1], ...>>.
func Tuple(vs ...Value) Value { return mkTuple(append([]Value(nil), vs...)) }

// RecordOf returns the record with the given fields.
func RecordOf(fields map[string]Value) Value {
	keys := make([]Value, 0, len(fields))
	vals := make([]Value, 0, len(fields))
	for k, v := range fields {
		keys = append(keys, Str(k))
		vals = append(vals, v)
	}
	return mkFunc(keys, vals)
}

// FuncOf returns the function mapping keys[i] to vals[i]; later keys win.
func FuncOf(keys, vals []Value) Value {
	return mkFunc(append([]Value(nil), keys...), append([]Value(nil), vals...))
}

// Equal reports whether two values are equal.
func Equal(a, b Value) bool { return compare(a, b) == 0 }

func (v *boolV) Kind() Kind      { return KindBool }
func (v *intV) Kind() Kind       { return KindInt }
func (v *strV) Kind() Kind       { return KindString }
func (v *modelV) Kind() Kind     { return KindModel }
func (v *setV) Kind() Kind       { return KindSet }
func (v *funcV) Kind() Kind      { return KindFunc }
func (v *boolV) AsBool() bool    { return v.b }
func (v *intV) AsInt() int64     { return v.n }
func (v *strV) AsString() string { return v.s }
func (v *modelV) ModelName() string {
	return v.name
}
func (v *setV) Elems() []Value   { return v.elems }
func (v *funcV) Domain() []Value { return v.keys }

func (v *funcV) Field(name string) (Value, bool) {
	i := sort.Search(len(v.keys), func(i int) bool {
		k := v.keys[i]
		if k.Kind() != KindString {
			return k.Kind() > KindString
		}
		return k.(*strV).s >= name
	})
	if i < len(v.keys) {
		if s, ok := v.keys[i].(*strV); ok && s.s == name {
			return v.vals[i], true
		}
	}
	return nil, false
}

func (v *funcV) Apply(arg Value) (Value, bool) {
	i := v.find(arg)
	if i < 0 {
		return nil, false
	}
	return v.vals[i], true
}

// find returns the index of key k, or -1.
func (v *funcV) find(k Value) int {
	// Tuples: keys are 1..n.
	if iv, ok := k.(*intV); ok && len(v.keys) > 0 {
		if first, ok := v.keys[0].(*intV); ok && first.n == 1 {
			if last, ok := v.keys[len(v.keys)-1].(*intV); ok && last.n == int64(len(v.keys)) {
				if iv.n >= 1 && iv.n <= last.n {
					return int(iv.n - 1)
				}
				return -1
			}
		}
	}
	return indexOf(v.keys, k)
}

func (v *setV) contains(x Value) bool { return indexOf(v.elems, x) >= 0 }

// indexOf returns the index of x in sorted (ordered by compare), or -1.
func indexOf(sorted []Value, x Value) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		m := (lo + hi) / 2
		c := compare(sorted[m], x)
		if c == 0 {
			return m
		}
		if c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return -1
}

// mkSet sorts and deduplicates elems in place and wraps them.
func mkSet(elems []Value) *setV {
	if len(elems) == 0 {
		return emptySet
	}
	for i, e := range elems {
		elems[i] = norm(e)
	}
	if !strictlySorted(elems) {
		sort.Slice(elems, func(i, j int) bool { return compare(elems[i], elems[j]) < 0 })
		out := elems[:1]
		for _, e := range elems[1:] {
			if compare(out[len(out)-1], e) != 0 {
				out = append(out, e)
			}
		}
		elems = out
	}
	return &setV{elems: elems}
}

// strictlySorted reports whether vs is in increasing compare order, without duplicates.
func strictlySorted(vs []Value) bool {
	for i := 1; i < len(vs); i++ {
		if compare(vs[i-1], vs[i]) >= 0 {
			return false
		}
	}
	return true
}

var tupleKeys sync.Map // int -> []Value, for n >= tupleKeysFixed

// tupleKeysFixed is how many key slices 1..n are built in advance.
const tupleKeysFixed = 64

var fixedTupleKeys = func() [][]Value {
	out := make([][]Value, tupleKeysFixed)
	for n := range out {
		keys := make([]Value, n)
		for i := range keys {
			keys[i] = mkInt(int64(i + 1))
		}
		out[n] = keys
	}
	return out
}()

func intKeys(n int) []Value {
	if n < tupleKeysFixed {
		return fixedTupleKeys[n]
	}
	if k, ok := tupleKeys.Load(n); ok {
		return k.([]Value)
	}
	keys := make([]Value, n)
	for i := range keys {
		keys[i] = mkInt(int64(i + 1))
	}
	tupleKeys.Store(n, keys)
	return keys
}

func mkTuple(vals []Value) *funcV {
	if len(vals) == 0 {
		return emptyFunc
	}
	for i, v := range vals {
		vals[i] = norm(v)
	}
	return &funcV{keys: intKeys(len(vals)), vals: vals}
}

// mkFunc builds a function from parallel slices (which it may reorder).
func mkFunc(keys, vals []Value) *funcV {
	if len(keys) == 0 {
		return emptyFunc
	}
	for i := range keys {
		keys[i] = norm(keys[i])
		vals[i] = norm(vals[i])
	}
	if !strictlySorted(keys) {
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return compare(keys[idx[i]], keys[idx[j]]) < 0 })
		nk := make([]Value, 0, len(keys))
		nv := make([]Value, 0, len(keys))
		for _, i := range idx {
			if len(nk) > 0 && compare(nk[len(nk)-1], keys[i]) == 0 {
				nv[len(nv)-1] = vals[i]
				continue
			}
			nk = append(nk, keys[i])
			nv = append(nv, vals[i])
		}
		keys, vals = nk, nv
	}
	if isTupleKeys(keys) {
		keys = intKeys(len(keys))
	}
	return &funcV{keys: keys, vals: vals}
}

func isTupleKeys(keys []Value) bool {
	for i, k := range keys {
		iv, ok := k.(*intV)
		if !ok || iv.n != int64(i+1) {
			return false
		}
	}
	return true
}

// norm turns a lazy set into an enumerated one; other values are returned as is.
func norm(v Value) Value {
	if l, ok := v.(lazySet); ok {
		return l.enum()
	}
	return v
}

// compare is the canonical total order of docs/tla-graph.md.
func compare(a, b Value) int {
	// the kinds met most (model values, strings, integers) first, without an
	// interface comparison or Kind's dynamic calls
	switch x := a.(type) {
	case *modelV:
		if y, ok := b.(*modelV); ok {
			if x == y {
				return 0
			}
			return strings.Compare(x.name, y.name)
		}
	case *strV:
		if y, ok := b.(*strV); ok {
			if x == y {
				return 0
			}
			return strings.Compare(x.s, y.s)
		}
	case *intV:
		if y, ok := b.(*intV); ok {
			return cmp.Compare(x.n, y.n)
		}
	}
	if a == b {
		return 0
	}
	ka, kb := a.Kind(), b.Kind()
	if ka != kb {
		if ka < kb {
			return -1
		}
		return 1
	}
	switch x := a.(type) {
	case *boolV:
		y := b.(*boolV)
		if x.b == y.b {
			return 0
		}
		if !x.b {
			return -1
		}
		return 1
	case *intV:
		return cmp.Compare(x.n, b.(*intV).n)
	case *strV:
		return strings.Compare(x.s, b.(*strV).s)
	case *modelV:
		return strings.Compare(x.name, b.(*modelV).name)
	case *funcV:
		y := b.(*funcV)
		if c := compareLists(x.keys, y.keys); c != 0 {
			return c
		}
		return compareLists(x.vals, y.vals)
	}
	// sets, possibly lazy
	return compareLists(norm(a).(*setV).elems, norm(b).(*setV).elems)
}

// compareLists orders the shorter list first, then lists of one length
// element by element.
func compareLists(x, y []Value) int {
	if len(x) != len(y) {
		if len(x) < len(y) {
			return -1
		}
		return 1
	}
	for i := range x {
		if c := compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	return 0
}

// comparable reports whether TLC allows comparing a and b for equality: values of
// the same kind, or any value against a model value.
func comparable(a, b Value) bool {
	ka, kb := a.Kind(), b.Kind()
	return ka == kb || ka == KindModel || kb == KindModel
}

// String methods.

func (v *boolV) String() string  { return valString(v) }
func (v *intV) String() string   { return strconv.FormatInt(v.n, 10) }
func (v *strV) String() string   { return valString(v) }
func (v *modelV) String() string { return v.name }
func (v *setV) String() string   { return valString(v) }
func (v *funcV) String() string  { return valString(v) }

func valString(v Value) string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v *boolV) write(b *strings.Builder) {
	if v.b {
		b.WriteString("TRUE")
	} else {
		b.WriteString("FALSE")
	}
}
func (v *intV) write(b *strings.Builder)   { b.WriteString(strconv.FormatInt(v.n, 10)) }
func (v *modelV) write(b *strings.Builder) { b.WriteString(v.name) }
func (v *strV) write(b *strings.Builder) {
	b.WriteByte('"')
	for i := 0; i < len(v.s); i++ {
		switch c := v.s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
func (v *setV) write(b *strings.Builder) { writeList(b, "{", v.elems, "}") }

// writeList writes open, the values separated by commas, and close.
func writeList(b *strings.Builder, open string, vals []Value, close string) {
	b.WriteString(open)
	for i, e := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		e.write(b)
	}
	b.WriteString(close)
}

func (v *funcV) write(b *strings.Builder) {
	switch {
	case len(v.keys) == 0:
		b.WriteString("<<>>")
	case isTupleKeys(v.keys):
		writeList(b, "<<", v.vals, ">>")
	case v.isRecord():
		b.WriteByte('[')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.(*strV).s)
			b.WriteString(" |-> ")
			v.vals[i].write(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('(')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteString(" @@ ")
			}
			k.write(b)
			b.WriteString(" :> ")
			v.vals[i].write(b)
		}
		b.WriteByte(')')
	}
}

func (v *funcV) isRecord() bool {
	for _, k := range v.keys {
		if k.Kind() != KindString {
			return false
		}
	}
	return len(v.keys) > 0
}

// Canonical byte encoding: injective, used as the exact key of a state.

const (
	tagFalse byte = iota
	tagTrue
	tagInt
	tagStr
	tagModel
	tagSet
	tagFunc
	tagTuple
)

func encode(buf []byte, v Value) []byte {
	switch x := v.(type) {
	case *boolV:
		if x.b {
			return append(buf, tagTrue)
		}
		return append(buf, tagFalse)
	case *intV:
		buf = append(buf, tagInt)
		return binary.AppendVarint(buf, x.n)
	case *strV:
		buf = append(buf, tagStr)
		buf = binary.AppendUvarint(buf, uint64(len(x.s)))
		return append(buf, x.s...)
	case *modelV:
		buf = append(buf, tagModel)
		buf = binary.AppendUvarint(buf, uint64(len(x.name)))
		return append(buf, x.name...)
	case *setV:
		buf = append(buf, tagSet)
		buf = binary.AppendUvarint(buf, uint64(len(x.elems)))
		for _, e := range x.elems {
			buf = encode(buf, e)
		}
		return buf
	case *funcV:
		if len(x.keys) > 0 && isTupleKeysFast(x.keys) {
			buf = append(buf, tagTuple)
			buf = binary.AppendUvarint(buf, uint64(len(x.vals)))
			for _, e := range x.vals {
				buf = encode(buf, e)
			}
			return buf
		}
		buf = append(buf, tagFunc)
		buf = binary.AppendUvarint(buf, uint64(len(x.keys)))
		for i, k := range x.keys {
			buf = encode(buf, k)
			buf = encode(buf, x.vals[i])
		}
		return buf
	}
	return encode(buf, norm(v))
}

// isTupleKeysFast relies on mkFunc/mkTuple sharing intKeys slices for tuples.
func isTupleKeysFast(keys []Value) bool {
	k := intKeys(len(keys))
	return &k[0] == &keys[0]
}

func kindErr(v Value) string {
	return fmt.Sprintf("%s %s", v.Kind(), shortString(v))
}

func shortString(v Value) string {
	s := v.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
