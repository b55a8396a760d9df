package tlacheck

import (
	"strings"
	"sync/atomic"
)

// lazySet is a set that is not enumerated until it must be: intervals, the infinite
// sets Nat, Int and STRING, SUBSET S, [S -> T], record sets, Seq(S) and products.
type lazySet interface {
	Value
	member(v Value) bool
	enum() *setV
	size() int64 // -1 when infinite or unknown
}

// memoSet keeps a finite lazy set's enumeration once it is built. A constant's lazy
// set is shared by the workers of a run: two may build it at once, and either
// enumeration (equal) is kept.
type memoSet struct{ memo atomic.Pointer[setV] }

// enumOnce returns the enumeration, building it with build the first time.
func (m *memoSet) enumOnce(build func() *setV) *setV {
	if s := m.memo.Load(); s != nil {
		return s
	}
	s := build()
	m.memo.Store(s)
	return s
}

// setLimit bounds the elements of an enumerated lazy set.
const setLimit = 10_000_000

type intervalV struct {
	valBase
	memoSet
	lo, hi int64
}

type infSetV struct {
	valBase
	name string // Nat, Int, STRING
}

type powerSetV struct {
	valBase
	memoSet
	base *setV
}

type funcSetV struct {
	valBase
	memoSet
	dom, rng Value
}

type recSetV struct {
	valBase
	memoSet
	names []string // sorted
	sets  []Value
}

type seqSetV struct {
	valBase
	base Value
}

type crossV struct {
	valBase
	memoSet
	sets []Value
}

func (v *intervalV) Kind() Kind { return KindSet }
func (v *infSetV) Kind() Kind   { return KindSet }
func (v *powerSetV) Kind() Kind { return KindSet }
func (v *funcSetV) Kind() Kind  { return KindSet }
func (v *recSetV) Kind() Kind   { return KindSet }
func (v *seqSetV) Kind() Kind   { return KindSet }
func (v *crossV) Kind() Kind    { return KindSet }

func (v *intervalV) Elems() []Value { return v.enum().elems }
func (v *infSetV) Elems() []Value   { return v.enum().elems }
func (v *powerSetV) Elems() []Value { return v.enum().elems }
func (v *funcSetV) Elems() []Value  { return v.enum().elems }
func (v *recSetV) Elems() []Value   { return v.enum().elems }
func (v *seqSetV) Elems() []Value   { return v.enum().elems }
func (v *crossV) Elems() []Value    { return v.enum().elems }

func (v *intervalV) String() string { return valString(v.enum()) }
func (v *infSetV) String() string   { return v.name }
func (v *powerSetV) String() string { return valString(v.enum()) }
func (v *funcSetV) String() string  { return valString(v.enum()) }
func (v *recSetV) String() string   { return valString(v.enum()) }
func (v *seqSetV) String() string   { return "Seq(" + v.base.String() + ")" }
func (v *crossV) String() string    { return valString(v.enum()) }

func (v *intervalV) write(b *strings.Builder) { v.enum().write(b) }
func (v *infSetV) write(b *strings.Builder)   { b.WriteString(v.name) }
func (v *powerSetV) write(b *strings.Builder) { v.enum().write(b) }
func (v *funcSetV) write(b *strings.Builder)  { v.enum().write(b) }
func (v *recSetV) write(b *strings.Builder)   { v.enum().write(b) }
func (v *seqSetV) write(b *strings.Builder)   { b.WriteString(v.String()) }
func (v *crossV) write(b *strings.Builder)    { v.enum().write(b) }

func (v *intervalV) size() int64 {
	if v.hi < v.lo {
		return 0
	}
	return v.hi - v.lo + 1
}
func (v *infSetV) size() int64 { return -1 }
func (v *powerSetV) size() int64 {
	if len(v.base.elems) >= 62 {
		return -1
	}
	return 1 << len(v.base.elems)
}
func (v *funcSetV) size() int64 {
	d, r := setSize(v.dom), setSize(v.rng)
	if d < 0 || r < 0 {
		return -1
	}
	n := int64(1)
	for i := int64(0); i < d; i++ {
		n *= r
		if n > setLimit {
			return -1
		}
	}
	return n
}
func (v *recSetV) size() int64 { return prodSize(v.sets) }
func (v *seqSetV) size() int64 { return -1 }
func (v *crossV) size() int64  { return prodSize(v.sets) }

func prodSize(sets []Value) int64 {
	n := int64(1)
	for _, s := range sets {
		k := setSize(s)
		if k < 0 {
			return -1
		}
		n *= k
		if n > setLimit {
			return -1
		}
	}
	return n
}

func setSize(s Value) int64 {
	switch x := s.(type) {
	case *setV:
		return int64(len(x.elems))
	case lazySet:
		return x.size()
	}
	return -1
}

func tooBig(v Value) {
	throw(Pos{}, "cannot enumerate the set %s: infinite or more than %d elements", v.String(), setLimit)
}

func (v *intervalV) enum() *setV { return v.enumOnce(v.enum0) }

func (v *intervalV) enum0() *setV {
	n := v.size()
	if n > setLimit {
		tooBig(v)
	}
	elems := make([]Value, n)
	for i := range elems {
		elems[i] = mkInt(v.lo + int64(i))
	}
	return &setV{elems: elems}
}

func (v *infSetV) enum() *setV { tooBig(v); return nil }
func (v *seqSetV) enum() *setV { tooBig(v); return nil }

func (v *powerSetV) enum() *setV { return v.enumOnce(v.enum0) }

func (v *powerSetV) enum0() *setV {
	n := v.size()
	if n < 0 || n > setLimit {
		tooBig(v)
	}
	out := make([]Value, 0, n)
	for mask := int64(0); mask < n; mask++ {
		var sub []Value
		for i, e := range v.base.elems {
			if mask&(1<<i) != 0 {
				sub = append(sub, e)
			}
		}
		out = append(out, &setV{elems: sub})
	}
	return mkSet(out)
}

func (v *funcSetV) enum() *setV { return v.enumOnce(v.enum0) }

func (v *funcSetV) enum0() *setV {
	if v.size() < 0 {
		tooBig(v)
	}
	dom := norm(v.dom).(*setV).elems
	rng := norm(v.rng).(*setV).elems
	var out []Value
	if len(dom) > 0 && len(rng) == 0 {
		return emptySet
	}
	idx := make([]int, len(dom))
	for {
		vals := make([]Value, len(dom))
		for i, j := range idx {
			vals[i] = rng[j]
		}
		out = append(out, mkFunc(append([]Value(nil), dom...), vals))
		i := len(idx) - 1
		for i >= 0 {
			idx[i]++
			if idx[i] < len(rng) {
				break
			}
			idx[i] = 0
			i--
		}
		if i < 0 {
			break
		}
	}
	return mkSet(out)
}

func (v *recSetV) enum() *setV { return v.enumOnce(v.enum0) }

func (v *recSetV) enum0() *setV {
	return mkSet(product(v.sets, func(vals []Value) Value {
		keys := make([]Value, len(v.names))
		for i, n := range v.names {
			keys[i] = Str(n)
		}
		return mkFunc(keys, vals)
	}, v))
}

func (v *crossV) enum() *setV { return v.enumOnce(v.enum0) }

func (v *crossV) enum0() *setV {
	return mkSet(product(v.sets, func(vals []Value) Value { return mkTuple(vals) }, v))
}

func product(sets []Value, mk func([]Value) Value, whole Value) []Value {
	if prodSize(sets) < 0 {
		tooBig(whole)
	}
	elems := make([][]Value, len(sets))
	for i, s := range sets {
		elems[i] = norm(s).(*setV).elems
		if len(elems[i]) == 0 {
			return nil
		}
	}
	var out []Value
	idx := make([]int, len(sets))
	for {
		vals := make([]Value, len(sets))
		for i, j := range idx {
			vals[i] = elems[i][j]
		}
		out = append(out, mk(vals))
		i := len(idx) - 1
		for i >= 0 {
			idx[i]++
			if idx[i] < len(elems[i]) {
				break
			}
			idx[i] = 0
			i--
		}
		if i < 0 {
			break
		}
	}
	return out
}

func (v *intervalV) member(x Value) bool {
	i, ok := x.(*intV)
	if !ok {
		memberTypeErr(x, v)
		return false
	}
	return i.n >= v.lo && i.n <= v.hi
}

func (v *infSetV) member(x Value) bool {
	switch v.name {
	case "Nat":
		i, ok := x.(*intV)
		if !ok {
			memberTypeErr(x, v)
			return false
		}
		return i.n >= 0
	case "Int":
		if _, ok := x.(*intV); !ok {
			memberTypeErr(x, v)
			return false
		}
		return true
	default: // STRING
		_, ok := x.(*strV)
		return ok
	}
}

func (v *powerSetV) member(x Value) bool {
	s, ok := norm(x).(*setV)
	if !ok {
		return false
	}
	for _, e := range s.elems {
		if !v.base.contains(e) {
			return false
		}
	}
	return true
}

func (v *funcSetV) member(x Value) bool {
	f, ok := x.(*funcV)
	if !ok {
		return false
	}
	dom := norm(v.dom).(*setV)
	if len(dom.elems) != len(f.keys) {
		return false
	}
	for i, k := range f.keys {
		if compare(k, dom.elems[i]) != 0 {
			return false
		}
		if !memberOf(f.vals[i], v.rng) {
			return false
		}
	}
	return true
}

func (v *recSetV) member(x Value) bool {
	f, ok := x.(*funcV)
	if !ok || len(f.keys) != len(v.names) {
		return false
	}
	for i, n := range v.names {
		s, ok := f.keys[i].(*strV)
		if !ok || s.s != n || !memberOf(f.vals[i], v.sets[i]) {
			return false
		}
	}
	return true
}

func (v *seqSetV) member(x Value) bool {
	f, ok := x.(*funcV)
	if !ok {
		return false
	}
	if len(f.keys) > 0 && !isTupleKeys(f.keys) {
		return false
	}
	for _, e := range f.vals {
		if !memberOf(e, v.base) {
			return false
		}
	}
	return true
}

func (v *crossV) member(x Value) bool {
	f, ok := x.(*funcV)
	if !ok || len(f.keys) != len(v.sets) || (len(f.keys) > 0 && !isTupleKeys(f.keys)) {
		return false
	}
	for i, e := range f.vals {
		if !memberOf(e, v.sets[i]) {
			return false
		}
	}
	return true
}

func memberTypeErr(x, s Value) {
	if x.Kind() == KindModel {
		return
	}
	throw(Pos{}, "cannot decide whether %s is in %s", kindErr(x), shortString(s))
}

// memberOf decides x \in s.
func memberOf(x, s Value) bool {
	switch set := s.(type) {
	case *setV:
		if len(set.elems) > 0 && !comparable(x, set.elems[0]) {
			throw(Pos{}, "cannot compare %s with elements of %s", kindErr(x), shortString(s))
		}
		return set.contains(x)
	case lazySet:
		if x.Kind() == KindModel {
			if _, ok := set.(*infSetV); !ok {
				return false
			}
		}
		return set.member(x)
	}
	throw(Pos{}, "\\in applied to %s, which is not a set", kindErr(s))
	return false
}
