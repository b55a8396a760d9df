package proto

import (
	"errors"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
)

// validCases are one valid line per method (and per optional field), with the request
// each must decode to.
var validCases = []struct {
	name string
	line string
	want Request
}{
	{"hello", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":"agent-secret"}}`,
		Request{ID: IntID(1), Method: MethodHello, Version: 1, Token: "agent-secret"}},
	{"open", `{"jsonrpc":"2.0","id":2,"method":"open","params":{"run":"r1"}}`,
		Request{ID: IntID(2), Method: MethodOpen, Run: "r1"}},
	{"open timeout", `{"jsonrpc":"2.0","id":"o","method":"open","params":{"run":"r1","timeout_ms":60000}}`,
		Request{ID: StringID("o"), Method: MethodOpen, Run: "r1", TimeoutMs: 60000}},
	{"admit", `{"jsonrpc":"2.0","id":3,"method":"admit","params":{"run":"r1","key":"send-email","epoch":1}}`,
		Request{ID: IntID(3), Method: MethodAdmit, Run: "r1", Key: "send-email", Epoch: 1}},
	{"admit gated wait", `{"jsonrpc":"2.0","id":4,"method":"admit","params":{"run":"r1","key":"k","epoch":2,"gated":true,"wait_ms":30000}}`,
		Request{ID: IntID(4), Method: MethodAdmit, Run: "r1", Key: "k", Epoch: 2, Gated: true, WaitMs: 30000}},
	{"admit gated false", `{"jsonrpc":"2.0","id":4,"method":"admit","params":{"run":"r1","key":"k","epoch":2,"gated":false,"wait_ms":0}}`,
		Request{ID: IntID(4), Method: MethodAdmit, Run: "r1", Key: "k", Epoch: 2}},
	{"decide approve", `{"jsonrpc":"2.0","id":5,"method":"decide","params":{"run":"r1","key":"k","decision":"approve"}}`,
		Request{ID: IntID(5), Method: MethodDecide, Run: "r1", Key: "k", Decision: core.Approve}},
	{"decide reject", `{"jsonrpc":"2.0","id":5,"method":"decide","params":{"run":"r1","key":"k","decision":"reject"}}`,
		Request{ID: IntID(5), Method: MethodDecide, Run: "r1", Key: "k", Decision: core.Reject}},
	{"complete ok", `{"jsonrpc":"2.0","id":6,"method":"complete","params":{"run":"r1","key":"k","outcome":"ok","result":"sent: 250 OK"}}`,
		Request{ID: IntID(6), Method: MethodComplete, Run: "r1", Key: "k", Outcome: core.OutcomeOK, Result: "sent: 250 OK"}},
	{"complete failed", `{"jsonrpc":"2.0","id":6,"method":"complete","params":{"run":"r1","key":"k","outcome":"failed"}}`,
		Request{ID: IntID(6), Method: MethodComplete, Run: "r1", Key: "k", Outcome: core.OutcomeFailed}},
	{"cancel", `{"jsonrpc":"2.0","id":7,"method":"cancel","params":{"run":"r1"}}`,
		Request{ID: IntID(7), Method: MethodCancel, Run: "r1"}},
	{"fence", `{"jsonrpc":"2.0","id":8,"method":"fence","params":{"run":"r1"}}`,
		Request{ID: IntID(8), Method: MethodFence, Run: "r1"}},
	{"status", `{"jsonrpc":"2.0","id":9,"method":"status","params":{"run":"r1"}}`,
		Request{ID: IntID(9), Method: MethodStatus, Run: "r1"}},
	{"status key", `{"jsonrpc":"2.0","id":9,"method":"status","params":{"run":"r1","key":"k"}}`,
		Request{ID: IntID(9), Method: MethodStatus, Run: "r1", Key: "k"}},
	{"members in any order, spaces", ` { "params" : { "epoch" : 1 , "key" : "k" , "run" : "r" } , "method" : "admit" , "id" : -12 , "jsonrpc" : "2.0" } `,
		Request{ID: IntID(-12), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1}},
	{"escapes decode", `{"jsonrpc":"2.0","id":"\u0069d","method":"st\u0061tus","params":{"r\u0075n":"a\"b\\c\/d\n\u00e9\ud83d\ude00"}}`,
		Request{ID: StringID("id"), Method: MethodStatus, Run: "a\"b\\c/d\né😀"}},
	{"CRLF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fence\",\"params\":{\"run\":\"r\"}}\r\n",
		Request{ID: IntID(1), Method: MethodFence, Run: "r"}},
	{"LF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fence\",\"params\":{\"run\":\"r\"}}\n",
		Request{ID: IntID(1), Method: MethodFence, Run: "r"}},
	{"id limits", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"cancel","params":{"run":"r"}}`,
		Request{ID: IntID(-IntMax), Method: MethodCancel, Run: "r"}},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"cancel","params":{"run":"r"}}`,
		Request{ID: IntID(0), Method: MethodCancel, Run: "r"}},
	{"id empty string", `{"jsonrpc":"2.0","id":"","method":"cancel","params":{"run":"r"}}`,
		Request{ID: StringID(""), Method: MethodCancel, Run: "r"}},
	{"epoch max", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":9007199254740991}}`,
		Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: IntMax}},
	{"run at limit", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"` + strings.Repeat("r", RunBytesMax) + `"}}`,
		Request{ID: IntID(1), Method: MethodCancel, Run: core.RunID(strings.Repeat("r", RunBytesMax))}},
	{"empty result", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":""}}`,
		Request{ID: IntID(1), Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK}},
}

// badCases are the bad inputs of the protocol, each with the one error it must give and
// whether the id can be recovered for the answer.
var badCases = []struct {
	name  string
	line  string
	want  *Error
	id    ID
	field string
}{
	{"empty", ``, ErrParse, ID{}, ""},
	{"garbage", `hello gate`, ErrParse, ID{}, ""},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}`, ErrParse, ID{}, ""},
	{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}} x`, ErrParse, ID{}, ""},
	{"two objects", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}}{}`, ErrParse, ID{}, ""},
	{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\x"}}`, ErrParse, ID{}, ""},
	{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\ud800"}}`, ErrParse, ID{}, ""},
	{"lone low surrogate", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\udc00x"}}`, ErrParse, ID{}, ""},
	{"control char in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"a\tb\"}}", ErrParse, ID{}, ""},
	{"single quotes", `{'jsonrpc':'2.0'}`, ErrParse, ID{}, ""},
	{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"cancel","params":{"run":"r"}}`, ErrParse, ID{}, ""},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r",}}`, ErrParse, ID{}, ""},
	{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xff\"}}", ErrInvalidUTF8, ID{}, ""},
	{"utf8 surrogate bytes", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xed\xa0\x80\"}}", ErrInvalidUTF8, ID{}, ""},
	{"overlong utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xc0\xaf\"}}", ErrInvalidUTF8, ID{}, ""},
	{"line too long", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":"` + strings.Repeat("x", LineBytesMax) + `"}}`, ErrLineTooLong, ID{}, ""},
	{"duplicate top-level key", `{"jsonrpc":"2.0","id":1,"id":2,"method":"cancel","params":{"run":"r"}}`, ErrDuplicateKey, ID{}, ""},
	{"duplicate param", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","run":"s"}}`, ErrDuplicateKey, IntID(1), ""},
	{"duplicate by escape", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","r\u0075n":"s"}}`, ErrDuplicateKey, IntID(1), ""},
	{"duplicate nested", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":{"a":1,"a":2}}}`, ErrDuplicateKey, IntID(1), ""},
	{"duplicate beats syntax? no: syntax first", `{"jsonrpc":"2.0","id":1,"id":1,"method":"cancel","params":{"run":"r"}`, ErrParse, ID{}, ""},
	{"array (batch)", `[{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}}]`, ErrInvalidRequest, ID{}, ""},
	{"string", `"admit"`, ErrInvalidRequest, ID{}, ""},
	{"missing id", `{"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"float id", `{"jsonrpc":"2.0","id":1.0,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"huge id", `{"jsonrpc":"2.0","id":9007199254740992,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"long string id", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", IDBytesMax+1) + `","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, ID{}, "id"},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"},"extra":1}`, ErrInvalidRequest, IntID(1), `"extra"`},
	{"missing jsonrpc", `{"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, IntID(1), "jsonrpc"},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, IntID(1), "jsonrpc"},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, IntID(1), "jsonrpc"},
	{"missing method", `{"jsonrpc":"2.0","id":"a","params":{"run":"r"}}`, ErrInvalidRequest, StringID("a"), "method"},
	{"method number", `{"jsonrpc":"2.0","id":1,"method":3,"params":{"run":"r"}}`, ErrInvalidRequest, IntID(1), "method"},
	{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"launch","params":{"run":"r"}}`, ErrUnknownMethod, IntID(1), "method"},
	{"method wrong case", `{"jsonrpc":"2.0","id":1,"method":"Admit","params":{"run":"r"}}`, ErrUnknownMethod, IntID(1), "method"},
	{"missing params", `{"jsonrpc":"2.0","id":1,"method":"cancel"}`, ErrMissingField, IntID(1), "params"},
	{"params array", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":["r"]}`, ErrWrongType, IntID(1), "params"},
	{"params null", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":null}`, ErrWrongType, IntID(1), "params"},
	{"unknown field", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","force":true}}`, ErrUnknownField, IntID(1), `params."force"`},
	{"field of another method", `{"jsonrpc":"2.0","id":1,"method":"open","params":{"run":"r","epoch":1}}`, ErrUnknownField, IntID(1), `params."epoch"`},
	{"field wrong case", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"Run":"r"}}`, ErrUnknownField, IntID(1), `params."Run"`},
	{"string for integer", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":"1"}}`, ErrWrongType, IntID(1), "params.epoch"},
	{"float epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.0}}`, ErrWrongType, IntID(1), "params.epoch"},
	{"exponent epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e0}}`, ErrWrongType, IntID(1), "params.epoch"},
	{"null epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":null}}`, ErrWrongType, IntID(1), "params.epoch"},
	{"number for string", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":7}}`, ErrWrongType, IntID(1), "params.run"},
	{"string for bool", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":"true"}}`, ErrWrongType, IntID(1), "params.gated"},
	{"number for bool", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":1}}`, ErrWrongType, IntID(1), "params.gated"},
	{"number for decision", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":1}}`, ErrWrongType, IntID(1), "params.decision"},
	{"epoch zero", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":0}}`, ErrOutOfRange, IntID(1), "params.epoch"},
	{"epoch negative", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":-1}}`, ErrOutOfRange, IntID(1), "params.epoch"},
	{"epoch huge", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":123456789012345678901234567890}}`, ErrOutOfRange, IntID(1), "params.epoch"},
	{"wait too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"wait_ms":300001}}`, ErrOutOfRange, IntID(1), "params.wait_ms"},
	{"wait negative", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"wait_ms":-1}}`, ErrOutOfRange, IntID(1), "params.wait_ms"},
	{"timeout zero", `{"jsonrpc":"2.0","id":1,"method":"open","params":{"run":"r","timeout_ms":0}}`, ErrOutOfRange, IntID(1), "params.timeout_ms"},
	{"version zero", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":0,"token":"t"}}`, ErrOutOfRange, IntID(1), "params.version"},
	{"empty run", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":""}}`, ErrOutOfRange, IntID(1), "params.run"},
	{"empty key", `{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"r","key":""}}`, ErrOutOfRange, IntID(1), "params.key"},
	{"empty token", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":""}}`, ErrOutOfRange, IntID(1), "params.token"},
	{"run too long", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"` + strings.Repeat("r", RunBytesMax+1) + `"}}`, ErrOutOfRange, IntID(1), "params.run"},
	{"key too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"` + strings.Repeat("k", KeyBytesMax+1) + `","epoch":1}}`, ErrOutOfRange, IntID(1), "params.key"},
	{"token too long", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":"` + strings.Repeat("t", TokenBytesMax+1) + `"}}`, ErrOutOfRange, IntID(1), "params.token"},
	{"result too long", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":"` + strings.Repeat("x", ResultBytesMax+1) + `"}}`, ErrOutOfRange, IntID(1), "params.result"},
	{"unknown decision", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":"maybe"}}`, ErrOutOfRange, IntID(1), "params.decision"},
	{"unknown outcome", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"OK"}}`, ErrOutOfRange, IntID(1), "params.outcome"},
	{"missing epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k"}}`, ErrMissingField, IntID(1), "params.epoch"},
	{"missing run", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{}}`, ErrMissingField, IntID(1), "params.run"},
	{"missing token", `{"jsonrpc":"2.0","id":"h","method":"hello","params":{"version":1}}`, ErrMissingField, StringID("h"), "params.token"},
	{"first faulty member wins", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"epoch":"x","run":5}}`, ErrWrongType, IntID(1), "params.epoch"},
	{"fault beats missing", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"wait_ms":-5}}`, ErrOutOfRange, IntID(1), "params.wait_ms"},
	{"id recovered after params", `{"params":{"run":5},"method":"cancel","jsonrpc":"2.0","id":"late"}`, ErrWrongType, StringID("late"), "params.run"},
	{"deep nesting", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}}`, ErrWrongType, IntID(1), "params.run"},
}

func TestDecodeValid(t *testing.T) {
	var d Decoder
	for _, tc := range validCases {
		t.Run(tc.name, func(t *testing.T) {
			var got Request
			if err := d.Decode([]byte(tc.line), &got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Decode:\n got %+v\nwant %+v", got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("Validate of a decoded request: %v", err)
			}
			again, err := Decode(AppendRequest(nil, &got))
			if err != nil || again != got {
				t.Fatalf("decode(encode(x)) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestDecodeBad(t *testing.T) {
	var d Decoder
	for _, tc := range badCases {
		t.Run(tc.name, func(t *testing.T) {
			var got Request
			err := d.Decode([]byte(tc.line), &got)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decode error = %v, want %v", err, tc.want)
			}
			for _, other := range DecodeErrors {
				if other != tc.want && errors.Is(err, other) {
					t.Fatalf("error %v also matches %v", err, other)
				}
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.ID != tc.id || got.ID != tc.id {
				t.Fatalf("recovered id = %v (request %v), want %v", de.ID, got.ID, tc.id)
			}
			if de.Field != tc.field {
				t.Fatalf("field = %q, want %q", de.Field, tc.field)
			}
			if (got != Request{ID: tc.id}) {
				t.Fatalf("a failed decode left fields set: %+v", got)
			}
			o := ErrorObjectOf(err)
			if o.Code != tc.want.Code || o.Type != tc.want.Type {
				t.Fatalf("error object %+v, want code %d type %s", o, tc.want.Code, tc.want.Type)
			}
		})
	}
}
