package proto_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

func TestRoundTripRequests(t *testing.T) {
	reqs := []Request{
		{ID: StringID("tricky \"id\" \\ \u2028 é"), Method: MethodAdmit, Run: "r\x00\x1f", Key: "k\n\t", Epoch: IntMax, Gated: true, WaitMs: WaitMsMax},
		{ID: IntID(-IntMax), Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeFailed, Result: strings.Repeat("é", ResultBytesMax/2)},
		{ID: IntID(0), Method: MethodOpen, Run: core.RunID(strings.Repeat("r", RunBytesMax)), TimeoutMs: TimeoutMsMax},
		{ID: StringID(""), Method: MethodHello, Version: IntMax, Token: strings.Repeat("t", TokenBytesMax)},
	}
	for _, tc := range prototest.Valid {
		reqs = append(reqs, tc.Want)
	}
	for _, req := range reqs {
		if err := req.Validate(); err != nil {
			t.Fatalf("Validate(%+v): %v", req, err)
		}
		line := AppendRequest(nil, &req)
		if len(line) == 0 || line[len(line)-1] != '\n' || strings.Count(string(line), "\n") != 1 {
			t.Fatalf("AppendRequest is not one line: %q", line)
		}
		got, err := Decode(line)
		if err != nil || got != req {
			t.Fatalf("Decode(AppendRequest(x)):\n got %+v, %v\nwant %+v\nline %s", got, err, req, line)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		req  Request
		want *Error
	}{
		{Request{Method: MethodCancel, Run: "r"}, ErrInvalidRequest},                        // null id
		{Request{ID: IntID(IntMax + 1), Method: MethodCancel, Run: "r"}, ErrInvalidRequest}, // id range
		{Request{ID: StringID(strings.Repeat("i", IDBytesMax+1)), Method: MethodCancel, Run: "r"}, ErrInvalidRequest},
		{Request{ID: IntID(1)}, ErrUnknownMethod},
		{Request{ID: IntID(1), Method: MethodCancel}, ErrMissingField},
		{Request{ID: IntID(1), Method: MethodCancel, Run: "r", Key: "k"}, ErrUnknownField},
		{Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k"}, ErrMissingField},
		{Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: IntMax + 1}, ErrOutOfRange},
		{Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: -1}, ErrOutOfRange},
		{Request{ID: IntID(1), Method: MethodCancel, Run: "\xff"}, ErrOutOfRange},
		{Request{ID: IntID(1), Method: MethodDecide, Run: "r", Key: "k", Decision: 9}, ErrOutOfRange},
	}
	for _, tc := range cases {
		if err := tc.req.Validate(); !errors.Is(err, tc.want) {
			t.Errorf("Validate(%+v) = %v, want %v", tc.req, err, tc.want)
		}
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

func TestErrorAnswers(t *testing.T) {
	wrapped := errors.Join(errors.New("context"), core.ErrBadEpoch)
	cases := []struct {
		err  error
		code int
		typ  string
	}{
		{ErrForbidden, CodeForbidden, "forbidden"},
		{core.ErrUnknownRun, -32010, "unknown_run"},
		{wrapped, -32011, "bad_epoch"},
		{errors.New("disk on fire"), CodeInternal, "internal"},
		{&DecodeError{Err: ErrWrongType, ID: IntID(3), Field: "params.epoch", Offset: 9}, CodeInvalidParams, "wrong_type"},
	}
	for _, tc := range cases {
		line := AppendError(nil, StringID("q"), tc.err)
		resp, err := DecodeResponse(line)
		if err != nil || resp.Error == nil || resp.Result != nil || resp.ID != StringID("q") {
			t.Fatalf("DecodeResponse(%s) = %+v, %v", line, resp, err)
		}
		if resp.Error.Code != tc.code || resp.Error.Type != tc.typ {
			t.Fatalf("%v: answered %+v, want code %d type %s", tc.err, resp.Error, tc.code, tc.typ)
		}
		if tc.typ != "internal" && !errors.Is(resp.Error.Err(), tc.err) && !errors.Is(tc.err, resp.Error.Err()) {
			t.Fatalf("%v: the error read back (%v) does not match it", tc.err, resp.Error.Err())
		}
	}
	if line := AppendError(nil, ID{}, ErrParse); !strings.HasPrefix(string(line), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`) {
		t.Fatalf("null id error answer: %s", line)
	}
}

// Every error of the core has a distinct wire code in the documented range, and every
// wire type is distinct: a client can switch on either.
func TestErrorCodesComplete(t *testing.T) {
	codes := map[int]string{}
	types := map[string]bool{}
	for _, e := range core.Errors {
		c, ok := CoreCode(e.Code)
		if !ok {
			t.Errorf("core error %q has no wire code", e.Code)
			continue
		}
		if c > CodeCoreFirst || c < CodeCoreLast {
			t.Errorf("core error %q has code %d outside %d..%d", e.Code, c, CodeCoreFirst, CodeCoreLast)
		}
		if other, dup := codes[c]; dup {
			t.Errorf("code %d given to %q and %q", c, other, e.Code)
		}
		codes[c] = e.Code
		types[e.Code] = true
	}
	for _, e := range append(append([]*Error{}, DecodeErrors...), ServerErrors...) {
		if types[e.Type] {
			t.Errorf("type %q is used twice", e.Type)
		}
		types[e.Type] = true
	}
}

// The wire's size limits are the default core's: a request the wire accepts is never
// refused by the default core for its size, and the other way round.
func TestLimitsMatchCore(t *testing.T) {
	l := core.DefaultLimits()
	if RunBytesMax != l.RunBytesMax || KeyBytesMax != l.KeyBytesMax || ResultBytesMax != l.ResultBytesMax {
		t.Fatalf("proto limits run %d key %d result %d, core defaults run %d key %d result %d",
			RunBytesMax, KeyBytesMax, ResultBytesMax, l.RunBytesMax, l.KeyBytesMax, l.ResultBytesMax)
	}
}

// TestValidateStatesDecodesRange: Validate and Decode give the same range for an
// oversize result (0..ResultBytesMax, as docs/protocol.md says); Validate said 1..
// (found by the mutation review).
func TestValidateStatesDecodesRange(t *testing.T) {
	req := Request{ID: IntID(1), Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK,
		Result: strings.Repeat("x", ResultBytesMax+1)}
	verr := req.Validate()
	_, derr := Decode(AppendRequest(nil, &req))
	want := "0..16384"
	if verr == nil || derr == nil || !strings.Contains(verr.Error(), want) || !strings.Contains(derr.Error(), want) {
		t.Fatalf("an oversize result:\nValidate: %v\nDecode:   %v\nboth should state %s", verr, derr, want)
	}
}
