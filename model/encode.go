package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file writes a State as the TLA+ checker prints one in its graph dump
// (docs/tla-graph.md): a record of the spec's variables sorted by name, each value in
// canonical TLA+ syntax. Two states are equal exactly when their texts are equal.

// specVars are the spec's variables in byte order, each with its writer.
var specVars = []struct {
	name  string
	write varWriter
}{
	{"admitCtx", perEffect(func(c Config, e Effect) string { return ctxSetText(c, e.AdmitCtx) })},
	{"admits", perEffect(func(_ Config, e Effect) string { return strconv.Itoa(e.Admits) })},
	{"approved", perEffect(func(_ Config, e Effect) string { return tlaBool(e.Approved) })},
	{"doomed", perRun(func(c Config, r Run) string { return keySetText(c, r.Doomed) })},
	{"effEpoch", perEffect(func(_ Config, e Effect) string { return strconv.Itoa(e.Epoch) })},
	{"effStatus", perEffect(func(_ Config, e Effect) string { return strconv.Quote(string(e.Status)) })},
	{"gated", perEffect(func(_ Config, e Effect) string { return tlaBool(e.Gated) })},
	{"outcome", perEffect(func(_ Config, e Effect) string { return strconv.Quote(e.Outcome) })},
	{"pending", perRun(func(c Config, r Run) string { return keySetText(c, r.Pending) })},
	{"runEpoch", perRun(func(_ Config, r Run) string { return strconv.Itoa(r.Epoch) })},
	{"runStatus", perRun(func(_ Config, r Run) string { return strconv.Quote(string(r.Status)) })},
}

// Text is the canonical TLA+ text of s, as in the TLA+ checker's graph dump.
func (s State) Text(c Config) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range specVars {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.name)
		b.WriteString(" |-> ")
		v.write(&b, c, s)
	}
	b.WriteByte(']')
	return b.String()
}

// varWriter writes the value of one of the spec's variables in state s.
type varWriter func(b *strings.Builder, c Config, s State)

// perRun writes a variable [Runs -> X], f giving a run's X.
func perRun(f func(Config, Run) string) varWriter {
	return func(b *strings.Builder, c Config, s State) {
		writeFunc(b, c.Runs[:len(s.Runs)], func(i int) string { return f(c, s.Runs[i]) })
	}
}

// perEffect writes a variable [Runs -> [Keys -> X]], f giving an effect's X.
func perEffect(f func(Config, Effect) string) varWriter {
	return perRun(func(c Config, r Run) string {
		var kb strings.Builder
		writeFunc(&kb, c.Keys[:len(r.Effects)], func(j int) string { return f(c, r.Effects[j]) })
		return kb.String()
	})
}

// writeFunc writes the function from names to f's values as (n1 :> f(0) @@ n2 :> f(1)).
func writeFunc(b *strings.Builder, names []string, f func(i int) string) {
	b.WriteByte('(')
	for i, n := range names {
		if i > 0 {
			b.WriteString(" @@ ")
		}
		b.WriteString(n)
		b.WriteString(" :> ")
		b.WriteString(f(i))
	}
	b.WriteByte(')')
}

// keySetText writes a set of keys, given as membership flags, in name order.
func keySetText(c Config, in []bool) string {
	var names []string
	for j, ok := range in {
		if ok {
			names = append(names, c.Keys[j])
		}
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// ctxSetText writes a set of Ctx records in TLA+'s canonical order: records compare
// field by field in field-name order (current, doomed, pending, status); booleans
// FALSE < TRUE; sets by cardinality, then element by element; strings by bytes.
func ctxSetText(c Config, cs []Ctx) string {
	sorted := slices.Clone(cs)
	slices.SortFunc(sorted, compareCtx)
	parts := make([]string, len(sorted))
	for i, x := range sorted {
		parts[i] = "[current |-> " + tlaBool(x.Current) +
			", doomed |-> " + tlaBool(x.Doomed) +
			", pending |-> " + keySetText(c, x.Pending) +
			", status |-> " + strconv.Quote(string(x.Status)) + "]"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

// compareKeySet orders two sets of keys (membership flags over names sorted by
// bytes) by cardinality, then element by element.
func compareKeySet(a, b []bool) int {
	var ea, eb []int
	for j := range a {
		if a[j] {
			ea = append(ea, j)
		}
		if b[j] {
			eb = append(eb, j)
		}
	}
	if n := cmp.Compare(len(ea), len(eb)); n != 0 {
		return n
	}
	return slices.Compare(ea, eb)
}

func compareCtx(a, b Ctx) int {
	if n := compareBool(a.Current, b.Current); n != 0 {
		return n
	}
	if n := compareBool(a.Doomed, b.Doomed); n != 0 {
		return n
	}
	if n := compareKeySet(a.Pending, b.Pending); n != 0 {
		return n
	}
	return strings.Compare(string(a.Status), string(b.Status))
}

// addCtx adds x to the set cs (no duplicates).
func addCtx(cs []Ctx, x Ctx) []Ctx {
	for _, y := range cs {
		if compareCtx(x, y) == 0 {
			return cs
		}
	}
	return append(slices.Clone(cs), x)
}

// permute returns s with run i renamed to runs[i] and key j to keys[j]
// (permutations of indices).
func (s State) permute(runs, keys []int) State {
	t := State{Runs: make([]Run, len(s.Runs))}
	pk := func(in []bool) []bool {
		out := make([]bool, len(in))
		for j, v := range in {
			out[keys[j]] = v
		}
		return out
	}
	for i, r := range s.Runs {
		nr := Run{Status: r.Status, Epoch: r.Epoch, Pending: pk(r.Pending), Doomed: pk(r.Doomed),
			Effects: make([]Effect, len(r.Effects))}
		for j, e := range r.Effects {
			ne := e
			ne.AdmitCtx = make([]Ctx, len(e.AdmitCtx))
			for x, ctx := range e.AdmitCtx {
				ctx.Pending = pk(ctx.Pending)
				ne.AdmitCtx[x] = ctx
			}
			nr.Effects[keys[j]] = ne
		}
		t.Runs[runs[i]] = nr
	}
	return t
}

// permutations lists every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := make([]int, 0, n)
			q = append(q, p[:pos]...)
			q = append(q, n-1)
			q = append(q, p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}

// Key is an exact binary encoding of s (injective on the states of one Config),
// much shorter than its text; the explorer uses it as the key of a state.
func (s State) Key() string {
	b := make([]byte, 0, 64)
	mask := func(in []bool) byte {
		var m byte
		for j, v := range in {
			if v {
				m |= 1 << j
			}
		}
		return m
	}
	for _, r := range s.Runs {
		b = append(b, code(runStatusCode, r.Status), byte(r.Epoch), mask(r.Pending), mask(r.Doomed))
		for _, e := range r.Effects {
			flags := byte(0)
			if e.Gated {
				flags |= 1
			}
			if e.Approved {
				flags |= 2
			}
			b = append(b, code(effStatusCode, e.Status), byte(e.Epoch), flags, code(outcomeCode, e.Outcome),
				byte(e.Admits), byte(len(e.AdmitCtx)))
			cs := slices.Clone(e.AdmitCtx)
			slices.SortFunc(cs, compareCtx)
			for _, c := range cs {
				cf := byte(0)
				if c.Current {
					cf |= 1
				}
				if c.Doomed {
					cf |= 2
				}
				b = append(b, code(runStatusCode, c.Status), mask(c.Pending), cf)
			}
		}
	}
	return string(b)
}

var (
	runStatusCode = map[RunStatus]byte{RunNone: 0, RunActive: 1, RunCancelled: 2, RunTimedOut: 3, RunRetired: 4}
	effStatusCode = map[EffectStatus]byte{EffAbsent: 0, EffHeld: 1, EffReleased: 2, EffAdmitted: 3,
		EffCompleted: 4, EffRejected: 5}
	outcomeCode = map[string]byte{NoOutcome: 0, OK: 1, Failed: 2}
)

// code is m[v]; a value with no code is a bug (two values would share a key), so it
// panics rather than reading as the zero code.
func code[V comparable](m map[V]byte, v V) byte {
	c, ok := m[v]
	if !ok {
		panic(fmt.Sprintf("soundgate/model: no key code for %v", v))
	}
	return c
}

// canonicalizer maps a state to the key of its class: its own compact key, or under
// symmetry the least key over every permutation of runs combined with every
// permutation of keys (the spec's Symmetry, the whole group), so that each orbit has
// exactly one key.
type canonicalizer struct {
	perms [][2][]int
}

func newCanonicalizer(c Config) canonicalizer {
	var cz canonicalizer
	if c.Symmetry {
		for _, pr := range permutations(len(c.Runs)) {
			for _, pk := range permutations(len(c.Keys)) {
				cz.perms = append(cz.perms, [2][]int{pr, pk})
			}
		}
	}
	return cz
}

func (cz canonicalizer) key(s State) string {
	best := s.Key()
	for _, p := range cz.perms {
		if t := s.permute(p[0], p[1]).Key(); t < best {
			best = t
		}
	}
	return best
}
