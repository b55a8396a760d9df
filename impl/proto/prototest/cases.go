// Package prototest holds the protocol's test cases: one valid line per method and
// optional field, and every bad input the protocol names, each with the error it must
// give. The tests of proto and protoref and the fuzz seed corpora (fuzz/) all use them,
// so that a case added here is checked everywhere.
package prototest

import (
	"fmt"
	"strings"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// ValidCase is a line and the request it decodes to.
type ValidCase struct {
	Name string
	Line string
	Want proto.Request
}

// BadCase is a line, the one error it must give, the id the error answer carries, and
// the member at fault (DecodeError.Field).
type BadCase struct {
	Name  string
	Line  string
	Want  *proto.Error
	ID    proto.ID
	Field string
}

// Valid holds one valid line per method (and per optional field), with the request
// each must decode to.
var Valid = []ValidCase{
	{"hello", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":"agent-secret"}}`,
		proto.Request{ID: proto.IntID(1), Method: proto.MethodHello, Version: 1, Token: "agent-secret"}},
	{"open", `{"jsonrpc":"2.0","id":2,"method":"open","params":{"run":"r1"}}`,
		proto.Request{ID: proto.IntID(2), Method: proto.MethodOpen, Run: "r1"}},
	{"open timeout", `{"jsonrpc":"2.0","id":"o","method":"open","params":{"run":"r1","timeout_ms":60000}}`,
		proto.Request{ID: proto.StringID("o"), Method: proto.MethodOpen, Run: "r1", TimeoutMs: 60000}},
	{"admit", `{"jsonrpc":"2.0","id":3,"method":"admit","params":{"run":"r1","key":"send-email","epoch":1}}`,
		proto.Request{ID: proto.IntID(3), Method: proto.MethodAdmit, Run: "r1", Key: "send-email", Epoch: 1}},
	{"admit gated wait", `{"jsonrpc":"2.0","id":4,"method":"admit","params":{"run":"r1","key":"k","epoch":2,"gated":true,"wait_ms":30000}}`,
		proto.Request{ID: proto.IntID(4), Method: proto.MethodAdmit, Run: "r1", Key: "k", Epoch: 2, Gated: true, WaitMs: 30000}},
	{"admit gated false", `{"jsonrpc":"2.0","id":4,"method":"admit","params":{"run":"r1","key":"k","epoch":2,"gated":false,"wait_ms":0}}`,
		proto.Request{ID: proto.IntID(4), Method: proto.MethodAdmit, Run: "r1", Key: "k", Epoch: 2}},
	{"decide approve", `{"jsonrpc":"2.0","id":5,"method":"decide","params":{"run":"r1","key":"k","decision":"approve"}}`,
		proto.Request{ID: proto.IntID(5), Method: proto.MethodDecide, Run: "r1", Key: "k", Decision: core.Approve}},
	{"decide reject", `{"jsonrpc":"2.0","id":5,"method":"decide","params":{"run":"r1","key":"k","decision":"reject"}}`,
		proto.Request{ID: proto.IntID(5), Method: proto.MethodDecide, Run: "r1", Key: "k", Decision: core.Reject}},
	{"complete ok", `{"jsonrpc":"2.0","id":6,"method":"complete","params":{"run":"r1","key":"k","outcome":"ok","result":"sent: 250 OK"}}`,
		proto.Request{ID: proto.IntID(6), Method: proto.MethodComplete, Run: "r1", Key: "k", Outcome: core.OutcomeOK, Result: "sent: 250 OK"}},
	{"complete failed", `{"jsonrpc":"2.0","id":6,"method":"complete","params":{"run":"r1","key":"k","outcome":"failed"}}`,
		proto.Request{ID: proto.IntID(6), Method: proto.MethodComplete, Run: "r1", Key: "k", Outcome: core.OutcomeFailed}},
	{"cancel", `{"jsonrpc":"2.0","id":7,"method":"cancel","params":{"run":"r1"}}`,
		proto.Request{ID: proto.IntID(7), Method: proto.MethodCancel, Run: "r1"}},
	{"fence", `{"jsonrpc":"2.0","id":8,"method":"fence","params":{"run":"r1"}}`,
		proto.Request{ID: proto.IntID(8), Method: proto.MethodFence, Run: "r1"}},
	{"status", `{"jsonrpc":"2.0","id":9,"method":"status","params":{"run":"r1"}}`,
		proto.Request{ID: proto.IntID(9), Method: proto.MethodStatus, Run: "r1"}},
	{"status key", `{"jsonrpc":"2.0","id":9,"method":"status","params":{"run":"r1","key":"k"}}`,
		proto.Request{ID: proto.IntID(9), Method: proto.MethodStatus, Run: "r1", Key: "k"}},
	{"members in any order, spaces", ` { "params" : { "epoch" : 1 , "key" : "k" , "run" : "r" } , "method" : "admit" , "id" : -12 , "jsonrpc" : "2.0" } `,
		proto.Request{ID: proto.IntID(-12), Method: proto.MethodAdmit, Run: "r", Key: "k", Epoch: 1}},
	{"escapes decode", `{"jsonrpc":"2.0","id":"\u0069d","method":"st\u0061tus","params":{"r\u0075n":"a\"b\\c\/d\n\u00e9\ud83d\ude00"}}`,
		proto.Request{ID: proto.StringID("id"), Method: proto.MethodStatus, Run: "a\"b\\c/d\né😀"}},
	{"CRLF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fence\",\"params\":{\"run\":\"r\"}}\r\n",
		proto.Request{ID: proto.IntID(1), Method: proto.MethodFence, Run: "r"}},
	{"LF", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fence\",\"params\":{\"run\":\"r\"}}\n",
		proto.Request{ID: proto.IntID(1), Method: proto.MethodFence, Run: "r"}},
	{"id limits", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"cancel","params":{"run":"r"}}`,
		proto.Request{ID: proto.IntID(-proto.IntMax), Method: proto.MethodCancel, Run: "r"}},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"cancel","params":{"run":"r"}}`,
		proto.Request{ID: proto.IntID(0), Method: proto.MethodCancel, Run: "r"}},
	{"id empty string", `{"jsonrpc":"2.0","id":"","method":"cancel","params":{"run":"r"}}`,
		proto.Request{ID: proto.StringID(""), Method: proto.MethodCancel, Run: "r"}},
	{"epoch max", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":9007199254740991}}`,
		proto.Request{ID: proto.IntID(1), Method: proto.MethodAdmit, Run: "r", Key: "k", Epoch: proto.IntMax}},
	{"run at limit", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"` + strings.Repeat("r", proto.RunBytesMax) + `"}}`,
		proto.Request{ID: proto.IntID(1), Method: proto.MethodCancel, Run: core.RunID(strings.Repeat("r", proto.RunBytesMax))}},
	{"empty result", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":""}}`,
		proto.Request{ID: proto.IntID(1), Method: proto.MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK}},
	{"admit described", `{"jsonrpc":"2.0","id":10,"method":"admit","params":{"run":"r1","key":"wire","epoch":1,"gated":true,"description":"Wire 120 EUR to ACME\nref \"7\"","args_digest":"` + Digest + `"}}`,
		proto.Request{ID: proto.IntID(10), Method: proto.MethodAdmit, Run: "r1", Key: "wire", Epoch: 1, Gated: true, Description: "Wire 120 EUR to ACME\nref \"7\"", ArgsDigest: Digest}},
	{"admit description at limit, tab", `{"jsonrpc":"2.0","id":10,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":"` + strings.Repeat("é", 255) + `\t\n"}}`,
		proto.Request{ID: proto.IntID(10), Method: proto.MethodAdmit, Run: "r", Key: "k", Epoch: 1, Description: strings.Repeat("é", 255) + "\t\n"}},
	{"admit empty description", `{"jsonrpc":"2.0","id":10,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":""}}`,
		proto.Request{ID: proto.IntID(10), Method: proto.MethodAdmit, Run: "r", Key: "k", Epoch: 1}},
	{"admit sha512 digest", `{"jsonrpc":"2.0","id":10,"method":"admit","params":{"run":"r","key":"k","epoch":1,"args_digest":"sha512:` + strings.Repeat("ab", 64) + `"}}`,
		proto.Request{ID: proto.IntID(10), Method: proto.MethodAdmit, Run: "r", Key: "k", Epoch: 1, ArgsDigest: "sha512:" + strings.Repeat("ab", 64)}},
	{"decide reason", `{"jsonrpc":"2.0","id":11,"method":"decide","params":{"run":"r1","key":"wire","decision":"reject","reason":"not this vendor"}}`,
		proto.Request{ID: proto.IntID(11), Method: proto.MethodDecide, Run: "r1", Key: "wire", Decision: core.Reject, Reason: "not this vendor"}},
	{"pending", `{"jsonrpc":"2.0","id":12,"method":"pending","params":{}}`,
		proto.Request{ID: proto.IntID(12), Method: proto.MethodPending}},
	{"pending limit cursor", `{"jsonrpc":"2.0","id":12,"method":"pending","params":{"limit":1000,"cursor":"` + Cursor + `"}}`,
		proto.Request{ID: proto.IntID(12), Method: proto.MethodPending, Limit: proto.PendingLimitMax, Cursor: Cursor}},
	{"pending cursor alone", `{"jsonrpc":"2.0","id":12,"method":"pending","params":{"cursor":"` + Cursor + `"}}`,
		proto.Request{ID: proto.IntID(12), Method: proto.MethodPending, Cursor: Cursor}},
	{"watch", `{"jsonrpc":"2.0","id":13,"method":"watch","params":{}}`,
		proto.Request{ID: proto.IntID(13), Method: proto.MethodWatch}},
	{"unwatch", `{"jsonrpc":"2.0","id":"u","method":"unwatch","params":{}}`,
		proto.Request{ID: proto.StringID("u"), Method: proto.MethodUnwatch}},
}

// Digest is a well-formed args digest.
var Digest = "sha256:" + strings.Repeat("0123456789abcdef", 4)

// Cursor is a well-formed cursor: after approval (r1, wire) pending since 1796031595713.
var Cursor = string(proto.AppendCursor(nil, core.InboxPos{Since: 1796031595713, Run: "r1", Key: "wire"}))

// Bad holds the bad inputs of the protocol, each with the one error it must give and
// whether the id can be recovered for the answer.
var Bad = []BadCase{
	{"empty", ``, proto.ErrParse, proto.ID{}, ""},
	{"garbage", `hello gate`, proto.ErrParse, proto.ID{}, ""},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}`, proto.ErrParse, proto.ID{}, ""},
	{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}} x`, proto.ErrParse, proto.ID{}, ""},
	{"two objects", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}}{}`, proto.ErrParse, proto.ID{}, ""},
	{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\x"}}`, proto.ErrParse, proto.ID{}, ""},
	{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\ud800"}}`, proto.ErrParse, proto.ID{}, ""},
	{"lone low surrogate", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"\udc00x"}}`, proto.ErrParse, proto.ID{}, ""},
	{"control char in string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"a\tb\"}}", proto.ErrParse, proto.ID{}, ""},
	{"single quotes", `{'jsonrpc':'2.0'}`, proto.ErrParse, proto.ID{}, ""},
	{"leading zero", `{"jsonrpc":"2.0","id":01,"method":"cancel","params":{"run":"r"}}`, proto.ErrParse, proto.ID{}, ""},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r",}}`, proto.ErrParse, proto.ID{}, ""},
	{"invalid utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xff\"}}", proto.ErrInvalidUTF8, proto.ID{}, ""},
	{"utf8 surrogate bytes", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xed\xa0\x80\"}}", proto.ErrInvalidUTF8, proto.ID{}, ""},
	{"overlong utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"\xc0\xaf\"}}", proto.ErrInvalidUTF8, proto.ID{}, ""},
	{"line too long", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":"` + strings.Repeat("x", proto.LineBytesMax) + `"}}`, proto.ErrLineTooLong, proto.ID{}, ""},
	{"duplicate top-level key", `{"jsonrpc":"2.0","id":1,"id":2,"method":"cancel","params":{"run":"r"}}`, proto.ErrDuplicateKey, proto.ID{}, ""},
	{"duplicate param", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","run":"s"}}`, proto.ErrDuplicateKey, proto.IntID(1), ""},
	{"duplicate by escape", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","r\u0075n":"s"}}`, proto.ErrDuplicateKey, proto.IntID(1), ""},
	{"duplicate nested", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":{"a":1,"a":2}}}`, proto.ErrDuplicateKey, proto.IntID(1), ""},
	{"duplicate after an array", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","a":[1],"a":2}}`, proto.ErrDuplicateKey, proto.IntID(1), ""},
	{"a member after an array", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","x":[1],"y":2}}`, proto.ErrUnknownField, proto.IntID(1), "params.x"},
	{"duplicate beats syntax? no: syntax first", `{"jsonrpc":"2.0","id":1,"id":1,"method":"cancel","params":{"run":"r"}`, proto.ErrParse, proto.ID{}, ""},
	{"array (batch)", `[{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}}]`, proto.ErrInvalidRequest, proto.ID{}, ""},
	{"string", `"admit"`, proto.ErrInvalidRequest, proto.ID{}, ""},
	{"missing id", `{"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"float id", `{"jsonrpc":"2.0","id":1.0,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"huge id", `{"jsonrpc":"2.0","id":9007199254740992,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"long string id", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", proto.IDBytesMax+1) + `","method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.ID{}, "id"},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"},"extra":1}`, proto.ErrInvalidRequest, proto.IntID(1), "extra"},
	{"missing jsonrpc", `{"id":1,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.IntID(1), "jsonrpc"},
	{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.IntID(1), "jsonrpc"},
	{"jsonrpc number", `{"jsonrpc":2.0,"id":1,"method":"cancel","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.IntID(1), "jsonrpc"},
	{"missing method", `{"jsonrpc":"2.0","id":"a","params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.StringID("a"), "method"},
	{"method number", `{"jsonrpc":"2.0","id":1,"method":3,"params":{"run":"r"}}`, proto.ErrInvalidRequest, proto.IntID(1), "method"},
	{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"launch","params":{"run":"r"}}`, proto.ErrUnknownMethod, proto.IntID(1), "method"},
	{"method wrong case", `{"jsonrpc":"2.0","id":1,"method":"Admit","params":{"run":"r"}}`, proto.ErrUnknownMethod, proto.IntID(1), "method"},
	{"missing params", `{"jsonrpc":"2.0","id":1,"method":"cancel"}`, proto.ErrMissingField, proto.IntID(1), "params"},
	{"params array", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":["r"]}`, proto.ErrWrongType, proto.IntID(1), "params"},
	{"params null", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":null}`, proto.ErrWrongType, proto.IntID(1), "params"},
	{"unknown field", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","force":true}}`, proto.ErrUnknownField, proto.IntID(1), "params.force"},
	{"field of another method", `{"jsonrpc":"2.0","id":1,"method":"open","params":{"run":"r","epoch":1}}`, proto.ErrUnknownField, proto.IntID(1), "params.epoch"},
	{"field wrong case", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"Run":"r"}}`, proto.ErrUnknownField, proto.IntID(1), "params.Run"},
	{"string for integer", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":"1"}}`, proto.ErrWrongType, proto.IntID(1), "params.epoch"},
	{"float epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.0}}`, proto.ErrWrongType, proto.IntID(1), "params.epoch"},
	{"exponent epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e0}}`, proto.ErrWrongType, proto.IntID(1), "params.epoch"},
	{"null epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":null}}`, proto.ErrWrongType, proto.IntID(1), "params.epoch"},
	{"number for string", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":7}}`, proto.ErrWrongType, proto.IntID(1), "params.run"},
	{"string for bool", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":"true"}}`, proto.ErrWrongType, proto.IntID(1), "params.gated"},
	{"number for bool", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":1}}`, proto.ErrWrongType, proto.IntID(1), "params.gated"},
	{"number for decision", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":1}}`, proto.ErrWrongType, proto.IntID(1), "params.decision"},
	{"epoch zero", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":0}}`, proto.ErrOutOfRange, proto.IntID(1), "params.epoch"},
	{"epoch negative", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":-1}}`, proto.ErrOutOfRange, proto.IntID(1), "params.epoch"},
	{"epoch huge", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":123456789012345678901234567890}}`, proto.ErrOutOfRange, proto.IntID(1), "params.epoch"},
	{"wait too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"wait_ms":300001}}`, proto.ErrOutOfRange, proto.IntID(1), "params.wait_ms"},
	{"wait negative", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"wait_ms":-1}}`, proto.ErrOutOfRange, proto.IntID(1), "params.wait_ms"},
	{"timeout zero", `{"jsonrpc":"2.0","id":1,"method":"open","params":{"run":"r","timeout_ms":0}}`, proto.ErrOutOfRange, proto.IntID(1), "params.timeout_ms"},
	{"version zero", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":0,"token":"t"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.version"},
	{"empty run", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":""}}`, proto.ErrOutOfRange, proto.IntID(1), "params.run"},
	{"empty key", `{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"r","key":""}}`, proto.ErrOutOfRange, proto.IntID(1), "params.key"},
	{"empty token", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":""}}`, proto.ErrOutOfRange, proto.IntID(1), "params.token"},
	{"run too long", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"` + strings.Repeat("r", proto.RunBytesMax+1) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.run"},
	{"key too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"` + strings.Repeat("k", proto.KeyBytesMax+1) + `","epoch":1}}`, proto.ErrOutOfRange, proto.IntID(1), "params.key"},
	{"token too long", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"version":1,"token":"` + strings.Repeat("t", proto.TokenBytesMax+1) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.token"},
	{"result too long", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":"` + strings.Repeat("x", proto.ResultBytesMax+1) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.result"},
	{"unknown decision", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":"maybe"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.decision"},
	{"unknown outcome", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"OK"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.outcome"},
	{"missing epoch", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k"}}`, proto.ErrMissingField, proto.IntID(1), "params.epoch"},
	{"missing run", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{}}`, proto.ErrMissingField, proto.IntID(1), "params.run"},
	{"missing token", `{"jsonrpc":"2.0","id":"h","method":"hello","params":{"version":1}}`, proto.ErrMissingField, proto.StringID("h"), "params.token"},
	{"first faulty member wins", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"epoch":"x","run":5}}`, proto.ErrWrongType, proto.IntID(1), "params.epoch"},
	{"fault beats missing", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"wait_ms":-5}}`, proto.ErrOutOfRange, proto.IntID(1), "params.wait_ms"},
	{"id recovered after params", `{"params":{"run":5},"method":"cancel","jsonrpc":"2.0","id":"late"}`, proto.ErrWrongType, proto.StringID("late"), "params.run"},
	{"nesting at the limit", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":` + strings.Repeat("[", proto.DepthMax-2) + strings.Repeat("]", proto.DepthMax-2) + `}}`, proto.ErrWrongType, proto.IntID(1), "params.run"},
	{"nesting over the limit", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":` + strings.Repeat("[", proto.DepthMax-1) + strings.Repeat("]", proto.DepthMax-1) + `}}`, proto.ErrParse, proto.ID{}, ""},
	{"deep nesting", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}`, proto.ErrParse, proto.ID{}, ""},
	{"long unknown name cut", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","` + strings.Repeat("é", 40) + `":1}}`, proto.ErrUnknownField, proto.IntID(1), "params." + strings.Repeat("é", 32) + "..."},
	{"many keys, late duplicate", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r",` + ManyKeys(40) + `,"k7":0}}`, proto.ErrDuplicateKey, proto.IntID(1), ""},
	{"many keys", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r",` + ManyKeys(40) + `}}`, proto.ErrUnknownField, proto.IntID(1), "params.k0"},
	{"description too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":"` + strings.Repeat("d", proto.DescriptionBytesMax+1) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.description"},
	{"description with ESC", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":true,"description":"\u001b[2Jcleared"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.description"},
	{"description with CR", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":"a\rb"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.description"},
	{"description with a C1 control", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":"a\u009bb"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.description"},
	{"description number", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"description":5}}`, proto.ErrWrongType, proto.IntID(1), "params.description"},
	{"digest upper case", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"args_digest":"` + strings.ToUpper(Digest) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.args_digest"},
	{"digest short", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"args_digest":"sha256:abc"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.args_digest"},
	{"digest empty", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"args_digest":""}}`, proto.ErrOutOfRange, proto.IntID(1), "params.args_digest"},
	{"digest too long", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"args_digest":"sha512:` + strings.Repeat("a", 129) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.args_digest"},
	{"reason too long", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":"approve","reason":"` + strings.Repeat("y", proto.ReasonBytesMax+1) + `"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.reason"},
	{"reason with NUL", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":"approve","reason":"ok\u0000"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.reason"},
	{"description on a decide", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k","decision":"approve","description":"x"}}`, proto.ErrUnknownField, proto.IntID(1), "params.description"},
	{"reason on an admit", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"reason":"x"}}`, proto.ErrUnknownField, proto.IntID(1), "params.reason"},
	{"pending limit zero", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"limit":0}}`, proto.ErrOutOfRange, proto.IntID(1), "params.limit"},
	{"pending limit over", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"limit":1001}}`, proto.ErrOutOfRange, proto.IntID(1), "params.limit"},
	{"pending limit string", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"limit":"10"}}`, proto.ErrWrongType, proto.IntID(1), "params.limit"},
	{"pending cursor garbage", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"cursor":"not a cursor"}}`, proto.ErrOutOfRange, proto.IntID(1), "params.cursor"},
	{"pending cursor padded", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"cursor":"` + Cursor + `=="}}`, proto.ErrOutOfRange, proto.IntID(1), "params.cursor"},
	{"pending cursor empty", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"cursor":""}}`, proto.ErrOutOfRange, proto.IntID(1), "params.cursor"},
	{"pending run", `{"jsonrpc":"2.0","id":1,"method":"pending","params":{"run":"r"}}`, proto.ErrUnknownField, proto.IntID(1), "params.run"},
	{"pending without params", `{"jsonrpc":"2.0","id":1,"method":"pending"}`, proto.ErrMissingField, proto.IntID(1), "params"},
	{"watch run", `{"jsonrpc":"2.0","id":1,"method":"watch","params":{"run":"r"}}`, proto.ErrUnknownField, proto.IntID(1), "params.run"},
	{"watch limit", `{"jsonrpc":"2.0","id":1,"method":"watch","params":{"limit":5}}`, proto.ErrUnknownField, proto.IntID(1), "params.limit"},
	{"watch without params", `{"jsonrpc":"2.0","id":1,"method":"watch"}`, proto.ErrMissingField, proto.IntID(1), "params"},
	{"unwatch key", `{"jsonrpc":"2.0","id":1,"method":"unwatch","params":{"key":"k"}}`, proto.ErrUnknownField, proto.IntID(1), "params.key"},
	{"watch wrong case", `{"jsonrpc":"2.0","id":1,"method":"Watch","params":{}}`, proto.ErrUnknownMethod, proto.IntID(1), "method"},
}

// ManyKeys returns n members "k0":0,"k1":1,... for an object with many keys.
func ManyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\"k%d\":%d", i, i)
	}
	return b.String()
}
