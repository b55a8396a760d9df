package conformance

import "github.com/soundgate/soundgate/model"

// sameState reports whether the implementation's abstract state equals the model's,
// history aside. It is the fast path of compare; the text form is built only to
// explain a difference.
func sameState(m, i model.State) bool {
	if len(m.Runs) != len(i.Runs) {
		return false
	}
	for r := range m.Runs {
		a, b := &m.Runs[r], &i.Runs[r]
		if a.Status != b.Status || a.Epoch != b.Epoch || len(a.Effects) != len(b.Effects) {
			return false
		}
		for k := range a.Pending {
			if a.Pending[k] != b.Pending[k] {
				return false
			}
		}
		for k := range a.Effects {
			x, y := &a.Effects[k], &b.Effects[k]
			if x.Status != y.Status || x.Epoch != y.Epoch || x.Gated != y.Gated || x.Approved != y.Approved || x.Outcome != y.Outcome {
				return false
			}
		}
	}
	return true
}

// stateKey is an exact, compact encoding of a model state with its history: two
// states have the same key if and only if they are equal.
func stateKey(buf []byte, s model.State) []byte {
	buf = buf[:0]
	str := func(x string) { buf = append(buf, byte(len(x))); buf = append(buf, x...) }
	bools := func(bs []bool) {
		var v byte
		for i, b := range bs {
			if b {
				v |= 1 << (i % 8)
			}
			if i%8 == 7 || i == len(bs)-1 {
				buf = append(buf, v)
				v = 0
			}
		}
	}
	for _, r := range s.Runs {
		str(string(r.Status))
		buf = append(buf, byte(r.Epoch))
		bools(r.Pending)
		bools(r.Doomed)
		for _, e := range r.Effects {
			str(string(e.Status))
			str(e.Outcome)
			buf = append(buf, byte(e.Epoch), b2(e.Gated)|b2(e.Approved)<<1, byte(e.Admits), byte(len(e.AdmitCtx)))
			for _, c := range e.AdmitCtx {
				str(string(c.Status))
				buf = append(buf, b2(c.Current)|b2(c.Doomed)<<1)
				bools(c.Pending)
			}
		}
	}
	return buf
}

func b2(b bool) byte {
	if b {
		return 1
	}
	return 0
}
