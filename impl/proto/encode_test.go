package proto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

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

// TestValidateStatesDecodesRange: Validate and Decode state the same range for an
// oversize result (0..ResultBytesMax, as docs/protocol.md says).
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

// TestValidate: Request.Validate accepts exactly what Decode can return and otherwise
// gives the error Decode would give (docs of Validate): the kind and the field of the
// first fault, Offset -1 (there is no line), the id, and a message that states the
// documented range. For a fault the wire can carry (a value out of its range), the
// encoded request is refused by Decode with the same kind and field.
func TestValidate(t *testing.T) {
	rep := strings.Repeat
	id := IntID(1)
	type tc struct {
		name  string
		req   Request
		err   *Error // nil: valid
		field string
		says  string // the message contains it
		wire  bool   // the fault survives AppendRequest
	}
	cases := []tc{
		{"int id at the bound", Request{ID: IntID(IntMax), Method: MethodCancel, Run: "r"}, nil, "", "", true},
		{"int id at the negative bound", Request{ID: IntID(-IntMax), Method: MethodCancel, Run: "r"}, nil, "", "", true},
		{"int id over the bound", Request{ID: IntID(IntMax + 1), Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", true},
		{"int id under the negative bound", Request{ID: IntID(-IntMax - 1), Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", true},
		{"int id with a string", Request{ID: ID{Kind: IDInt, Int: 1, Str: "x"}, Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"int id 0 with a string", Request{ID: ID{Kind: IDInt, Str: "x"}, Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"string id at 64 bytes", Request{ID: StringID(rep("i", IDBytesMax)), Method: MethodCancel, Run: "r"}, nil, "", "", true},
		{"string id at 65 bytes", Request{ID: StringID(rep("i", IDBytesMax+1)), Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", true},
		{"string id not UTF-8", Request{ID: StringID("\xff"), Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"string id with an int", Request{ID: ID{Kind: IDString, Str: "s", Int: 1}, Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"empty string id with an int", Request{ID: ID{Kind: IDString, Int: 1}, Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"id of an unknown kind", Request{ID: ID{Kind: 3, Int: 1}, Method: MethodCancel, Run: "r"}, ErrInvalidRequest, "id", "", false},
		{"no method", Request{ID: id, Run: "r"}, ErrUnknownMethod, "method", "", false},
		{"method past the last", Request{ID: id, Method: MethodUnwatch + 1, Run: "r"}, ErrUnknownMethod, "method", "", false},
		{"method far past the last", Request{ID: id, Method: 200, Run: "r"}, ErrUnknownMethod, "method", "", false},
		{"version at the bound", Request{ID: id, Method: MethodHello, Version: IntMax, Token: "t"}, nil, "", "", true},
		{"version negative", Request{ID: id, Method: MethodHello, Version: -1, Token: "t"}, ErrOutOfRange, "params.version", "must be in 1..9007199254740991", true},
		{"version over the bound", Request{ID: id, Method: MethodHello, Version: IntMax + 1, Token: "t"}, ErrOutOfRange, "params.version", "must be in 1..9007199254740991", true},
		{"token of 1 byte", Request{ID: id, Method: MethodHello, Version: 1, Token: "t"}, nil, "", "", true},
		{"token at the bound", Request{ID: id, Method: MethodHello, Version: 1, Token: rep("t", TokenBytesMax)}, nil, "", "", true},
		{"token over the bound", Request{ID: id, Method: MethodHello, Version: 1, Token: rep("t", TokenBytesMax+1)}, ErrOutOfRange, "params.token", "1..512 bytes", true},
		{"token not UTF-8", Request{ID: id, Method: MethodHello, Version: 1, Token: "t\xff"}, ErrOutOfRange, "params.token", "", false},
		{"hello without version", Request{ID: id, Method: MethodHello, Token: "t"}, ErrMissingField, "params.version", "required by hello", false},
		{"hello without token", Request{ID: id, Method: MethodHello, Version: 1}, ErrMissingField, "params.token", "required by hello", false},
		{"run over the bound", Request{ID: id, Method: MethodCancel, Run: core.RunID(rep("r", RunBytesMax+1))}, ErrOutOfRange, "params.run", "1..128 bytes", true},
		{"run of a lone continuation byte", Request{ID: id, Method: MethodCancel, Run: "r\x80"}, ErrOutOfRange, "params.run", "", false},
		{"key with a 2-byte rune", Request{ID: id, Method: MethodStatus, Run: "r", Key: "\u0080"}, nil, "", "", true},
		{"run at the bound", Request{ID: id, Method: MethodFence, Run: core.RunID(rep("r", RunBytesMax))}, nil, "", "", true},
		{"key over the bound", Request{ID: id, Method: MethodStatus, Run: "r", Key: core.Key(rep("k", KeyBytesMax+1))}, ErrOutOfRange, "params.key", "1..256 bytes", true},
		{"key of 1 byte", Request{ID: id, Method: MethodStatus, Run: "r", Key: "k"}, nil, "", "", true},
		{"result of 1 byte", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: "x"}, nil, "", "", true},
		{"result at the bound", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: rep("x", ResultBytesMax)}, nil, "", "", true},
		{"result over the bound", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: rep("x", ResultBytesMax+1)}, ErrOutOfRange, "params.result", "16384 bytes", true},
		{"epoch at the bound", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: IntMax}, nil, "", "", true},
		{"epoch over the bound", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: IntMax + 1}, ErrOutOfRange, "params.epoch", "must be in 1..9007199254740991", true},
		{"wait_ms of 1", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: 1}, nil, "", "", true},
		{"wait_ms at the bound", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: WaitMsMax}, nil, "", "", true},
		{"wait_ms over the bound", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: WaitMsMax + 1}, ErrOutOfRange, "params.wait_ms", "must be in 0..300000", true},
		{"wait_ms negative", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: -1}, ErrOutOfRange, "params.wait_ms", "must be in 0..300000", true},
		{"timeout_ms of 1", Request{ID: id, Method: MethodOpen, Run: "r", TimeoutMs: 1}, nil, "", "", true},
		{"timeout_ms of 2", Request{ID: id, Method: MethodOpen, Run: "r", TimeoutMs: 2}, nil, "", "", true},
		{"timeout_ms at the bound", Request{ID: id, Method: MethodOpen, Run: "r", TimeoutMs: TimeoutMsMax}, nil, "", "", true},
		{"timeout_ms over the bound", Request{ID: id, Method: MethodOpen, Run: "r", TimeoutMs: TimeoutMsMax + 1}, ErrOutOfRange, "params.timeout_ms", "must be in 1..2592000000", true},
		{"timeout_ms negative", Request{ID: id, Method: MethodOpen, Run: "r", TimeoutMs: -1}, ErrOutOfRange, "params.timeout_ms", "must be in 1..2592000000", true},
		{"decision out of range", Request{ID: id, Method: MethodDecide, Run: "r", Key: "k", Decision: 3}, ErrOutOfRange, "params.decision", "", false},
		{"outcome out of range", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k", Outcome: 3}, ErrOutOfRange, "params.outcome", "", false},
		{"complete without outcome", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k"}, ErrMissingField, "params.outcome", "required by complete", false},
		{"decide without decision", Request{ID: id, Method: MethodDecide, Run: "r", Key: "k"}, ErrMissingField, "params.decision", "required by decide", false},
		{"admit without epoch", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k"}, ErrMissingField, "params.epoch", "required by admit", false},
		// A field of another method, reported in the order of the method table.
		{"version on cancel", Request{ID: id, Method: MethodCancel, Run: "r", Version: 1}, ErrUnknownField, "params.version", "not a field of cancel", false},
		{"token on open", Request{ID: id, Method: MethodOpen, Run: "r", Token: "t"}, ErrUnknownField, "params.token", "not a field of open", false},
		{"key on fence", Request{ID: id, Method: MethodFence, Run: "r", Key: "k"}, ErrUnknownField, "params.key", "not a field of fence", false},
		{"epoch on status", Request{ID: id, Method: MethodStatus, Run: "r", Epoch: 1}, ErrUnknownField, "params.epoch", "not a field of status", false},
		{"gated on open", Request{ID: id, Method: MethodOpen, Run: "r", Gated: true}, ErrUnknownField, "params.gated", "not a field of open", false},
		{"wait_ms on open", Request{ID: id, Method: MethodOpen, Run: "r", WaitMs: 5}, ErrUnknownField, "params.wait_ms", "not a field of open", false},
		{"timeout_ms on admit", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, TimeoutMs: 5}, ErrUnknownField, "params.timeout_ms", "not a field of admit", false},
		{"decision on complete", Request{ID: id, Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Decision: core.Approve}, ErrUnknownField, "params.decision", "not a field of complete", false},
		{"outcome on decide", Request{ID: id, Method: MethodDecide, Run: "r", Key: "k", Decision: core.Approve, Outcome: core.OutcomeOK}, ErrUnknownField, "params.outcome", "not a field of decide", false},
		{"result on cancel", Request{ID: id, Method: MethodCancel, Run: "r", Result: "x"}, ErrUnknownField, "params.result", "not a field of cancel", false},
		{"run on hello", Request{ID: id, Method: MethodHello, Version: 1, Token: "t", Run: "r"}, ErrUnknownField, "params.run", "not a field of hello", false},
		{"two foreign fields: the first in table order", Request{ID: id, Method: MethodCancel, Run: "r", Result: "x", Gated: true}, ErrUnknownField, "params.gated", "", false},
		{"foreign field before a missing one", Request{ID: id, Method: MethodAdmit, Run: "r", Key: "k", Gated: true, TimeoutMs: 3}, ErrUnknownField, "params.timeout_ms", "", false},
	}
	for _, c := range cases {
		err := c.req.Validate()
		if c.err == nil {
			if err != nil {
				t.Errorf("%s: Validate = %v, want nil", c.name, err)
			}
			if got, derr := Decode(AppendRequest(nil, &c.req)); derr != nil || got != c.req {
				t.Errorf("%s: decode(encode) = %+v, %v", c.name, got, derr)
			}
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Err != c.err || de.Field != c.field || de.Offset != -1 || de.ID != c.req.ID {
			t.Errorf("%s: Validate = %#v, want %s field %q offset -1 id %v", c.name, err, c.err.Type, c.field, c.req.ID)
			continue
		}
		if !strings.Contains(de.Error(), c.says) {
			t.Errorf("%s: Validate = %q, want it to say %q", c.name, de.Error(), c.says)
		}
		if c.wire {
			_, derr := Decode(AppendRequest(nil, &c.req))
			var we *DecodeError
			if !errors.As(derr, &we) || we.Err != c.err || we.Field != c.field {
				t.Errorf("%s: Validate says %v, Decode of the encoding says %v", c.name, err, derr)
			}
		}
	}
}

// TestAppendStringEveryByte: every string the encoders write is valid JSON on one line
// and reads back as the same string, with each byte of invalid UTF-8 replaced by
// U+FFFD (doc of appendString, via ID.AppendJSON): every ASCII byte alone and inside
// text, runes of every length, and invalid sequences (a lone continuation byte, the
// byte 0x80 itself, a cut rune, an encoded surrogate, bytes that never occur).
func TestAppendStringEveryByte(t *testing.T) {
	var inputs []string
	for c := 0; c < 0x80; c++ {
		inputs = append(inputs, string(rune(c)), "a"+string(rune(c))+"b")
	}
	inputs = append(inputs,
		"\u00e9\u20ac\U0001F600", "\x80", "a\x80b", "\xbf", "\xc3", "a\xc3", "\xe2\x82", "\xed\xa0\x80",
		"\xff\xfe", "\xf4\x90\x80\x80", "\xc0\xaf", "ok\xffok\u00e9", "\u2028\u2029", "\ufffd", "\x7f\x80\x81")
	for _, s := range inputs {
		out := StringID(s).AppendJSON(nil)
		if !json.Valid(out) || !utf8.Valid(out) || bytes.ContainsAny(out, "\n\r") {
			t.Errorf("%q written as %q: not one line of valid JSON", s, out)
			continue
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			want.WriteRune(r) // RuneError for each invalid byte
			i += n
		}
		if back != want.String() {
			t.Errorf("%q written as %s reads back as %q, want %q", s, out, back, want.String())
		}
	}
}
