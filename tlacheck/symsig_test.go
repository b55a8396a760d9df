package tlacheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymmetryGroup: a SYMMETRY set stands for the group it generates, as in TLC; the
// group is keyed by signatures exactly when it is the product of the full
// permutation groups of its sets.
func TestSymmetryGroup(t *testing.T) {
	a1, a2, b1, b2, b3 := mkModel("a1"), mkModel("a2"), mkModel("b1"), mkModel("b2"), mkModel("b3")
	swap := func(x, y *modelV) map[*modelV]*modelV { return map[*modelV]*modelV{x: y, y: x} }
	join := func(ms ...map[*modelV]*modelV) map[*modelV]*modelV {
		out := map[*modelV]*modelV{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	cycle := map[*modelV]*modelV{b1: b2, b2: b3, b3: b1}
	for _, c := range []struct {
		name    string
		perms   []map[*modelV]*modelV
		group   int  // permutations but the identity
		product bool // keyed by signatures
		sets    string
	}{
		{"the permutations of one set", []map[*modelV]*modelV{swap(a1, a2)}, 1, true, "a1 a2"},
		{"two swaps generate the group of 3", []map[*modelV]*modelV{swap(b1, b2), swap(b2, b3)}, 5, true, "b1 b2 b3"},
		{"a 3-cycle generates its powers only", []map[*modelV]*modelV{cycle}, 2, false, ""},
		{"the union of two groups generates their product", []map[*modelV]*modelV{swap(a1, a2), swap(b1, b2), swap(b2, b3)}, 11, true, "a1 a2 | b1 b2 b3"},
		{"a diagonal swap is not a product", []map[*modelV]*modelV{join(swap(a1, a2), swap(b1, b2))}, 1, false, ""},
		{"a fixed point in a map is not a moved value", []map[*modelV]*modelV{join(swap(a1, a2), map[*modelV]*modelV{b1: b1})}, 1, true, "a1 a2"},
		{"a duplicate counts once", []map[*modelV]*modelV{swap(a1, a2), swap(a2, a1)}, 1, true, "a1 a2"},
		{"not a bijection", []map[*modelV]*modelV{{a1: a2, a2: a2}}, 1, false, ""},
	} {
		group, prod, err := symmetryGroup(c.perms)
		noErr(t, err)
		if len(group) != c.group || (prod != nil) != c.product {
			t.Errorf("%s: %d permutations, product %t; want %d, %t", c.name, len(group), prod != nil, c.group, c.product)
			continue
		}
		if prod == nil {
			continue
		}
		var sets []string
		for g := 0; g+1 < len(prod.start); g++ {
			var names []string
			for _, v := range prod.vals[prod.start[g]:prod.start[g+1]] {
				names = append(names, v.name)
			}
			sets = append(sets, strings.Join(names, " "))
		}
		if got := strings.Join(sets, " | "); got != c.sets {
			t.Errorf("%s: symmetric sets %q, want %q", c.name, got, c.sets)
		}
	}
	// The bound on the group: the 9! permutations of 9 values from two generators.
	var vals []*modelV
	for _, n := range []string{"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"} {
		vals = append(vals, mkModel(n))
	}
	rot := map[*modelV]*modelV{}
	for i, v := range vals {
		rot[v] = vals[(i+1)%len(vals)]
	}
	if _, _, err := symmetryGroup([]map[*modelV]*modelV{swap(vals[0], vals[1]), rot}); err == nil || !strings.Contains(err.Error(), "more than 65536 permutations") {
		t.Errorf("a group of 9! permutations: %v, want the bound's error", err)
	}
}

// TestSignatureKeysPartitionAsEnumeration: on every state reachable without symmetry
// reduction, the key by signatures is the same for every image of the state under the
// group, taken from the cache of the parent's values or not, and two states get the
// same key by signatures exactly when they get the same key by enumerating the group:
// the same orbits, so the same figures. The specs reach states whose signatures tie
// (the initial ones: every key alike) and states where they do not.
func TestSignatureKeysPartitionAsEnumeration(t *testing.T) {
	gate := func(cfg string) *Spec {
		src, err := os.ReadFile(filepath.Join("..", "spec", "tla", "SoundGate.tla"))
		noErr(t, err)
		return loadSource(t, string(src), cfg)
	}
	for _, c := range []struct {
		name      string
		s         func() *Spec
		maxStates int // 0: all
	}{
		{"SymPair", func() *Spec { return loadTestdata(t, "SymPair", "SymPair") }, 0},
		{"SymPair_union", func() *Spec { return loadTestdata(t, "SymPair", "SymPair_union") }, 0},
		{"TwoPhase_symm", func() *Spec { return loadTestdata(t, "TwoPhase", "TwoPhase_symm") }, 0},
		{"SoundGate, 1 run, 3 keys", func() *Spec {
			return gate("CONSTANTS Runs = {r1} Keys = {k1, k2, k3} MaxEpoch = 1 SPECIFICATION Spec SYMMETRY Symmetry")
		}, 0},
		// 62,500 states in all; the first 12,000 in breadth-first order
		{"SoundGate, 2 runs, 2 keys", func() *Spec {
			return gate("CONSTANTS Runs = {r1, r2} Keys = {k1, k2} MaxEpoch = 1 SPECIFICATION Spec SYMMETRY Symmetry")
		}, 12000},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := c.s()
			if s.symProduct == nil {
				t.Fatal("the SYMMETRY is not taken as a product of full permutation groups")
			}
			states, tied, untied := checkSignatureKeys(t, s, c.maxStates)
			t.Logf("%d states, %d with signatures that tie, %d without", states, tied, untied)
			if tied == 0 || untied == 0 {
				t.Errorf("%d states whose signatures tie and %d whose do not: want both", tied, untied)
			}
		})
	}
}

// checkSignatureKeys explores s without symmetry reduction, breadth first, up to
// maxStates states (0: all), and compares, state by state, the keys by signatures
// and by enumeration; it returns the number of states and of those with more than one
// image allowed by their signatures, and with one.
func checkSignatureKeys(t *testing.T, s *Spec, maxStates int) (states, tied, untied int) {
	t.Helper()
	plain := s.newExplorer(Options{NoSymmetry: true})
	bySig := s.newExplorer(Options{})
	byEnum := s.newExplorer(Options{SymmetryByEnumeration: true})
	if bySig.prod == nil || byEnum.prod != nil || len(bySig.symm) == 0 {
		t.Fatal("the explorers do not key as asked")
	}
	seen := map[string]bool{}
	sigToEnum, enumToSig := map[string]string{}, map[string]string{}
	var queue [][]Value
	failures := 0
	visit := func(st, parent []Value) {
		k := string(plain.key(st))
		if seen[k] || maxStates > 0 && len(seen) >= maxStates {
			return
		}
		seen[k] = true
		st = append([]Value(nil), st...)
		queue = append(queue, st)
		bySig.setParent(parent)
		ks := string(bySig.key(st))
		if len(bySig.images) > 1 {
			tied++
		} else {
			untied++
		}
		bySig.setParent(nil)
		if again := string(bySig.key(st)); again != ks {
			failures++
			t.Errorf("state %s: the key by signatures depends on the parent's cache", s.formatState(st))
		}
		for _, m := range bySig.symm {
			img := make([]Value, len(st))
			for i, v := range st {
				img[i] = permute(v, m)
			}
			if string(bySig.key(img)) != ks && failures < 5 {
				failures++
				t.Errorf("state %s and its image %s have different keys by signatures", s.formatState(st), s.formatState(img))
			}
		}
		ke := string(byEnum.key(st))
		if prev, ok := sigToEnum[ks]; ok && prev != ke && failures < 5 {
			failures++
			t.Errorf("state %s: its key by signatures is another state's, not of its orbit", s.formatState(st))
		}
		if prev, ok := enumToSig[ke]; ok && prev != ks && failures < 5 {
			failures++
			t.Errorf("state %s: of one orbit with another state, but its key by signatures differs", s.formatState(st))
		}
		sigToEnum[ks], enumToSig[ke] = ke, ks
	}
	noErr(t, plain.initStates(func(st []Value) { visit(st, nil) }))
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		noErr(t, plain.successors(st, func(next []Value) { visit(next, st) }))
	}
	if len(sigToEnum) != len(enumToSig) {
		t.Errorf("%d keys by signatures, %d by enumeration", len(sigToEnum), len(enumToSig))
	}
	return len(seen), tied, untied
}
