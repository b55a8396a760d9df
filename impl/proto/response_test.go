package proto_test

import (
	"math"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// roundTrip writes r with AppendJSON and reads it back into back.
func roundTrip(r Result, back interface{ UnmarshalJSON([]byte) error }) error {
	return back.UnmarshalJSON(r.AppendJSON(nil))
}

// Every value of the core's enumerations that the core names is read back from the
// wire as itself, and a value it calls "invalid" is refused: the whole uint8 range of
// each type is tried, so that a value added to impl/core cannot be missing on the
// wire. (A zero value named "" is one the core never sends.)
func TestCoreNamesRoundTrip(t *testing.T) {
	check := func(what, name string, err error, same bool) {
		t.Helper()
		switch {
		case name == "":
		case name == "invalid" && err == nil:
			t.Errorf("%s %q: read back, want an error", what, name)
		case name != "invalid" && (err != nil || !same):
			t.Errorf("%s %q: read back wrong (%v)", what, name, err)
		}
	}
	for i := 0; i <= math.MaxUint8; i++ {
		st := core.RunStatus(i)
		var c CancelResult
		err := roundTrip(&CancelResult{Run: "r", Status: st, Epoch: 1}, &c)
		check("run status", st.String(), err, c.Status == st)

		es := core.EffectStatus(i)
		var s StatusResult
		err = roundTrip(&StatusResult{Run: "r", Status: core.RunActive, Epoch: 1, Effect: &EffectResult{Key: "k", Status: es}}, &s)
		check("effect status", es.String(), err, s.Effect != nil && s.Effect.Status == es)

		an := core.Answer(i)
		var a AdmitResult
		err = roundTrip(&AdmitResult{Answer: an, Epoch: 1}, &a)
		check("answer", an.String(), err, a.Answer == an)

		re := core.Reason(i)
		err = roundTrip(&AdmitResult{Answer: core.AnswerDenied, Reason: re, Epoch: 1}, &a)
		check("reason", re.String(), err, a.Reason == re)

		oc := core.Outcome(i)
		err = roundTrip(&AdmitResult{Answer: core.AnswerDuplicate, Outcome: oc, Epoch: 1}, &a)
		check("outcome", oc.String(), err, a.Outcome == oc)

		de := core.Decision(i)
		var d DecideResult
		err = roundTrip(&DecideResult{Decision: de}, &d)
		check("decision", de.String(), err, d.Decision == de)
	}
}
