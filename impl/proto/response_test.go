package proto_test

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
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

func TestRoundTripResults(t *testing.T) {
	results := []Result{
		&HelloResult{Version: 1, Role: RoleApprover, Server: "soundgate 0.1.0"},
		&OpenResult{Run: "r", Status: core.RunActive, Epoch: 1, DeadlineMs: 1767225600000, Created: true},
		&OpenResult{Run: "r", Status: core.RunCancelled, Epoch: 2},
		&AdmitResult{Answer: core.AnswerAdmit, Epoch: 1},
		&AdmitResult{Answer: core.AnswerHeld, Epoch: 3},
		&AdmitResult{Answer: core.AnswerDuplicate, Epoch: 1},
		&AdmitResult{Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: "250 \"OK\"\n", Epoch: 1},
		&AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonCancelled, Epoch: 2},
		&AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonTimedOut, Epoch: 2},
		&AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonStaleEpoch, Epoch: 4},
		&AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRejected, Epoch: 1},
		&DecideResult{Decision: core.Approve},
		&DecideResult{Decision: core.Reject, Repeat: true},
		&CompleteResult{Repeat: true},
		&CompleteResult{},
		&CancelResult{Run: "r", Status: core.RunCancelled, Epoch: 2},
		&FenceResult{Run: "r", Epoch: 3},
		&StatusResult{Run: "r", Status: core.RunActive, Epoch: 1},
		&StatusResult{Run: "r", Status: core.RunTimedOut, Epoch: 2, Pending: []core.Key{"a", "b"}, DeadlineMs: 5,
			Effect: &EffectResult{Key: "a", Status: core.EffectHeld, Epoch: 1, Gated: true, Approved: true}},
		&StatusResult{Run: "r", Status: core.RunActive, Epoch: 1,
			Effect: &EffectResult{Key: "z", Status: core.EffectCompleted, Outcome: core.OutcomeFailed, Result: "x"}},
		&StatusResult{Run: "r", Status: core.RunActive, Epoch: 1, Effect: &EffectResult{Key: "n", Status: core.EffectAbsent}},
	}
	for i, r := range results {
		id := IntID(int64(i))
		line := AppendResult(nil, id, r)
		if !json.Valid(line) {
			t.Fatalf("AppendResult wrote invalid JSON: %s", line)
		}
		resp, err := DecodeResponse(line)
		if err != nil || resp.ID != id || resp.Error != nil {
			t.Fatalf("DecodeResponse(%s) = %+v, %v", line, resp, err)
		}
		back := reflect.New(reflect.TypeOf(r).Elem()).Interface()
		if err := json.Unmarshal(resp.Result, back); err != nil {
			t.Fatalf("Unmarshal %s: %v", resp.Result, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("round trip of %s:\n got %+v\nwant %+v", line, back, r)
		}
	}
}

// TestDecodeResponseRefuses: DecodeResponse reads an answer line only if it is one
// JSON object with jsonrpc "2.0", an id, and exactly one of result and error (doc of
// Response); the reflection-free fast path for the gate's own result lines must not
// accept anything else. Lines cut, followed by garbage, with a misspelt member, or with
// both or neither of result and error are errors.
func TestDecodeResponseRefuses(t *testing.T) {
	bad := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1}x`,
		`{"jsonrpc":"2.0","id":1,"result":{"a":1}}x`,
		`{"jsonrpc":"2.0","id":1,"result":}`,
		`{"jsonrpc":"2.0","id":1,"result":{}`,
		`{"jsonrpc":"2.0","id":1,"rasult":{"a":1}}`,
		`{"jsonrpc":"2.0","id":1,"resul":{"a":1}} `,
		`{"jsonrpc":"2.0","id":1,"result":{"answer":"admit","epoch":1},"error":{"code":-32603,"message":"m","data":{"type":"internal"}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m","data":{"type":"internal"}},"result":{}}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"1.0","id":1,"result":{}}`,
		`{"id":1,"result":{}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		`{"jsonrpc":"2.0","id":-,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	}
	for _, line := range bad {
		if r, err := DecodeResponse([]byte(line)); err == nil {
			t.Errorf("DecodeResponse(%s) = %+v, want an error", line, r)
		}
	}
	good := []struct {
		line   string
		id     ID
		result string
		typ    string
	}{
		{`{"jsonrpc":"2.0","id":-1,"result":{"a":1}}`, IntID(-1), `{"a":1}`, ""},
		{`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n", IntID(0), `{}`, ""},
		{`{"jsonrpc":"2.0","id":"s","result":{"a":[1]}}`, StringID("s"), `{"a":[1]}`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":{"type":"parse_error"}}}`, ID{}, "", "parse_error"},
	}
	for _, g := range good {
		r, err := DecodeResponse([]byte(g.line))
		if err != nil || r.ID != g.id || string(r.Result) != g.result || (g.typ == "") != (r.Error == nil) || (r.Error != nil && r.Error.Type != g.typ) {
			t.Errorf("DecodeResponse(%s) = %+v, %v", g.line, r, err)
		}
	}
}

// TestAnswerPrefixesRefused: a client reads answers from the network, where a line may
// be cut anywhere: every proper prefix of an answer line is refused by DecodeResponse,
// and every proper prefix of a result object by the result type's UnmarshalJSON, with
// an error and without a panic (the fast paths index the bytes by hand).
func TestAnswerPrefixesRefused(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":42,"result":{"answer":"admit","epoch":17}}`,
		`{"jsonrpc":"2.0","id":-7,"result":{"answer":"denied","reason":"rejected","epoch":3}}`,
		`{"jsonrpc":"2.0","id":"c","error":{"code":-32602,"message":"m","data":{"type":"wrong_type","field":"params.epoch"}}}`,
	}
	for _, line := range lines {
		if _, err := DecodeResponse([]byte(line)); err != nil {
			t.Fatalf("DecodeResponse(%s): %v", line, err)
		}
		for n := 0; n < len(line); n++ {
			if r, err := DecodeResponse([]byte(line[:n])); err == nil {
				t.Errorf("DecodeResponse(%s) = %+v, want an error", line[:n], r)
			}
		}
	}
	objects := []string{`{"answer":"admit","epoch":17}`, `{"answer":"held","epoch":0}`, `{"answer":"duplicate","outcome":"ok","result":"x","epoch":1}`}
	for _, obj := range objects {
		var full AdmitResult
		if err := full.UnmarshalJSON([]byte(obj)); err != nil {
			t.Fatalf("UnmarshalJSON(%s): %v", obj, err)
		}
		for n := 0; n < len(obj); n++ {
			var r AdmitResult
			if err := r.UnmarshalJSON([]byte(obj[:n])); err == nil {
				t.Errorf("UnmarshalJSON(%s) = %+v, want an error", obj[:n], r)
			}
		}
	}
}

// TestResultNamesClosed: the result types read back only the names of protocol
// version 1 (docs/protocol.md, "Versioning": no status or answer name changes meaning);
// an unknown name, among them "invalid" (what the core's String gives for a value out
// of range) and a name in the wrong case, is an error, not a zero or a made-up value.
func TestResultNamesClosed(t *testing.T) {
	unknown := []string{"invalid", "bogus", "Active", "ADMIT", " held"}
	type reader interface{ UnmarshalJSON([]byte) error }
	for _, name := range unknown {
		q := strconv.Quote(name)
		cases := []struct {
			what string
			r    reader
			obj  string
		}{
			{"open status", &OpenResult{}, `{"run":"r","status":` + q + `,"epoch":1,"created":true}`},
			{"cancel status", &CancelResult{}, `{"run":"r","status":` + q + `,"epoch":1}`},
			{"status status", &StatusResult{}, `{"run":"r","status":` + q + `,"epoch":1,"pending":[]}`},
			{"effect status", &StatusResult{}, `{"run":"r","status":"active","epoch":1,"pending":[],"effect":{"key":"k","status":` + q + `}}`},
			{"answer", &AdmitResult{}, `{"answer":` + q + `,"epoch":1}`},
			{"reason", &AdmitResult{}, `{"answer":"denied","reason":` + q + `,"epoch":1}`},
			{"outcome", &AdmitResult{}, `{"answer":"duplicate","outcome":` + q + `,"epoch":1}`},
			{"effect outcome", &StatusResult{}, `{"run":"r","status":"active","epoch":1,"pending":[],"effect":{"key":"k","status":"completed","outcome":` + q + `}}`},
			{"decision", &DecideResult{}, `{"decision":` + q + `,"repeat":false}`},
			{"role", &HelloResult{}, `{"version":1,"role":` + q + `,"server":"s"}`},
		}
		for _, c := range cases {
			if err := c.r.UnmarshalJSON([]byte(c.obj)); err == nil {
				t.Errorf("%s %q: read as %+v, want an error", c.what, name, c.r)
			}
		}
	}
	// Every name of version 1 is read, including the zero statuses.
	for i, name := range []string{"none", "active", "cancelled", "timed_out"} {
		var r CancelResult
		if err := r.UnmarshalJSON([]byte(`{"run":"r","status":"` + name + `","epoch":1}`)); err != nil || int(r.Status) != i {
			t.Errorf("run status %q: %+v, %v", name, r, err)
		}
	}
	for i, name := range []string{"absent", "held", "released", "admitted", "completed", "rejected"} {
		var r StatusResult
		obj := `{"run":"r","status":"active","epoch":1,"pending":[],"effect":{"key":"k","status":"` + name + `"}}`
		if err := r.UnmarshalJSON([]byte(obj)); err != nil || r.Effect == nil || int(r.Effect.Status) != i {
			t.Errorf("effect status %q: %+v, %v", name, r, err)
		}
	}
	for i, name := range []string{"admit", "held", "duplicate", "denied"} {
		var r AdmitResult
		if err := r.UnmarshalJSON([]byte(`{"answer":"` + name + `","reason":"rejected","epoch":1}`)); err != nil || int(r.Answer) != i+1 {
			t.Errorf("answer %q: %+v, %v", name, r, err)
		}
	}
}
