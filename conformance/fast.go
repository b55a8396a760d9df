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
