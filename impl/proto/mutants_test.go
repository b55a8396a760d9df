package proto_test

// Tests written from the mutation score of impl/proto (docs/verify/mutation.md,
// `make mutation-proto`): each one checks a behaviour that docs/protocol.md or the
// package's documentation requires and that no other test pinned down, and names the
// surviving mutants it kills. A mutant id is stable (file:Func:operator:hash);
// `go run ./cmd/mutate -only ID ./impl/proto/` (with the target's -test and -skip)
// re-runs one.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
)

// exchange is one request line of docs/protocol.md's transcripts and the answer line
// the server gave for it.
type exchange struct {
	at       int // line number in docs/protocol.md
	request  string
	response string
}

// transcript reads every "> request" line of docs/protocol.md that is followed
// directly by a "< answer" line.
func transcript(t *testing.T) []exchange {
	t.Helper()
	f, err := os.Open("../../docs/protocol.md")
	if err != nil {
		t.Fatalf("the protocol's reference is needed: %v", err)
	}
	defer f.Close()
	var out []exchange
	var prev string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "< ") && strings.HasPrefix(prev, "> ") {
			out = append(out, exchange{n, prev[2:], line[2:]})
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTranscriptDecodeErrors: for every line of docs/protocol.md's transcripts that the
// decoder refuses, the error answer is byte for byte the one the document shows: code,
// message (with the field, the detail and the byte offset of the fault), data.type,
// data.field and the id. The document is what client authors read; it was produced by
// a real server, and this keeps the decoder and it from drifting apart.
//
// Kills: the mutants of Decoder.interpret's offsets and details, of DecodeError.Error
// (the " (at byte N)" suffix) and of AppendError that change what the documented
// refusals print.
func TestTranscriptDecodeErrors(t *testing.T) {
	checked := 0
	for _, x := range transcript(t) {
		var d Decoder
		var req Request
		err := d.Decode([]byte(x.request), &req)
		if err == nil {
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("docs/protocol.md:%d: %T is not a *DecodeError", x.at, err)
		}
		got := strings.TrimSuffix(string(AppendError(nil, de.ID, err)), "\n")
		if got != x.response {
			t.Errorf("docs/protocol.md:%d: %s\n answered %s\n document %s", x.at, x.request, got, x.response)
		}
		checked++
	}
	// The transcript shows seven refusals of the decoder (parse error, unknown method,
	// wrong type, unknown field, duplicate key, missing field, missing id).
	if checked < 7 {
		t.Fatalf("only %d decoder refusals found in docs/protocol.md's transcripts, want 7", checked)
	}
}

// TestTranscriptRequestsCanonical: every request the transcripts show that the decoder
// accepts is written by AppendRequest exactly as shown (the document's requests are in
// the encoder's member order), and every result answer read back into its method's
// result type is written by AppendResult exactly as shown. A client author copies these
// lines; the server writes answers with AppendResult.
//
// Kills: AppendRequest's and the result types' AppendJSON mutants that rename, reorder,
// drop or add a member of a documented line.
func TestTranscriptRequestsCanonical(t *testing.T) {
	requests, results := 0, 0
	for _, x := range transcript(t) {
		req, err := Decode([]byte(x.request))
		if err != nil {
			continue
		}
		if got := strings.TrimSuffix(string(AppendRequest(nil, &req)), "\n"); got != x.request {
			t.Errorf("docs/protocol.md:%d: AppendRequest wrote\n %s\nthe document shows\n %s", x.at, got, x.request)
		}
		requests++
		resp, err := DecodeResponse([]byte(x.response))
		if err != nil {
			t.Fatalf("docs/protocol.md:%d: DecodeResponse: %v", x.at, err)
		}
		if resp.Error != nil {
			continue
		}
		r := resultFor(req.Method)
		if err := r.(interface{ UnmarshalJSON([]byte) error }).UnmarshalJSON(resp.Result); err != nil {
			t.Fatalf("docs/protocol.md:%d: %s result: %v", x.at, req.Method, err)
		}
		if got := strings.TrimSuffix(string(AppendResult(nil, resp.ID, r)), "\n"); got != x.response {
			t.Errorf("docs/protocol.md:%d: AppendResult wrote\n %s\nthe document shows\n %s", x.at, got, x.response)
		}
		results++
	}
	if requests < 20 || results < 15 {
		t.Fatalf("only %d requests and %d results found in docs/protocol.md's transcripts", requests, results)
	}
}

func resultFor(m Method) Result {
	switch m {
	case MethodHello:
		return &HelloResult{}
	case MethodOpen:
		return &OpenResult{}
	case MethodAdmit:
		return &AdmitResult{}
	case MethodDecide:
		return &DecideResult{}
	case MethodComplete:
		return &CompleteResult{}
	case MethodCancel:
		return &CancelResult{}
	case MethodFence:
		return &FenceResult{}
	case MethodStatus:
		return &StatusResult{}
	}
	panic("no result type for " + m.String())
}

// decodeError decodes line with a fresh decoder and returns its *DecodeError, failing
// t if the line is accepted.
func decodeError(t *testing.T, line string) *DecodeError {
	t.Helper()
	var d Decoder
	var req Request
	err := d.Decode([]byte(line), &req)
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("Decode(%q) = %v, want a *DecodeError", line, err)
	}
	return de
}

// TestDecodeErrorOffsets: DecodeError.Offset is "the byte offset in the line where the
// fault was found", and the line excludes its LF or CRLF (docs/protocol.md, "Transport
// and framing"): an empty line's fault is at byte 0 whatever its terminator, and an
// invalid UTF-8 sequence is reported where it starts.
//
// Kills: decode.go Decoder.Decode:remove-stmt:6252bb55 (trimEOL not called),
// trimEOL:constant:85d28b9d and d6db5ec9 (a one-byte LF or CR not trimmed),
// invalidUTF8At:early-return:bb8c21fe, constant:3cb27268, boundary:3fc07764 and
// negate-cond:1d5f345f.
func TestDecodeErrorOffsets(t *testing.T) {
	cases := []struct {
		name string
		line string
		want *Error
		at   int
	}{
		{"empty", "", ErrParse, 0},
		{"LF only", "\n", ErrParse, 0},
		{"CRLF only", "\r\n", ErrParse, 0},
		{"CR only", "\r", ErrParse, 0},
		{"spaces then LF", "  \n", ErrParse, 2},
		{"spaces then CRLF", "   \r\n", ErrParse, 3},
		{"invalid first byte", "\xff{}", ErrInvalidUTF8, 0},
		{"invalid after ASCII", `{"a":"` + "\xff" + `"}`, ErrInvalidUTF8, 6},
		{"invalid after a 2-byte rune", "\u00e9\xff", ErrInvalidUTF8, 2},
		{"invalid after a 4-byte rune", "\U0001F600\x80", ErrInvalidUTF8, 4},
		{"overlong at the end", "ab\xc0\xaf", ErrInvalidUTF8, 2},
		{"truncated rune at the end", "abc\xe2\x82", ErrInvalidUTF8, 3},
		{"invalid then LF", "a\xff\n", ErrInvalidUTF8, 1},
		// A missing member has no place in the line: -1 ("or -1").
		{"missing id", `{"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, -1},
		{"missing jsonrpc", `{"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, -1},
		{"missing method", `{"jsonrpc":"2.0","id":1,"params":{"run":"r"}}`, ErrInvalidRequest, -1},
		{"missing params", `{"jsonrpc":"2.0","id":1,"method":"cancel"}`, ErrMissingField, -1},
		{"missing run", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{}}`, ErrMissingField, -1},
	}
	for _, tc := range cases {
		de := decodeError(t, tc.line)
		if de.Err != tc.want || de.Offset != tc.at {
			t.Errorf("%s: Decode(%q) = %v at %d, want %v at %d", tc.name, tc.line, de.Err.Type, de.Offset, tc.want.Type, tc.at)
		}
	}
}

// TestLineLimitExcludesTerminator: the line limit counts the line without its LF or
// CRLF (docs/protocol.md, "Limits": 65,536 bytes, excluding LF / CRLF): a request of
// exactly LineBytesMax bytes is decoded with either terminator, and one byte more is
// line_too_long, reported at the limit.
//
// Kills: decode.go Decoder.Decode:remove-stmt:6252bb55 (the terminator counted).
func TestLineLimitExcludesTerminator(t *testing.T) {
	head := `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":"`
	tail := `"}}`
	// A result may be at most ResultBytesMax bytes: pad the line with spaces after it.
	body := head + strings.Repeat("x", ResultBytesMax) + tail
	exact := body + strings.Repeat(" ", LineBytesMax-len(body))
	if len(exact) != LineBytesMax {
		t.Fatalf("test line is %d bytes", len(exact))
	}
	for _, eol := range []string{"", "\n", "\r\n"} {
		req, err := Decode([]byte(exact + eol))
		if err != nil || req.Result != strings.Repeat("x", ResultBytesMax) || req.Outcome != core.OutcomeOK {
			t.Errorf("a line of exactly LineBytesMax bytes + %q: %v", eol, err)
		}
		de := decodeError(t, exact+" "+eol)
		if de.Err != ErrLineTooLong || de.Offset != LineBytesMax {
			t.Errorf("a line of LineBytesMax+1 bytes + %q: %v at %d, want line_too_long at %d", eol, de.Err.Type, de.Offset, LineBytesMax)
		}
	}
}

// TestDecodeSyntaxEdges: lines that end where the scanner still expects something
// (after "{", "[", a comma, a key, a colon, inside a literal), literals and empty
// containers at the very end of the line or of a top-level member, a key that is not
// a string, and nesting at the depth limit with a scalar or an object innermost. Each
// must give the error docs/protocol.md prescribes (checked against protoref too) and
// never panic: the decoder is the attack surface.
//
// Kills: decode.go Decoder.validate:boundary:a719ba3e, 3202778d, 37b8d045, 9ba29dd5
// (index past the end of the line), boolean:36c53042 and 8506fcb2 (a key not in
// quotes, a missing colon), arith:4227cab6 and boundary:aaa0d7d0 (a literal at the end
// of the line), negate-cond:e7af2f26 (the depth limit applied to a scalar and not to
// an object), remove-call:1a3a3143~2 and ~6 (the end of an empty array, or of a
// non-empty container, as a member's value not recorded), remove-stmt:180f0c04 (the
// keys of a closed object kept: the parent's next member is taken for a duplicate).
func TestDecodeSyntaxEdges(t *testing.T) {
	env := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"cancel","params":` + params + `}`
	}
	nest := func(n int, open, inner, close string) string {
		return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
	}
	cases := []struct {
		name  string
		line  string
		want  *Error // nil: accepted
		field string
	}{
		{"open brace only", `{`, ErrParse, ""},
		{"open bracket only", `[`, ErrParse, ""},
		{"open brace and space", `{ `, ErrParse, ""},
		{"open brackets", `[[`, ErrParse, ""},
		{"member value cut after [", `{"a":[`, ErrParse, ""},
		{"member value cut after {", `{"a":{`, ErrParse, ""},
		{"cut after a comma", `{"a":1,`, ErrParse, ""},
		{"cut after a comma and space", `{"a":1, `, ErrParse, ""},
		{"cut after a key", `{"a"`, ErrParse, ""},
		{"cut after a key and space", `{"a" `, ErrParse, ""},
		{"cut after a colon", `{"a":`, ErrParse, ""},
		{"key without opening quote", `{a":1}`, ErrParse, ""},
		{"semicolon for colon", `{"a";1}`, ErrParse, ""},
		{"equals for colon", env(`1`, `{"run"="r"}`), ErrParse, ""},
		{"null alone", `null`, ErrInvalidRequest, ""},
		{"true alone", `true`, ErrInvalidRequest, ""},
		{"false alone", "false\r\n", ErrInvalidRequest, ""},
		{"number alone", `12`, ErrInvalidRequest, ""},
		{"literal cut at the end", `nul`, ErrParse, ""},
		{"true cut at the end", `tru`, ErrParse, ""},
		{"false cut in a member", `{"a":fals`, ErrParse, ""},
		{"literal misspelt", `{"a":nulL}`, ErrParse, ""},
		{"empty array id", `{"id":[],"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "id"},
		{"empty object id", `{"id":{},"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "id"},
		{"empty array jsonrpc", `{"jsonrpc":[],"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"empty array method", `{"jsonrpc":"2.0","id":1,"method":[],"params":{"run":"r"}}`, ErrInvalidRequest, "method"},
		{"empty array params", env(`1`, `[]`), ErrWrongType, "params"},
		{"empty array params last", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":[ ]}`, ErrWrongType, "params"},
		{"empty object params", env(`1`, `{}`), ErrMissingField, "params.run"},
		{"empty array run", env(`1`, `{"run":[]}`), ErrWrongType, "params.run"},
		{"array id", `{"id":[1],"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "id"},
		{"object id", `{"id":{"a":1},"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "id"},
		{"object jsonrpc", `{"jsonrpc":{"v":"2.0"},"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"array method", `{"jsonrpc":"2.0","id":1,"method":["cancel"],"params":{"run":"r"}}`, ErrInvalidRequest, "method"},
		{"nested names reused by the parent", `{"params":{"run":"r","id":3},"id":1,"jsonrpc":"2.0","method":"cancel"}`, ErrUnknownField, "params.id"},
		{"nested names reused by the parent, many", `{"params":{"run":"r",` + manyKeys(20) + `},"k1":1,"id":1,"jsonrpc":"2.0","method":"cancel"}`, ErrInvalidRequest, "k1"},
		{"tabs between tokens", "{\t\"jsonrpc\"\t:\t\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"r\"}\t}", nil, ""},
		{"CR between tokens", "{\r\"jsonrpc\"\r:\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"r\"}\r}", nil, ""},
		{"LF between tokens", "{\n\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"run\":\"r\"}\n}", nil, ""},
		{"every hex digit in escapes", env(`1`, `{"run":"\u0123\u4567\u89ab\ucdef\u89AB\uCDEF\u00e0\u00F0"}`), nil, ""},
		{"escaped surrogate pair, upper case", env(`1`, `{"run":"\uD83D\uDE00\uDBFF\uDFFF"}`), nil, ""},
		{"escape with g", env(`1`, `{"run":"\u00g0"}`), ErrParse, ""},
		{"escape with G", env(`1`, `{"run":"\u00G0"}`), ErrParse, ""},
		{"escape with a slash", env(`1`, `{"run":"\u00/0"}`), ErrParse, ""},
		{"escape with a colon", env(`1`, `{"run":"\u00:0"}`), ErrParse, ""},
		{"escape with an at sign", env(`1`, `{"run":"\u00@0"}`), ErrParse, ""},
		{"escape with a backquote", env(`1`, "{\"run\":\"\\u00`0\"}"), ErrParse, ""},
		{"escape cut short", env(`1`, `{"run":"\u12"}`), ErrParse, ""},
		{"escape cut at the end of the line", `{"a":"\u12`, ErrParse, ""},
		{"string not closed at the end of the line", `{"a":"abc`, ErrParse, ""},
		{"quote alone", `"`, ErrParse, ""},
		{"key not closed at the end of the line", `{"ab`, ErrParse, ""},
		{"backslash at the end of the line", `{"a":"\`, ErrParse, ""},
		{"escaped quote at the end of the line", `{"a":"\"`, ErrParse, ""},
		{"surrogate pair cut at the end of the line", `{"a":"\ud83d\ude0`, ErrParse, ""},
		{"high surrogate then a backslash at the end", `{"a":"\ud83d\`, ErrParse, ""},
		{"high surrogate then another escape", env(`1`, `{"run":"\ud83d\n"}`), ErrParse, ""},
		{"high surrogate then a high surrogate", env(`1`, `{"run":"\ud83d\ud83d"}`), ErrParse, ""},
		{"high surrogate then a character", env(`1`, `{"run":"\ud83dx"}`), ErrParse, ""},
		{"high surrogate then a non-surrogate escape", env(`1`, `{"run":"\ud83d\u0041"}`), ErrParse, ""},
		{"high surrogate then U+E000", env(`1`, `{"run":"\ud83d\ue000"}`), ErrParse, ""},
		{"highest surrogate pair", env(`1`, `{"run":"\udbff\udfff"}`), nil, ""},
		{"lowest surrogate pair", env(`1`, `{"run":"\ud800\udc00"}`), nil, ""},
		{"low surrogate first, then a low surrogate", env(`1`, `{"run":"\udc00\udc00"}`), ErrParse, ""},
		{"two low surrogates", env(`1`, `{"run":"\udfff\ude00"}`), ErrParse, ""},
		{"an escape just before the closing quote", env(`1`, `{"run":"\"\\\/\b\f\n\r\t"}`), nil, ""},
		{"each escape closing a string", env(`1`, `{"run":["\"","\\","\/","\b","\f","\n","\r","\t","\u0041"]}`), ErrWrongType, "params.run"},
		{"high surrogate then xu and hex", env(`1`, `{"run":"\ud83dxude00"}`), ErrParse, ""},
		{"high surrogate then a backslash and hex", env(`1`, `{"run":"\ud83d\\de00"}`), ErrParse, ""},
		{"every name fully escaped", `{"\u006a\u0073\u006f\u006e\u0072\u0070\u0063":"\u0032\u002e\u0030","\u0069\u0064":1,` +
			`"\u006d\u0065\u0074\u0068\u006f\u0064":"\u0064\u0065\u0063\u0069\u0064\u0065","\u0070\u0061\u0072\u0061\u006d\u0073":` +
			`{"\u0072\u0075\u006e":"r","\u006b\u0065\u0079":"k","\u0064\u0065\u0063\u0069\u0073\u0069\u006f\u006e":"\u0061\u0070\u0070\u0072\u006f\u0076\u0065"}}`, nil, ""},
		{"outcome fully escaped", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","\u006f\u0075\u0074\u0063\u006f\u006d\u0065":"\u0066\u0061\u0069\u006c\u0065\u0064"}}`, nil, ""},
		{"escaped name one byte longer", `{"jsonrpc":"2.0","id":1,"method":"\u0063\u0061\u006e\u0063\u0065\u006c\u0073","params":{"run":"r"}}`, ErrUnknownMethod, "method"},
		{"minus at the end of the line", `{"a":-`, ErrParse, ""},
		{"minus alone", `-`, ErrParse, ""},
		{"minus alone as a value", env(`1`, `{"run":-}`), ErrParse, ""},
		{"minus before a bracket", env(`1`, `{"run":[-]}`), ErrParse, ""},
		{"minus before a letter", env(`1`, `{"run":-a}`), ErrParse, ""},
		{"minus minus", env(`1`, `{"run":--1}`), ErrParse, ""},
		{"minus id", `{"jsonrpc":"2.0","id":-,"method":"cancel","params":{"run":"r"}}`, ErrParse, ""},
		{"number 1.9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.9}}`, ErrWrongType, "params.epoch"},
		{"number 1.09", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.09}}`, ErrWrongType, "params.epoch"},
		{"number 1.0", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.0}}`, ErrWrongType, "params.epoch"},
		{"number 0.5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":0.5}}`, ErrWrongType, "params.epoch"},
		{"number -0.5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":-0.5}}`, ErrWrongType, "params.epoch"},
		{"number 19.99", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":19.99}}`, ErrWrongType, "params.epoch"},
		{"number 1e9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e9}}`, ErrWrongType, "params.epoch"},
		{"number 1E+9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1E+9}}`, ErrWrongType, "params.epoch"},
		{"number 1e-9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e-9}}`, ErrWrongType, "params.epoch"},
		{"number 1.5e9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.5e9}}`, ErrWrongType, "params.epoch"},
		{"number 9e9", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":9e9}}`, ErrWrongType, "params.epoch"},
		{"number 1e09", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e09}}`, ErrWrongType, "params.epoch"},
		{"number 1e19", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e19}}`, ErrWrongType, "params.epoch"},
		{"number 1E99", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1E99}}`, ErrWrongType, "params.epoch"},
		{"number 0e0", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":0e0}}`, ErrWrongType, "params.epoch"},
		{"number -0E-0", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":-0E-0}}`, ErrWrongType, "params.epoch"},
		{"number 1.25E+10", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.25E+10}}`, ErrWrongType, "params.epoch"},
		{"bad number 1.", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.}}`, ErrParse, ""},
		{"bad number 1. at the end of the line", `{"a":1.`, ErrParse, ""},
		{"bad number 1. ", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1. }}`, ErrParse, ""},
		{"bad number 1.  at the end of the line", `{"a":1.`, ErrParse, ""},
		{"bad number 1.,", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.,}}`, ErrParse, ""},
		{"bad number 1., at the end of the line", `{"a":1.`, ErrParse, ""},
		{"bad number 1.e5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.e5}}`, ErrParse, ""},
		{"bad number 1.e5 at the end of the line", `{"a":1.e5`, ErrParse, ""},
		{"bad number 1e", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e}}`, ErrParse, ""},
		{"bad number 1e at the end of the line", `{"a":1e`, ErrParse, ""},
		{"bad number 1e+", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e+}}`, ErrParse, ""},
		{"bad number 1e+ at the end of the line", `{"a":1e+`, ErrParse, ""},
		{"bad number 1e ", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e }}`, ErrParse, ""},
		{"bad number 1e  at the end of the line", `{"a":1e`, ErrParse, ""},
		{"bad number 1e,", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e,}}`, ErrParse, ""},
		{"bad number 1e, at the end of the line", `{"a":1e`, ErrParse, ""},
		{"bad number 1E-", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1E-}}`, ErrParse, ""},
		{"bad number 1E- at the end of the line", `{"a":1E-`, ErrParse, ""},
		{"bad number 01", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":01}}`, ErrParse, ""},
		{"bad number 01 at the end of the line", `{"a":01`, ErrParse, ""},
		{"bad number -01", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":-01}}`, ErrParse, ""},
		{"bad number -01 at the end of the line", `{"a":-01`, ErrParse, ""},
		{"bad number 1.5.5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.5.5}}`, ErrParse, ""},
		{"bad number 1.5.5 at the end of the line", `{"a":1.5.5`, ErrParse, ""},
		{"bad number 1e5e5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e5e5}}`, ErrParse, ""},
		{"bad number 1e5e5 at the end of the line", `{"a":1e5e5`, ErrParse, ""},
		{"bad number .5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":.5}}`, ErrParse, ""},
		{"bad number .5 at the end of the line", `{"a":.5`, ErrParse, ""},
		{"bad number +1", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":+1}}`, ErrParse, ""},
		{"bad number +1 at the end of the line", `{"a":+1`, ErrParse, ""},
		{"bad number 1.]", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1.]}}`, ErrParse, ""},
		{"bad number 1.] at the end of the line", `{"a":1.`, ErrParse, ""},
		{"bad number 1e]", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e]}}`, ErrParse, ""},
		{"bad number 1e] at the end of the line", `{"a":1e`, ErrParse, ""},
		{"bad number 1..5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1..5}}`, ErrParse, ""},
		{"bad number 1..5 at the end of the line", `{"a":1..5`, ErrParse, ""},
		{"bad number 1ee5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1ee5}}`, ErrParse, ""},
		{"bad number 1ee5 at the end of the line", `{"a":1ee5`, ErrParse, ""},
		{"bad number 1e+-5", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1e+-5}}`, ErrParse, ""},
		{"bad number 1e+-5 at the end of the line", `{"a":1e+-5`, ErrParse, ""},
		{"bad number 0x1", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":0x1}}`, ErrParse, ""},
		{"bad number 0x1 at the end of the line", `{"a":0x1`, ErrParse, ""},
		{"method first", `{"method":"cancel","jsonrpc":"2.0","id":1,"params":{"run":"r"}}`, nil, ""},
		{"id first", `{"id":1,"method":"cancel","params":{"run":"r"},"jsonrpc":"2.0"}`, nil, ""},
		{"jsonrpc first, params last", `{"jsonrpc":"2.0","method":"cancel","id":1,"params":{"run":"r"}}`, nil, ""},
		{"params first", `{"params":{"run":"r"},"jsonrpc":"2.0","id":1,"method":"cancel"}`, nil, ""},
		{"hello without version", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{"token":"t"}}`, ErrMissingField, "params.version"},
		{"hello without anything", `{"jsonrpc":"2.0","id":1,"method":"hello","params":{}}`, ErrMissingField, "params.version"},
		{"admit without run", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"key":"k","epoch":1}}`, ErrMissingField, "params.run"},
		{"admit without key", `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"epoch":1,"run":"r"}}`, ErrMissingField, "params.key"},
		{"decide without decision", `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"k"}}`, ErrMissingField, "params.decision"},
		{"complete without outcome", `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","result":"x"}}`, ErrMissingField, "params.outcome"},
		{"two unknown members, first at the start", `{"x":1,"y":2,"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "x"},
		{"two unknown members", `{"jsonrpc":"2.0","x":1,"id":1,"y":2,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "x"},
		{"duplicate spelt with an escape first", env(`1`, `{"r\u0075n":"r","run":"s"}`), ErrDuplicateKey, ""},
		{"duplicate, both escaped", env(`1`, `{"r\u0075n":"r","\u0072un":"s"}`), ErrDuplicateKey, ""},
		{"duplicate past the pairwise keys", env(`1`, `{"run":"r",`+manyKeys(40)+`,"k30":0}`), ErrDuplicateKey, ""},
		{"duplicate of the last of many keys", env(`1`, `{"run":"r",`+manyKeys(40)+`,"k39":0}`), ErrDuplicateKey, ""},
		{"duplicate of the 17th key", env(`1`, `{`+manyKeys(17)+`,"k16":0}`), ErrDuplicateKey, ""},
		{"many distinct escaped keys", env(`1`, `{"run":"r",`+strings.ReplaceAll(manyKeys(40), `"k`, `"\u006b`)+`}`), ErrUnknownField, "params.k0"},
		{"sibling objects with the same names", env(`1`, `{"run":[{"a":1,"b":2},{"a":1,"b":2}]}`), ErrWrongType, "params.run"},
		{"scalar at the depth limit", env(`1`, `{"run":`+nest(DepthMax-2, "[", "1", "]")+`}`), ErrWrongType, "params.run"},
		{"string at the depth limit", env(`1`, `{"run":`+nest(DepthMax-2, "[", `"s"`, "]")+`}`), ErrWrongType, "params.run"},
		{"object over the depth limit", env(`1`, `{"run":`+nest(DepthMax-2, "[", `{"a":1}`, "]")+`}`), ErrParse, ""},
		{"objects to the depth limit", env(`1`, `{"run":`+nest(DepthMax-2, `{"a":`, "1", "}")+`}`), ErrWrongType, "params.run"},
		{"objects over the depth limit", env(`1`, `{"run":`+nest(DepthMax-1, `{"a":`, "1", "}")+`}`), ErrParse, ""},
		{"empty object over the depth limit", env(`1`, `{"run":`+nest(DepthMax-2, "[", "{}", "]")+`}`), ErrParse, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d Decoder
			var got Request
			err := d.Decode([]byte(tc.line), &got)
			ref, rerr := protoref.Decode([]byte(tc.line))
			if tc.want == nil {
				if err != nil || rerr != nil || got != ref {
					t.Fatalf("Decode = %+v, %v; reference %+v, %v", got, err, ref, rerr)
				}
				return
			}
			var de, re *DecodeError
			if !errors.As(err, &de) || de.Err != tc.want || de.Field != tc.field {
				t.Fatalf("Decode(%q) = %v, want %v field %q", tc.line, err, tc.want.Type, tc.field)
			}
			if !errors.As(rerr, &re) || re.Err != de.Err || re.ID != de.ID || re.Field != de.Field {
				t.Fatalf("Decode(%q) = %v; the reference says %v", tc.line, err, rerr)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	return b.String()
}

// TestDuplicateKeyRecoversID: a line refused for a duplicate key still carries its id
// in the answer when the top-level object has exactly one "id" member holding a valid
// id, wherever it stands (first, last, spelt with an escape), and the null id when
// "id" itself is repeated or invalid (docs/protocol.md, "Order of checks": the answer
// carries the id from the envelope's id check on; a duplicate key comes before, so the
// id is given only when it is unambiguous). Checked against protoref too.
//
// Kills: decode.go Decoder.recoverID:boundary:ccc3694a and constant:921b6dce (a
// repeated "id" that is the first member taken for a unique one), boundary:491f6904,
// constant:f56cda01 (an id that is the first member ignored), remove-stmt:52277ad9
// (the string of a string id dropped); parseID:remove-stmt:f862955b,
// constant:9fa5235b, boundary:da055e79 (string ids), boundary:f33bd1f9 and 1e3929d1
// (ids starting with 0 or 9).
func TestDuplicateKeyRecoversID(t *testing.T) {
	const p = `"jsonrpc":"2.0","method":"cancel","params":{"run":"r","run":"s"}`
	cases := []struct {
		name string
		line string
		id   ID
	}{
		{"id first", `{"id":7,` + p + `}`, IntID(7)},
		{"id last", `{` + p + `,"id":"x"}`, StringID("x")},
		{"id escaped", `{"\u0069d":-3,` + p + `}`, IntID(-3)},
		{"string id with escapes", `{"id":"a\nb",` + p + `}`, StringID("a\nb")},
		{"id zero", `{"id":0,` + p + `}`, IntID(0)},
		{"id nine", `{"id":9,` + p + `}`, IntID(9)},
		{"id negative max", `{"id":-9007199254740991,` + p + `}`, IntID(-IntMax)},
		{"string id at the limit", `{"id":"` + strings.Repeat("i", IDBytesMax) + `",` + p + `}`, StringID(strings.Repeat("i", IDBytesMax))},
		{"string id at the limit by escapes", `{"id":"` + strings.Repeat(`\u00e9`, IDBytesMax/2) + `",` + p + `}`, StringID(strings.Repeat("\u00e9", IDBytesMax/2))},
		{"id repeated, first member", `{"id":1,"id":2,` + p + `}`, ID{}},
		{"id repeated, same value", `{"id":1,"id":1,"jsonrpc":"2.0","method":"cancel","params":{"run":"r"}}`, ID{}},
		{"id repeated, not first", `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"},"id":2}`, ID{}},
		{"id repeated by escape", `{"id":1,"\u0069d":2,` + p + `}`, ID{}},
		{"id float", `{"id":1.5,` + p + `}`, ID{}},
		{"id too large", `{"id":9007199254740992,` + p + `}`, ID{}},
		{"id string too long", `{"id":"` + strings.Repeat("i", IDBytesMax+1) + `",` + p + `}`, ID{}},
		{"id null", `{"id":null,` + p + `}`, ID{}},
		{"id object", `{"id":{},` + p + `}`, ID{}},
		{"no id", `{` + p + `}`, ID{}},
		{"array", `[{"id":1,` + p + `}]`, ID{}},
	}
	for _, tc := range cases {
		de := decodeError(t, tc.line)
		if de.Err != ErrDuplicateKey || de.ID != tc.id {
			t.Errorf("%s: %v with id %v, want duplicate_key with id %v", tc.name, de.Err.Type, de.ID, tc.id)
		}
		_, rerr := protoref.Decode([]byte(tc.line))
		var re *DecodeError
		if !errors.As(rerr, &re) || re.Err != ErrDuplicateKey || re.ID != tc.id {
			t.Errorf("%s: the reference says %v", tc.name, rerr)
		}
	}
}

// TestDecodeAtEveryLimit: every limit of docs/protocol.md ("Limits") at its bound is
// accepted and decoded exactly, and one past it (either side) is refused with the
// documented error and field. Lengths are bytes after unescaping, so the string limits
// are also tested with a value written with escapes.
//
// Kills: decode.go Decoder.interpret:boundary:248dd6fb (a string id of exactly 64
// bytes refused) and the bound mutants of interpret's string and integer checks.
func TestDecodeAtEveryLimit(t *testing.T) {
	q := func(s string) string { return `"` + s + `"` }
	line := func(id, method, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `}}`
	}
	rep := strings.Repeat
	cases := []struct {
		name  string
		line  string
		want  Request // when err is nil
		err   *Error
		field string
	}{
		{"string id at 64 bytes", line(q(rep("i", IDBytesMax)), "cancel", `"run":"r"`),
			Request{ID: StringID(rep("i", IDBytesMax)), Method: MethodCancel, Run: "r"}, nil, ""},
		{"string id at 64 bytes by escapes", line(q(rep(`\u00e9`, IDBytesMax/2)), "cancel", `"run":"r"`),
			Request{ID: StringID(rep("\u00e9", IDBytesMax/2)), Method: MethodCancel, Run: "r"}, nil, ""},
		{"string id at 65 bytes", line(q(rep("i", IDBytesMax+1)), "cancel", `"run":"r"`), Request{}, ErrInvalidRequest, "id"},
		{"integer id at 2^53-1", line("9007199254740991", "cancel", `"run":"r"`),
			Request{ID: IntID(IntMax), Method: MethodCancel, Run: "r"}, nil, ""},
		{"integer id at -(2^53-1)", line("-9007199254740991", "cancel", `"run":"r"`),
			Request{ID: IntID(-IntMax), Method: MethodCancel, Run: "r"}, nil, ""},
		{"integer id past -(2^53-1)", line("-9007199254740992", "cancel", `"run":"r"`), Request{}, ErrInvalidRequest, "id"},
		{"token at 512 bytes", line("1", "hello", `"version":1,"token":`+q(rep("t", TokenBytesMax))),
			Request{ID: IntID(1), Method: MethodHello, Version: 1, Token: rep("t", TokenBytesMax)}, nil, ""},
		{"token at 513 bytes", line("1", "hello", `"version":1,"token":`+q(rep("t", TokenBytesMax+1))), Request{}, ErrOutOfRange, "params.token"},
		{"token at 1 byte", line("1", "hello", `"version":1,"token":"t"`),
			Request{ID: IntID(1), Method: MethodHello, Version: 1, Token: "t"}, nil, ""},
		{"version at 2^53-1", line("1", "hello", `"version":9007199254740991,"token":"t"`),
			Request{ID: IntID(1), Method: MethodHello, Version: IntMax, Token: "t"}, nil, ""},
		{"version at 2^53", line("1", "hello", `"version":9007199254740992,"token":"t"`), Request{}, ErrOutOfRange, "params.version"},
		{"version negative", line("1", "hello", `"version":-1,"token":"t"`), Request{}, ErrOutOfRange, "params.version"},
		{"run at 128 bytes by escapes", line("1", "cancel", `"run":`+q(rep(`\u00e9`, RunBytesMax/2))),
			Request{ID: IntID(1), Method: MethodCancel, Run: core.RunID(rep("\u00e9", RunBytesMax/2))}, nil, ""},
		{"run at 129 bytes by escapes", line("1", "cancel", `"run":`+q(rep(`\u00e9`, RunBytesMax/2)+"x")), Request{}, ErrOutOfRange, "params.run"},
		{"run at 1 byte", line("1", "fence", `"run":"r"`), Request{ID: IntID(1), Method: MethodFence, Run: "r"}, nil, ""},
		{"key at 256 bytes", line("1", "status", `"run":"r","key":`+q(rep("k", KeyBytesMax))),
			Request{ID: IntID(1), Method: MethodStatus, Run: "r", Key: core.Key(rep("k", KeyBytesMax))}, nil, ""},
		{"key at 257 bytes", line("1", "status", `"run":"r","key":`+q(rep("k", KeyBytesMax+1))), Request{}, ErrOutOfRange, "params.key"},
		{"key at 1 byte", line("1", "decide", `"run":"r","key":"k","decision":"reject"`),
			Request{ID: IntID(1), Method: MethodDecide, Run: "r", Key: "k", Decision: core.Reject}, nil, ""},
		{"result at 16384 bytes", line("1", "complete", `"run":"r","key":"k","outcome":"ok","result":`+q(rep("x", ResultBytesMax))),
			Request{ID: IntID(1), Method: MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: rep("x", ResultBytesMax)}, nil, ""},
		{"result at 16385 bytes", line("1", "complete", `"run":"r","key":"k","outcome":"failed","result":`+q(rep("x", ResultBytesMax+1))), Request{}, ErrOutOfRange, "params.result"},
		{"epoch at 1", line("1", "admit", `"run":"r","key":"k","epoch":1`),
			Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1}, nil, ""},
		{"epoch at 2^53-1", line("1", "admit", `"run":"r","key":"k","epoch":9007199254740991`),
			Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: IntMax}, nil, ""},
		{"epoch at 2^53", line("1", "admit", `"run":"r","key":"k","epoch":9007199254740992`), Request{}, ErrOutOfRange, "params.epoch"},
		{"wait_ms at 0", line("1", "admit", `"run":"r","key":"k","epoch":1,"wait_ms":0`),
			Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1}, nil, ""},
		{"wait_ms at 1", line("1", "admit", `"run":"r","key":"k","epoch":1,"wait_ms":1`),
			Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: 1}, nil, ""},
		{"wait_ms at 300000", line("1", "admit", `"run":"r","key":"k","epoch":1,"wait_ms":300000`),
			Request{ID: IntID(1), Method: MethodAdmit, Run: "r", Key: "k", Epoch: 1, WaitMs: WaitMsMax}, nil, ""},
		{"wait_ms at 300001", line("1", "admit", `"run":"r","key":"k","epoch":1,"wait_ms":300001`), Request{}, ErrOutOfRange, "params.wait_ms"},
		{"timeout_ms at 1", line("1", "open", `"run":"r","timeout_ms":1`),
			Request{ID: IntID(1), Method: MethodOpen, Run: "r", TimeoutMs: 1}, nil, ""},
		{"timeout_ms at 30 days", line("1", "open", `"run":"r","timeout_ms":2592000000`),
			Request{ID: IntID(1), Method: MethodOpen, Run: "r", TimeoutMs: TimeoutMsMax}, nil, ""},
		{"timeout_ms past 30 days", line("1", "open", `"run":"r","timeout_ms":2592000001`), Request{}, ErrOutOfRange, "params.timeout_ms"},
		{"timeout_ms negative", line("1", "open", `"run":"r","timeout_ms":-1`), Request{}, ErrOutOfRange, "params.timeout_ms"},
	}
	var d Decoder // reused, as a connection reuses it
	for _, tc := range cases {
		var got Request
		err := d.Decode([]byte(tc.line), &got)
		ref, rerr := protoref.Decode([]byte(tc.line))
		if tc.err == nil {
			if err != nil || got != tc.want || rerr != nil || ref != tc.want {
				t.Errorf("%s: Decode = %+v, %v; reference %v; want %+v", tc.name, got, err, rerr, tc.want)
			}
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) || de.Err != tc.err || de.Field != tc.field {
			t.Errorf("%s: Decode = %v, want %v field %q", tc.name, err, tc.err.Type, tc.field)
		}
		var re *DecodeError
		if !errors.As(rerr, &re) || re.Err != tc.err || re.Field != tc.field {
			t.Errorf("%s: the reference says %v", tc.name, rerr)
		}
	}
}

// TestDecoderReuseBounded: a Decoder kept for a whole connection (as its doc asks)
// does not accumulate the strings of earlier requests: decoding a request allocates
// about the size of its own string fields, however many requests came before.
//
// Kills: decode.go Decoder.interpret:remove-stmt:82d156f8 (the scratch buffer never
// reset: each request's one string copies every earlier request's strings too).
func TestDecoderReuseBounded(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"c-9","method":"complete","params":{"run":"run-7f3a","key":"send-email:step-12:4b1d","outcome":"ok","result":"250 2.0.0 OK queued as 4b1d"}}`)
	const n = 2000
	var d Decoder
	var req Request
	for i := 0; i < 10; i++ { // let the buffers reach their size
		if err := d.Decode(line, &req); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if err := d.Decode(line, &req); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// The strings of the line are under 100 bytes; allow 8 times the line per request
	// (other goroutines of the test binary allocate too). An accumulating decoder
	// copies about 100*i bytes at request i: 100 times more on average.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 8*uint64(len(line)) {
		t.Fatalf("a reused Decoder allocated %d bytes per request of %d bytes", per, len(line))
	}
	if req.Result != "250 2.0.0 OK queued as 4b1d" || req.ID != StringID("c-9") || req.Key != "send-email:step-12:4b1d" {
		t.Fatalf("decoded %+v", req)
	}
}

// TestLongNamesCut: an offending member name longer than NameBytesMax bytes is cut to
// at most NameBytesMax bytes on a rune boundary and marked "..." in DecodeError.Field
// (data.field on the wire must stay valid UTF-8); a name of exactly NameBytesMax bytes
// is given whole.
//
// Kills: decode.go truncName:boundary:6f578033 (a name of exactly NameBytesMax bytes
// cut: index out of range), negate-cond:54d68b55, remove-stmt:8cb5559f and
// arith:446068c3 (a cut inside a 3-byte rune).
func TestLongNamesCut(t *testing.T) {
	rep := strings.Repeat
	cases := []struct {
		name  string
		field string
	}{
		{rep("n", NameBytesMax), rep("n", NameBytesMax)},
		{rep("n", NameBytesMax+1), rep("n", NameBytesMax) + "..."},
		{rep("\u20ac", 30), rep("\u20ac", 21) + "..."},             // 3-byte runes: 64 = 21*3 + 1
		{"x" + rep("\u20ac", 30), "x" + rep("\u20ac", 21) + "..."}, // 64 = 1 + 21*3: on a boundary
		{rep("\U0001F600", 20), rep("\U0001F600", 16) + "..."},     // 4-byte runes: 64 = 16*4
		{"xy" + rep("\U0001F600", 20), "xy" + rep("\U0001F600", 15) + "..."},
	}
	for _, tc := range cases {
		for _, where := range []string{"params", "top"} {
			line := `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r","` + tc.name + `":1}}`
			want := "params." + tc.field
			if where == "top" {
				line = `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r"},"` + tc.name + `":1}`
				want = tc.field
			}
			de := decodeError(t, line)
			if de.Field != want || !utf8.ValidString(de.Field) {
				t.Errorf("%s name of %d bytes: field %q, want %q", where, len(tc.name), de.Field, want)
			}
		}
	}
}

// TestErrorDetailsStateLimits: a value refused for its range or length is answered
// with a message that states the documented range in decimal (docs/protocol.md,
// "Limits"), so that a client author can fix the request from the message alone.
//
// Kills: detail.go rangeDetail:constant:98009e81 (the upper bound printed in base 11)
// and the mutants of lengthDetail and of the bounds interpret passes to them.
func TestErrorDetailsStateLimits(t *testing.T) {
	line := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	}
	rep := strings.Repeat
	cases := []struct {
		line, field, says string
	}{
		{line("hello", `"version":0,"token":"t"`), "params.version", "must be in 1..9007199254740991"},
		{line("hello", `"version":1,"token":""`), "params.token", "length must be 1..512 bytes"},
		{line("open", `"run":"r","timeout_ms":0`), "params.timeout_ms", "must be in 1..2592000000"},
		{line("cancel", `"run":""`), "params.run", "length must be 1..128 bytes"},
		{line("status", `"run":"r","key":"`+rep("k", 257)+`"`), "params.key", "length must be 1..256 bytes"},
		{line("admit", `"run":"r","key":"k","epoch":0`), "params.epoch", "must be in 1..9007199254740991"},
		{line("admit", `"run":"r","key":"k","epoch":1,"wait_ms":300001`), "params.wait_ms", "must be in 0..300000"},
		{line("complete", `"run":"r","key":"k","outcome":"ok","result":"`+rep("x", 16385)+`"`), "params.result", "length must be 0..16384 bytes"},
	}
	for _, tc := range cases {
		de := decodeError(t, tc.line)
		if de.Err != ErrOutOfRange || de.Field != tc.field || !strings.Contains(de.Error(), tc.says) {
			t.Errorf("%s: %q, want out_of_range saying %q", tc.field, de.Error(), tc.says)
		}
	}
}

// TestValidate: Request.Validate accepts exactly what Decode can return and otherwise
// gives the error Decode would give (docs of Validate): the kind and the field of the
// first fault, Offset -1 (there is no line), the id, and a message that states the
// documented range. For a fault the wire can carry (a value out of its range), the
// encoded request is refused by Decode with the same kind and field.
//
// Kills: the encode.go Request.Validate mutants: the id, method, version, string,
// epoch, wait_ms and timeout_ms bounds, the set bits of gated, wait_ms and timeout_ms
// (a field of another method not reported), the extra-field loop, Offset -2 and the
// range details.
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
		{"method past the last", Request{ID: id, Method: MethodStatus + 1, Run: "r"}, ErrUnknownMethod, "method", "", false},
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

// TestIDTypeMessage: an id that is neither a number nor a string is refused with a
// message that says what an id may be (docs/protocol.md, "Requests": an integer or a
// string), not only that it is not an integer.
//
// Kills: decode.go Decoder.interpret:boolean:aac1ff75 (every id that is not a string
// taken down the number path, whose message says "id is not an integer").
func TestIDTypeMessage(t *testing.T) {
	for _, v := range []string{`null`, `true`, `false`, `[1]`, `{"a":1}`} {
		de := decodeError(t, `{"jsonrpc":"2.0","id":`+v+`,"method":"cancel","params":{"run":"r"}}`)
		if de.Err != ErrInvalidRequest || de.Field != "id" || !strings.Contains(de.Error(), "must be an integer or a string") {
			t.Errorf("id %s: %q", v, de.Error())
		}
	}
	for _, v := range []string{`1.5`, `-0.0`, `1e3`} {
		de := decodeError(t, `{"jsonrpc":"2.0","id":`+v+`,"method":"cancel","params":{"run":"r"}}`)
		if de.Err != ErrInvalidRequest || de.Field != "id" || !strings.Contains(de.Error(), "not an integer") {
			t.Errorf("id %s: %q", v, de.Error())
		}
	}
}

// TestErrorTableDocumented: docs/protocol.md's error table ("Errors") is the wire's
// contract and within version 1 no code or type changes meaning ("Versioning"). Every
// row's code is the one this package sends for that data.type, every error of this
// package and of the core has a row, and the documented code ranges are the
// package's constants.
//
// Kills: errors.go _:constant:9b586b7a (CodeCoreLast -32040) and the mutants of the
// error codes and of the core's code map.
func TestErrorTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatalf("the protocol's reference is needed: %v", err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Errors\n")
	end := strings.Index(text, "\n## Limits\n")
	if start < 0 || end < start {
		t.Fatal(`docs/protocol.md has no "Errors" section before "Limits"`)
	}
	section := text[start:end]
	row := regexp.MustCompile("(?m)^\\| (-32[0-9]{3}) \\| `([a-z0-9_]+)` \\|")
	documented := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		code, _ := strconv.Atoi(m[1])
		documented[m[2]] = code
	}
	ours := map[string]int{}
	for _, e := range append(append([]*Error{}, DecodeErrors...), ServerErrors...) {
		ours[e.Type] = e.Code
	}
	for _, e := range core.Errors {
		c, ok := CoreCode(e.Code)
		if !ok {
			t.Errorf("core error %q has no wire code", e.Code)
		}
		ours[e.Code] = c
	}
	for typ, code := range ours {
		if dc, ok := documented[typ]; !ok || dc != code {
			t.Errorf("type %q: code %d, docs/protocol.md says %d (documented: %v)", typ, code, dc, ok)
		}
	}
	for typ := range documented {
		if _, ok := ours[typ]; !ok {
			t.Errorf("docs/protocol.md documents type %q, which nothing sends", typ)
		}
	}
	for _, c := range []struct {
		code int
		name string
	}{
		{CodeParseError, "parse_error"}, {CodeInvalidRequest, "invalid_request"},
		{CodeMethodNotFound, "unknown_method"}, {CodeInvalidParams, "wrong_type"},
		{CodeInternal, "internal"}, {CodeUnauthenticated, "unauthenticated"},
		{CodeForbidden, "forbidden"}, {CodeUnavailable, "unavailable"},
		{CodeShuttingDown, "shutting_down"}, {CodeOverloaded, "overloaded"},
		{CodeUnsupportedVersion, "unsupported_version"}, {CodeHelloRequired, "hello_required"},
		{CodeHelloRepeated, "hello_repeated"},
	} {
		if documented[c.name] != c.code {
			t.Errorf("the code of %s is %d, docs/protocol.md says %d", c.name, c.code, documented[c.name])
		}
	}
	rng := regexp.MustCompile(`(-32[0-9]{3})\.\.(-32[0-9]{3}) the gate core's`).FindStringSubmatch(section)
	if rng == nil {
		t.Fatal(`docs/protocol.md does not state the core's code range ("-32010..-32039 the gate core's")`)
	}
	if first, _ := strconv.Atoi(rng[1]); first != CodeCoreFirst {
		t.Errorf("CodeCoreFirst = %d, docs/protocol.md says %d", CodeCoreFirst, first)
	}
	if last, _ := strconv.Atoi(rng[2]); last != CodeCoreLast {
		t.Errorf("CodeCoreLast = %d, docs/protocol.md says %d", CodeCoreLast, last)
	}
	if len(documented) < len(ours) {
		t.Fatalf("only %d rows read from docs/protocol.md's error table", len(documented))
	}
}

// TestErrorIsMatchesType: errors.Is matches a protocol *Error by its data.type, not by
// identity (doc of Error.Is): an error built from an answer of a later version, whose
// type this package does not know, matches another read of the same type, and a copy
// of a sentinel matches the sentinel; different types never match.
//
// Kills: errors.go Error.Is:early-return:ef806587.
func TestErrorIsMatchesType(t *testing.T) {
	later := ErrorObject{Code: -32050, Type: "quota_exceeded", Message: "quota exceeded"}
	a, b := later.Err(), later.Err()
	if !errors.Is(a, b) || !errors.Is(fmt.Errorf("call: %w", a), b) {
		t.Errorf("two reads of an unknown type %q do not match", later.Type)
	}
	if errors.Is(a, ErrInternal) || errors.Is(a, ErrForbidden) {
		t.Errorf("an unknown type matches a sentinel of another type")
	}
	copied := *ErrOverloaded
	if !errors.Is(&copied, ErrOverloaded) || errors.Is(&copied, ErrShuttingDown) {
		t.Errorf("a copy of ErrOverloaded: Is(ErrOverloaded) %v, Is(ErrShuttingDown) %v",
			errors.Is(&copied, ErrOverloaded), errors.Is(&copied, ErrShuttingDown))
	}
	if !errors.Is(&Error{Code: CodeForbidden, Type: "forbidden"}, ErrForbidden) {
		t.Errorf("an *Error of type forbidden does not match ErrForbidden")
	}
	if errors.Is(&Error{Code: CodeForbidden, Type: "forbidden"}, errors.New("forbidden")) {
		t.Errorf("an *Error matches an error that is not an *Error")
	}
}

// TestLimitsDocumented: the wire's limits are the numbers of docs/protocol.md's
// "Limits" table, which client authors build on, and the protocol version is the one
// the page describes. The other tests use the constants on both sides (a line of
// LineBytesMax bytes, a run of RunBytesMax+1), so a constant changed in the code
// alone would go unnoticed by them.
//
// Kills: the limits.go constant mutants (LineBytesMax, IDBytesMax, IntMax, DepthMax,
// TokenBytesMax, RunBytesMax, KeyBytesMax, ResultBytesMax, WaitMsMax, TimeoutMsMax,
// Version).
func TestLimitsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatalf("the protocol's reference is needed: %v", err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Limits\n")
	end := strings.Index(text, "\n## Versioning\n")
	if start < 0 || end < start {
		t.Fatal(`docs/protocol.md has no "Limits" section before "Versioning"`)
	}
	// Each row: | name | value | error |; the numbers of the value cell, in order.
	number := regexp.MustCompile(`[0-9][0-9,]*`)
	rows := map[string][]int64{}
	for _, line := range strings.Split(text[start:end], "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "limit" {
			continue
		}
		var nums []int64
		for _, n := range number.FindAllString(cells[2], -1) {
			v, err := strconv.ParseInt(strings.ReplaceAll(n, ",", ""), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			nums = append(nums, v)
		}
		rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = nums
	}
	want := []struct {
		row  string
		nums []int64 // the numbers of the row's value cell
	}{
		{"line", []int64{LineBytesMax}},
		{"string id", []int64{IDBytesMax}},
		{"integer id, epoch, version", []int64{2, 53, 1}}, // "2^53-1"
		{"nesting of arrays and objects", []int64{DepthMax}},
		{"token", []int64{1, TokenBytesMax}},
		{"run", []int64{1, RunBytesMax}},
		{"key", []int64{1, KeyBytesMax}},
		{"result", []int64{0, ResultBytesMax}},
		{"wait_ms", []int64{0, WaitMsMax, 5}},        // "(5 minutes)"
		{"timeout_ms", []int64{1, TimeoutMsMax, 30}}, // "(30 days)"
	}
	for _, w := range want {
		got, ok := rows[w.row]
		if !ok {
			t.Errorf("docs/protocol.md's limits have no row %q", w.row)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(w.nums) {
			t.Errorf("limit %q: docs/protocol.md says %v, the package %v", w.row, got, w.nums)
		}
	}
	if IntMax != 1<<53-1 {
		t.Errorf("IntMax = %d, docs/protocol.md says 2^53-1", int64(IntMax))
	}
	if WaitMsMax != 5*60*1000 || TimeoutMsMax != 30*24*60*60*1000 {
		t.Errorf("WaitMsMax %d is not 5 minutes or TimeoutMsMax %d is not 30 days", WaitMsMax, int64(TimeoutMsMax))
	}
	page := regexp.MustCompile(`this page is version ([0-9]+)`).FindStringSubmatch(text)
	if page == nil || page[1] != strconv.Itoa(Version) {
		t.Errorf("Version = %d; docs/protocol.md says %q", Version, page)
	}
}

// TestAppendStringEveryByte: every string the encoders write is valid JSON on one line
// and reads back as the same string, with each byte of invalid UTF-8 replaced by
// U+FFFD (doc of appendString, via ID.AppendJSON): every ASCII byte alone and inside
// text, runes of every length, and invalid sequences (a lone continuation byte, the
// byte 0x80 itself, a cut rune, an encoded surrogate, bytes that never occur).
//
// Kills: json.go appendString:boundary:a40f48a2 (0x80 copied raw), slice-write:c32405e0
// (a CR dropped), negate-cond:b6529360 and 44cf50b4 and constant:144de08c (invalid
// bytes copied raw: encoding/json reads them as U+FFFD, so the output itself is
// checked to be valid UTF-8).
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

// recordingReader serves data in reads of at most chunk bytes and records the size of
// the buffer each Read was offered.
type recordingReader struct {
	data   []byte
	chunk  int
	offers []int
}

func (r *recordingReader) Read(p []byte) (int, error) {
	r.offers = append(r.offers, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReaderStartsAt8KiB: "The Reader's memory starts at 8 KiB" (doc of Reader): its
// first read offers the source exactly 8 KiB, and while lines stay short no read
// offers more.
//
// Kills: reader.go _:constant:4bc2cdb9 and f9712c8c (readerBytesInitial 9 KiB, 16 KiB).
func TestReaderStartsAt8KiB(t *testing.T) {
	src := &recordingReader{data: bytes.Repeat([]byte("short line\n"), 5000), chunk: 1000}
	r := NewReader(src)
	lines := 0
	for {
		_, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines++
	}
	if lines != 5000 || len(src.offers) == 0 {
		t.Fatalf("%d lines, %d reads", lines, len(src.offers))
	}
	if src.offers[0] != 8<<10 {
		t.Errorf("the first read offered %d bytes, want 8 KiB", src.offers[0])
	}
	if m := slices.Max(src.offers); m > 8<<10 {
		t.Errorf("a read offered %d bytes while every line is short", m)
	}
}

// failingReader returns data in one read, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReaderDiscardsAsSoonAsTooLong: "A line longer than LineBytesMax is never held in
// memory" (doc of Reader): a pending line without LF is dropped, and reported as
// line_too_long, as soon as it cannot be within the limit whatever comes next: more
// than the limit plus one byte (a CR may still come before its LF). So when the source
// fails after a partial line, a partial line of limit+2 bytes or more was already
// discarded and is reported before the source's error, and a shorter one is dropped
// silently (a broken connection executes no partial line).
//
// Kills: reader.go Reader.ReadLine:constant:94a02c08 (a partial line of limit+2 bytes
// held instead of discarded).
func TestReaderDiscardsAsSoonAsTooLong(t *testing.T) {
	boom := errors.New("boom")
	const limit = 8
	for n := limit - 1; n <= limit+4; n++ {
		r := NewReaderSize(&failingReader{data: bytes.Repeat([]byte("x"), n), err: boom}, limit)
		var got []string
		for i := 0; i < 3; i++ {
			_, err := r.ReadLine()
			if errors.Is(err, ErrLineTooLong) {
				if de := (*DecodeError)(nil); !errors.As(err, &de) || de.Offset != -1 {
					t.Errorf("the Reader's line_too_long has no place in a line, offset -1: %#v", err)
				}
				got = append(got, "too long")
				continue
			}
			got = append(got, err.Error())
			break
		}
		want := "[boom]"
		if n >= limit+2 {
			want = "[too long boom]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("a partial line of %d bytes (limit %d) then an error: %v, want %s", n, limit, got, want)
		}
	}
}

// TestReaderBuffered: Buffered is the number of bytes the Reader holds that ReadLine
// has not returned yet (the server answers at once when it is 0): after each line of a
// stream read in one piece, it is the length of the rest of the stream.
//
// Kills: reader.go Reader.Buffered:arith:b619ce78.
func TestReaderBuffered(t *testing.T) {
	stream := "a\nbb\r\n\nccc\ndddd"
	r := NewReader(strings.NewReader(stream))
	if r.Buffered() != 0 {
		t.Fatalf("Buffered before any read = %d", r.Buffered())
	}
	rest := stream
	for _, want := range []string{"a", "bb", "ccc", "dddd"} {
		line, err := r.ReadLine()
		if err != nil || string(line) != want {
			t.Fatalf("ReadLine = %q, %v; want %q", line, err, want)
		}
		rest = rest[strings.Index(rest, want)+len(want):]
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "\r"), "\n")
		if got := r.Buffered(); got != len(rest) {
			t.Errorf("after %q: Buffered = %d, want %d (%q)", want, got, len(rest), rest)
		}
	}
}

// badCountReader returns a count outside 0..len(p), which an io.Reader must not.
type badCountReader struct{ n func(p []byte) int }

func (r badCountReader) Read(p []byte) (int, error) { return r.n(p), nil }

// TestReaderInvalidCount: a source that returns a negative count or more than it was
// offered is an error of ReadLine (sticky), not a panic or a line made of bytes that
// were never read: the Reader is fed by the network and by tests' fakes alike.
//
// Kills: reader.go Reader.fill:boolean:a47bc969 and the bound mutants of the count
// check.
func TestReaderInvalidCount(t *testing.T) {
	for name, n := range map[string]func([]byte) int{
		"negative":       func([]byte) int { return -1 },
		"one too many":   func(p []byte) int { return len(p) + 1 },
		"far too many":   func(p []byte) int { return 1 << 30 },
		"minimum int":    func([]byte) int { return math.MinInt },
		"negative later": func(p []byte) int { copy(p, "ab"); return -2 },
		"too many later": func() func([]byte) int {
			calls := 0
			return func(p []byte) int {
				calls++
				if calls == 1 {
					return copy(p, "ab") // no LF: the next read appends
				}
				return len(p) + 1
			}
		}(),
	} {
		r := NewReader(badCountReader{n})
		for i := 0; i < 2; i++ {
			line, err := r.ReadLine()
			if err == nil || !strings.Contains(err.Error(), "invalid count") || errors.Is(err, io.EOF) {
				t.Errorf("%s: ReadLine = %q, %v; want the invalid count error", name, line, err)
			}
		}
	}
	// The bounds themselves are valid counts: 0 (then data) and exactly len(p).
	full := 0
	r := NewReader(badCountReader{func(p []byte) int {
		full++
		switch full {
		case 1:
			return 0
		case 2:
			copy(p, bytes.Repeat([]byte("z"), len(p)))
			p[len(p)-1] = '\n'
			return len(p)
		}
		return 0
	}})
	if line, err := r.ReadLine(); err != nil || len(line) != 8<<10-1 {
		t.Errorf("a read of 0 then a read of exactly len(p): %d bytes, %v", len(line), err)
	}
}

// TestDecodeResponseRefuses: DecodeResponse reads an answer line only if it is one
// JSON object with jsonrpc "2.0", an id, and exactly one of result and error (doc of
// Response); the reflection-free fast path for the gate's own result lines must not
// accept anything else. Lines cut, followed by garbage, with a misspelt member, or with
// both or neither of result and error are errors.
//
// Kills: response.go decodeResponseGeneral:boolean:13c17a1a (both or neither accepted),
// decodeResultFast:boolean:c409aff2 (a misspelt "result" member read as the result) and
// d52aaf1a (trailing garbage, a cut result).
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
//
// Kills: response.go admitResultFast:boolean:26d22a52 (a name without its closing
// quote: slice out of range) and boundary:823cf90e (an object cut after the epoch's
// digits: index out of range).
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
//
// Kills: response.go StatusResult.UnmarshalJSON:negate-cond:b3a21cfe,
// runWire.status:negate-cond:c0e83ccb, and _:constant:6ac15647, 12efab62, c5401192,
// 70785a7c (a name table one entry longer: "invalid" read as a value).
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

// TestEnumNames: the zero values and values out of range are "invalid" by name and the
// null id is the only null one; a name that is not a role parses to RoleNone (never to
// a role with rights, should a caller forget ok), as a name that is not a method parses
// to MethodNone.
//
// Kills: types.go ID.IsNull:negate-cond:356439b8, Role.String:boundary:0de94864 and
// boolean:ea07b7df, parseName:constant:cfc6724c.
func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		id   ID
		null bool
	}{{ID{}, true}, {IntID(0), false}, {StringID(""), false}, {IntID(-1), false}} {
		if c.id.IsNull() != c.null {
			t.Errorf("%#v.IsNull() = %v", c.id, !c.null)
		}
	}
	for _, c := range []struct {
		r    Role
		name string
	}{{RoleNone, "invalid"}, {RoleAgent, "agent"}, {RoleApprover, "approver"}, {RoleOperator, "operator"}, {RoleOperator + 1, "invalid"}, {255, "invalid"}} {
		if got := c.r.String(); got != c.name {
			t.Errorf("Role(%d).String() = %q, want %q", c.r, got, c.name)
		}
		if r, ok := ParseRole(c.name); (c.name != "invalid") != ok || (ok && r != c.r) {
			t.Errorf("ParseRole(%q) = %v, %v", c.name, r, ok)
		}
	}
	for _, name := range []string{"", "invalid", "Agent", "root"} {
		if r, ok := ParseRole(name); ok || r != RoleNone {
			t.Errorf("ParseRole(%q) = %v, %v; want RoleNone, false", name, r, ok)
		}
		if m, ok := ParseMethod(name); ok || m != MethodNone {
			t.Errorf("ParseMethod(%q) = %v, %v; want MethodNone, false", name, m, ok)
		}
	}
	for _, m := range []Method{MethodNone, MethodStatus + 1, 255} {
		if m.String() != "invalid" {
			t.Errorf("Method(%d).String() = %q", m, m.String())
		}
	}
}

// TestDecodeStaysInsideTheLine: the Reader hands Decode lines that are slices of its
// buffer, with more bytes (the next lines) behind them. Decode must read nothing past
// the end of its line: every proper prefix of a valid line, given as a slice of the
// whole line's buffer, is refused as a parse error at an offset inside the prefix,
// whatever follows it in memory; and with no capacity behind it, it does not panic.
//
// Kills: decode.go Decoder.validate:arith:4227cab6 (a literal cut at the end of the
// line compared with the bytes behind it).
func TestDecodeStaysInsideTheLine(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":true}}`,
		`{"jsonrpc":"2.0","id":2,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":false}}`,
		`{"jsonrpc":"2.0","id":3,"method":"status","params":{"run":"r","key":null}}`,
		`{"jsonrpc":"2.0","id":-4.5e+3,"method":"cancel","params":{"run":"r\u00e9\n"}}`,
	}
	for _, line := range lines {
		buf := []byte(line + "\n" + line)
		for n := 0; n < len(line); n++ {
			for _, prefix := range [][]byte{buf[:n], buf[:n:n]} {
				var d Decoder
				var req Request
				err := d.Decode(prefix, &req)
				var de *DecodeError
				if !errors.As(err, &de) || de.Err != ErrParse || de.Offset < 0 || de.Offset > n {
					t.Fatalf("Decode(%q) = %#v, want a parse error at an offset in 0..%d", prefix, err, n)
				}
			}
		}
	}
}
