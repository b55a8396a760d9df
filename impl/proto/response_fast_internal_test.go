package proto

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
)

// TestDecodeResponseFastPath: the reflection-free reading of the gate's own result
// answers takes exactly the lines it should, and gives what the general path gives.
func TestDecodeResponseFastPath(t *testing.T) {
	cases := []struct {
		line string
		fast bool // decodeResultFast accepts it
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"answer":"admit","epoch":1}}`, true},
		{`{"jsonrpc":"2.0","id":-3,"result":{"answer":"held","epoch":2}}` + "\r\n", true},
		{`{"jsonrpc":"2.0","id":0,"result":{}}`, true},
		{`{"jsonrpc":"2.0","id":999999999999999999,"result":{"a":[1,{"b":null}]}}`, true},
		{`{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}`, false}, // 19 digits: general
		{`{"jsonrpc":"2.0","id":01,"result":{}}`, false},                  // not JSON
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":"s","result":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result": {}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{} }`, false},
		{`{"jsonrpc":"2.0","id":1,"result":[]}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":1},"error":{"code":1}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":1}},{"x":{}}`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{"a":}}`, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"m","data":{"type":"bad_request"}}}`, false},
		{`{"id":1,"jsonrpc":"2.0","result":{}}`, false},
		{`{"jsonrpc":"2.0","id":`, false},
		{`{"jsonrpc":"2.0","id":1,"result":`, false},
		{`{"jsonrpc":"2.0","id":1,"result":{}`, false},
	}
	for _, c := range cases {
		line := []byte(c.line)
		fast, ok := decodeResultFast(trimEOL(line))
		if ok != c.fast {
			t.Errorf("%s: fast path taken %v, want %v", c.line, ok, c.fast)
		}
		general, gerr := decodeResponseGeneral(line)
		if ok && (gerr != nil || fast.ID != general.ID || !bytes.Equal(fast.Result, general.Result) || general.Error != nil) {
			t.Errorf("%s: fast %+v, general %+v, %v", c.line, fast, general, gerr)
		}
		got, err := DecodeResponse(line)
		if (err == nil) != (gerr == nil) || (err == nil && (got.ID != general.ID || !bytes.Equal(got.Result, general.Result))) {
			t.Errorf("%s: DecodeResponse %+v, %v; general %+v, %v", c.line, got, err, general, gerr)
		}
	}
	// The result is a copy: the client reuses its line buffer.
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"answer":"admit","epoch":1}}`)
	r, err := DecodeResponse(line)
	if err != nil {
		t.Fatal(err)
	}
	copy(line, bytes.Repeat([]byte("x"), len(line)))
	if !json.Valid(r.Result) {
		t.Fatalf("Result aliases the line: %q", r.Result)
	}
}

// TestAdmitResultFastPath: the same for an admit's result object.
func TestAdmitResultFastPath(t *testing.T) {
	cases := []struct {
		obj  string
		fast bool
		want AdmitResult
	}{
		{`{"answer":"admit","epoch":1}`, true, AdmitResult{Answer: core.AnswerAdmit, Epoch: 1}},
		{`{"answer":"held","epoch":0}`, true, AdmitResult{Answer: core.AnswerHeld}},
		{`{"answer":"duplicate","epoch":9999999999999999999}`, true, AdmitResult{Answer: core.AnswerDuplicate, Epoch: 9999999999999999999}},
		{`{"answer":"duplicate","epoch":18446744073709551615}`, false, AdmitResult{Answer: core.AnswerDuplicate, Epoch: 18446744073709551615}}, // 20 digits: general
		{`{"answer":"duplicate","epoch":18446744073709551616}`, false, AdmitResult{}},                                                          // overflows: the general path refuses
		{`{"answer":"duplicate","epoch":99999999999999999999}`, false, AdmitResult{}},
		{`{"answer":"admit","epoch":01}`, false, AdmitResult{}},
		{`{"answer":"admit","epoch":-1}`, false, AdmitResult{}},
		{`{"answer":"admit","epoch":1 }`, false, AdmitResult{Answer: core.AnswerAdmit, Epoch: 1}},
		{`{"answer":"adm\u0069t","epoch":1}`, false, AdmitResult{Answer: core.AnswerAdmit, Epoch: 1}},
		{`{"answer":"nope","epoch":1}`, false, AdmitResult{}},
		{`{"answer":"denied","reason":"rejected","epoch":1}`, false, AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRejected, Epoch: 1}},
		{`{"answer":"admit","epoch":1,"epoch":2}`, false, AdmitResult{Answer: core.AnswerAdmit, Epoch: 2}},
		{`{"answer":"admit","epoch":1}x`, false, AdmitResult{}},
		{`{"answer":"admit"`, false, AdmitResult{}},
	}
	for _, c := range cases {
		fast, ok := admitResultFast([]byte(c.obj))
		if ok != c.fast {
			t.Errorf("%s: fast path taken %v, want %v", c.obj, ok, c.fast)
		}
		var general AdmitResult
		gerr := general.unmarshalGeneral([]byte(c.obj))
		if ok && (gerr != nil || fast != general) {
			t.Errorf("%s: fast %+v, general %+v, %v", c.obj, fast, general, gerr)
		}
		var got AdmitResult
		err := got.UnmarshalJSON([]byte(c.obj))
		if (err == nil) != (gerr == nil) || got != general {
			t.Errorf("%s: UnmarshalJSON %+v, %v; general %+v, %v", c.obj, got, err, general, gerr)
		}
		if err == nil && got != c.want {
			t.Errorf("%s: %+v, want %+v", c.obj, got, c.want)
		}
	}
}
