package tlacheck

import (
	"fmt"
	"sort"
)

// Canonicalisation by signatures. Under SYMMETRY a state is stored under the least
// encoding of its images (symmetry.go) under the group the SYMMETRY set generates,
// as TLC reads it. When that group is exactly the product of the groups of all
// permutations of some disjoint sets of model values (the symmetric sets: from
// {p @@ q : p \in Permutations(Runs), q \in Permutations(Keys)}, or the union of the
// two), the least need not be taken over the whole group: each symmetric value gets a
// signature, a hash of the state in which every symmetric value is replaced by its
// set's placeholder and the value itself is followed to each place it occurs, and the
// least is taken over the permutations that put each set's values in the order of
// their signatures (permuting freely among equal signatures) onto the set's values in
// name order. Usually that is one permutation.
//
// Why the key is still a function of the orbit: a signature names no symmetric value,
// so sig_{πs}(πv) = sig_s(v) for every π of the group; then the permutations allowed
// for πs are exactly those allowed for s composed with π⁻¹, the two states have the
// same set of allowed images, and so the same least one. It is an image of s, and the
// encoding is injective, so states of different orbits get different keys. A hash
// collision between signatures only ties two values, which costs time, not figures.

// symSignaturesMin is the least group keyed by signatures. Of a group of two (one
// set of two values) the second image is mostly given up after a few bytes, which
// costs less than the signatures: WAL.cfg took 6% more CPU with them.
const symSignaturesMin = 3

// symValuesMax bounds the values of the symmetric sets: a permutation's code packs 4
// bits per value. A larger SYMMETRY is keyed by enumerating it.
const symValuesMax = 16

// symProduct is a SYMMETRY set that is, with the identity, the full product of the
// permutation groups of its symmetric sets.
type symProduct struct {
	vals  []*modelV // the symmetric values, set by set, each set in name order
	start []int     // set g is vals[start[g]:start[g+1]]
	group []int32   // vals[i] is of set group[i]
	// image maps a permutation's code to its image's number in the explorer: 0 the
	// identity, j > 0 the permutation symm[j-1].
	image map[uint64]int32
}

// symPermsMax bounds the permutations of the group a SYMMETRY set generates.
const symPermsMax = 1 << 16

// symmetryGroup returns the permutations, the identity left out, of the group that
// the SYMMETRY set perms generates, and that group as a symProduct when it is the
// product of the full permutation groups of its sets, else nil. TLC takes the
// generated group too (tlc2.value.impl.MVPerms.permutationSubgroup closes the set
// under composition): Permutations(A) \cup Permutations(B) stands for their product.
func symmetryGroup(perms []map[*modelV]*modelV) ([]map[*modelV]*modelV, *symProduct, error) {
	// The values some permutation moves, joined into sets by the permutations
	// (union-find); each set in name order, the sets in the order of their first names.
	at := map[*modelV]int{}
	var moved []*modelV
	var up []int
	find := func(i int) int {
		for up[i] != i {
			up[i] = up[up[i]]
			i = up[i]
		}
		return i
	}
	add := func(v *modelV) int {
		if i, ok := at[v]; ok {
			return i
		}
		at[v] = len(moved)
		moved = append(moved, v)
		up = append(up, len(up))
		return len(moved) - 1
	}
	for _, m := range perms {
		for a, b := range m {
			if a != b {
				i, j := find(add(a)), find(add(b))
				up[i] = j
			}
		}
	}
	sets := map[int][]*modelV{}
	for i, v := range moved {
		sets[find(i)] = append(sets[find(i)], v)
	}
	var groups [][]*modelV
	for _, g := range sets {
		sort.Slice(g, func(i, j int) bool { return g[i].name < g[j].name })
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i][0].name < groups[j][0].name })
	p := &symProduct{image: map[uint64]int32{}}
	order := 1 // of the product of the sets' full permutation groups
	for g, set := range groups {
		p.start = append(p.start, len(p.vals))
		for k, v := range set {
			at[v] = len(p.vals)
			p.vals = append(p.vals, v)
			p.group = append(p.group, int32(g))
			order *= k + 1
		}
	}
	p.start = append(p.start, len(p.vals))

	// Each permutation as img, img[i] the index of the image of vals[i]; the group
	// by composing what is found with the permutations given, until nothing is new.
	n := len(p.vals)
	name := func(img []int) string {
		b := make([]byte, 0, 2*n)
		for _, k := range img {
			b = append(b, byte(k), byte(k>>8))
		}
		return string(b)
	}
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	seen := map[string]bool{name(identity): true}
	var list [][]int
	bijective := true
	for _, m := range perms {
		img := make([]int, n)
		hit := make([]bool, n)
		for i, v := range p.vals {
			w := v
			if y, ok := m[v]; ok {
				w = y
			}
			img[i] = at[w]
			bijective = bijective && !hit[img[i]]
			hit[img[i]] = true
		}
		if k := name(img); !seen[k] {
			seen[k] = true
			list = append(list, img)
		}
	}
	gens := list
	if bijective && len(list)+1 == order {
		gens = nil // the whole product already: closed
	}
	for i := 0; i < len(list) && gens != nil; i++ {
		for _, g := range gens {
			img := make([]int, n)
			for k, x := range list[i] {
				img[k] = g[x]
			}
			if k := name(img); !seen[k] {
				if len(list) >= symPermsMax {
					return nil, nil, fmt.Errorf("it generates more than %d permutations", symPermsMax)
				}
				seen[k] = true
				list = append(list, img)
			}
		}
	}
	out := make([]map[*modelV]*modelV, len(list))
	for j, img := range list {
		m := map[*modelV]*modelV{}
		for i, k := range img {
			if k != i {
				m[p.vals[i]] = p.vals[k]
			}
		}
		out[j] = m
	}
	if !bijective || len(list)+1 != order || n > symValuesMax {
		return out, nil, nil // keyed by enumerating out
	}
	p.image[p.code(identity)] = 0
	for j, img := range list {
		p.image[p.code(img)] = int32(j + 1)
	}
	return out, p, nil
}

// code packs a permutation, img[i] the index of the image of vals[i], in 4 bits a value.
func (p *symProduct) code(img []int) uint64 {
	var c uint64
	for i, k := range img {
		c |= uint64(k) << (4 * i)
	}
	return c
}

// index is v's index in vals, or -1 when v is not symmetric.
func (p *symProduct) index(v *modelV) int {
	for i, w := range p.vals {
		if w == v {
			return i
		}
	}
	return -1
}

// hcat hashes a pair in order (mix64: fpset.go).
func hcat(a, b uint64) uint64 { return mix64(a*0x9e3779b97f4a7c15 ^ b) }

func hashString(s string) uint64 { // FNV-1a: the same in every process
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

const (
	hashTrue = 0x5bd1e9955bd1e995 + iota
	hashFalse
	hashInt
	hashStr
	hashModel
	hashPlaceholder
	hashSet
	hashFunc
	hashKey
	hashVal
)

// sigNode is a value of a state's tree, in preorder: h the hash of the value as if
// every symmetric value in it were its set's placeholder (a function of the value
// that names no symmetric value), end the index past its subtree, sym whether a
// symmetric value occurs in it.
type sigNode struct {
	h   uint64
	end int32
	sym bool
}

// signatures adds to sig[i], for each place vals[i] occurs in v, a hash of that
// place: the place of v (place), and on the way down the hash of each element passed
// through, or of each pair passed through and which side of it. nodes is scratch
// space, returned for the next call.
func (p *symProduct) signatures(v Value, place uint64, nodes []sigNode, sig []uint64) []sigNode {
	nodes = p.hashTree(v, nodes[:0])
	p.occur(v, place, nodes, 0, sig)
	return nodes
}

// hashTree appends v's nodes to nodes in preorder. The elements of a set and the
// pairs of a function are summed, as their order depends on names; a tuple is a
// function from 1..n, hashed as any other.
func (p *symProduct) hashTree(v Value, nodes []sigNode) []sigNode {
	at := len(nodes)
	nodes = append(nodes, sigNode{})
	var h uint64
	sym := false
	switch x := v.(type) {
	case *boolV:
		h = hashFalse
		if x.b {
			h = hashTrue
		}
	case *intV:
		h = hcat(hashInt, uint64(x.n))
	case *strV:
		h = hcat(hashStr, hashString(x.s))
	case *modelV:
		h = hcat(hashModel, hashString(x.name))
		if i := p.index(x); i >= 0 {
			h, sym = hcat(hashPlaceholder, uint64(p.group[i])), true
		}
	case *setV:
		var sum uint64
		for _, el := range x.elems {
			c := len(nodes)
			nodes = p.hashTree(el, nodes)
			sum += mix64(nodes[c].h)
			sym = sym || nodes[c].sym
		}
		h = hcat(hcat(hashSet, uint64(len(x.elems))), sum)
	case *funcV:
		var sum uint64
		for i, k := range x.keys {
			kc := len(nodes)
			nodes = p.hashTree(k, nodes)
			vc := len(nodes)
			nodes = p.hashTree(x.vals[i], nodes)
			sum += mix64(hcat(nodes[kc].h, nodes[vc].h))
			sym = sym || nodes[kc].sym || nodes[vc].sym
		}
		h = hcat(hcat(hashFunc, uint64(len(x.keys))), sum)
	case lazySet:
		return p.hashTree(x.enum(), nodes[:at])
	}
	nodes[at] = sigNode{h: h, end: int32(len(nodes)), sym: sym}
	return nodes
}

// occur walks v, whose nodes start at nodes[at], with c the hash of its place.
func (p *symProduct) occur(v Value, c uint64, nodes []sigNode, at int, sig []uint64) {
	if !nodes[at].sym {
		return
	}
	switch x := v.(type) {
	case *modelV:
		sig[p.index(x)] += mix64(c)
	case *setV:
		j := at + 1
		for _, el := range x.elems {
			p.occur(el, hcat(c, nodes[j].h), nodes, j, sig)
			j = int(nodes[j].end)
		}
	case *funcV:
		j := at + 1
		for i, k := range x.keys {
			vj := int(nodes[j].end)
			pc := hcat(c, hcat(nodes[j].h, nodes[vj].h))
			p.occur(k, hcat(pc, hashKey), nodes, j, sig)
			p.occur(x.vals[i], hcat(pc, hashVal), nodes, vj, sig)
			j = int(nodes[vj].end)
		}
	case lazySet:
		p.occur(x.enum(), c, nodes, at, sig)
	}
}

// varPlace is the place of variable i's value.
func varPlace(i int) uint64 { return hcat(hashVal, uint64(i)) }

// allowed returns the images (numbered as in symProduct.image) that put each
// symmetric set's values, ordered by their signatures in st, onto the set in name
// order: the product, over the runs of equal signatures, of their permutations.
func (e *explorer) allowed(st []Value) []int32 {
	p := e.prod
	nv := len(p.vals)
	if len(e.sigSum) < nv {
		e.sigSum, e.order = make([]uint64, nv), make([]int, nv)
	}
	sig := e.sigSum[:nv]
	clear(sig)
	for i, v := range st {
		if e.expanding == nil || v != e.expanding[i] {
			e.sigNodes = p.signatures(v, varPlace(i), e.sigNodes, sig)
			continue
		}
		part := e.sigVar[i*nv : (i+1)*nv]
		if !e.sigOK[i] {
			clear(part)
			e.sigNodes = p.signatures(v, varPlace(i), e.sigNodes, part)
			e.sigOK[i] = true
		}
		for k, h := range part {
			sig[k] += h
		}
	}
	// order[r] is the value put on vals[r]: each set's values by signature (insertion
	// sort, stable, so that equal ones stay in index order and nextPerm starts there).
	order := e.order[:nv]
	e.runs = e.runs[:0]
	for g := 0; g+1 < len(p.start); g++ {
		lo, hi := p.start[g], p.start[g+1]
		for r := lo; r < hi; r++ {
			order[r] = r
		}
		for r := lo + 1; r < hi; r++ {
			for q := r; q > lo && sig[order[q]] < sig[order[q-1]]; q-- {
				order[q], order[q-1] = order[q-1], order[q]
			}
		}
		for r := lo; r < hi; {
			q := r + 1
			for q < hi && sig[order[q]] == sig[order[r]] {
				q++
			}
			if q-r > 1 {
				e.runs = append(e.runs, [2]int{r, q})
			}
			r = q
		}
	}
	e.images = e.images[:0]
	for {
		var c uint64
		for r, i := range order {
			c |= uint64(r) << (4 * i)
		}
		j, ok := p.image[c]
		if !ok {
			panic("tlacheck: symmetry: an allowed permutation is not in the SYMMETRY set")
		}
		e.images = append(e.images, j)
		b := 0
		for b < len(e.runs) && !nextPerm(order[e.runs[b][0]:e.runs[b][1]]) {
			b++
		}
		if b == len(e.runs) {
			return e.images
		}
	}
}

// nextPerm steps s to its next permutation in lexicographic order and reports true,
// or, at the last one, back to the first (ascending) and reports false.
func nextPerm(s []int) bool {
	i := len(s) - 2
	for i >= 0 && s[i] >= s[i+1] {
		i--
	}
	if i < 0 {
		for a, b := 0, len(s)-1; a < b; a, b = a+1, b-1 {
			s[a], s[b] = s[b], s[a]
		}
		return false
	}
	j := len(s) - 1
	for s[j] <= s[i] {
		j--
	}
	s[i], s[j] = s[j], s[i]
	for a, b := i+1, len(s)-1; a < b; a, b = a+1, b-1 {
		s[a], s[b] = s[b], s[a]
	}
	return true
}
