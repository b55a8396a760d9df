package tlacheck

import (
	"bytes"
	"encoding/binary"
)

// Symmetry reduction: a state is stored under the least of the encodings of its
// permuted images, over the group the SYMMETRY set generates or, when that group is
// a product of full permutation groups, over the images its signatures allow
// (symsig.go). The encoding used here writes the
// elements of a set (and the pairs of a function) in the byte order of their own
// encodings, so that the image of a value under a permutation is encoded without
// building it. It is a function of the value and injective, like encode.

// symEncoder holds scratch space, one level per nesting depth.
type symEncoder struct {
	levels []symLevel
}

type symLevel struct {
	buf  []byte
	offs []int
	idx  []int
}

func (s *symEncoder) level(d int) *symLevel {
	for len(s.levels) <= d {
		s.levels = append(s.levels, symLevel{})
	}
	return &s.levels[d]
}

// perm maps a model value's id to its image; nil, or an id past its end, is the
// identity (a slice, not a map: this runs for every part of every successor's image).
type perm []*modelV

func permOf(m map[*modelV]*modelV) perm {
	n := int32(0)
	for x := range m {
		n = max(n, x.id+1)
	}
	p := make(perm, n)
	for x, y := range m {
		p[x.id] = y
	}
	return p
}

func (s *symEncoder) encode(buf []byte, v Value, m perm, depth int) []byte {
	switch x := v.(type) {
	case *modelV:
		if int(x.id) < len(m) && m[x.id] != nil {
			x = m[x.id]
		}
		return encode(buf, x)
	case *setV:
		if len(x.elems) == 0 {
			return encode(buf, x)
		}
		buf, l := s.sortedLevel(buf, tagSet, len(x.elems), depth)
		for _, el := range x.elems {
			l.buf = s.encode(l.buf, el, m, depth+1)
			l.offs = append(l.offs, len(l.buf))
		}
		return l.appendSorted(buf)
	case *funcV:
		if len(x.keys) == 0 {
			return encode(buf, x)
		}
		if isTupleKeysFast(x.keys) {
			buf = append(buf, tagTuple)
			buf = binary.AppendUvarint(buf, uint64(len(x.vals)))
			for _, e := range x.vals {
				buf = s.encode(buf, e, m, depth+1)
			}
			return buf
		}
		buf, l := s.sortedLevel(buf, tagFunc, len(x.keys), depth)
		for i, k := range x.keys {
			l.buf = s.encode(l.buf, k, m, depth+1)
			l.buf = s.encode(l.buf, x.vals[i], m, depth+1)
			l.offs = append(l.offs, len(l.buf))
		}
		return l.appendSorted(buf)
	case lazySet:
		return s.encode(buf, x.enum(), m, depth)
	}
	return encode(buf, v)
}

// sortedLevel writes the tag and the count n of a set or function, and returns the
// emptied scratch level of depth, in which its n parts are encoded to be sorted.
func (s *symEncoder) sortedLevel(buf []byte, tag byte, n, depth int) ([]byte, *symLevel) {
	buf = append(buf, tag)
	buf = binary.AppendUvarint(buf, uint64(n))
	l := s.level(depth)
	l.buf = l.buf[:0]
	l.offs = append(l.offs[:0], 0)
	return buf, l
}

// appendSorted appends the parts recorded in l (buf split at offs) to out in byte
// order; insertion sort, as the parts are few.
func (l *symLevel) appendSorted(out []byte) []byte {
	n := len(l.offs) - 1
	l.idx = l.idx[:0]
	for i := 0; i < n; i++ {
		l.idx = append(l.idx, i)
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && bytes.Compare(l.part(l.idx[j]), l.part(l.idx[j-1])) < 0; j-- {
			l.idx[j], l.idx[j-1] = l.idx[j-1], l.idx[j]
		}
	}
	for _, i := range l.idx {
		out = append(out, l.part(i)...)
	}
	return out
}

func (l *symLevel) part(i int) []byte { return l.buf[l.offs[i]:l.offs[i+1]] }
