package proto_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

func TestDecodeValid(t *testing.T) {
	var d Decoder
	for _, tc := range prototest.Valid {
		t.Run(tc.Name, func(t *testing.T) {
			var got Request
			if err := d.Decode([]byte(tc.Line), &got); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got != tc.Want {
				t.Fatalf("Decode:\n got %+v\nwant %+v", got, tc.Want)
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
	for _, tc := range prototest.Bad {
		t.Run(tc.Name, func(t *testing.T) {
			var got Request
			err := d.Decode([]byte(tc.Line), &got)
			if !errors.Is(err, tc.Want) {
				t.Fatalf("Decode error = %v, want %v", err, tc.Want)
			}
			for _, other := range DecodeErrors {
				if other != tc.Want && errors.Is(err, other) {
					t.Fatalf("error %v also matches %v", err, other)
				}
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if de.ID != tc.ID || got.ID != tc.ID {
				t.Fatalf("recovered id = %v (request %v), want %v", de.ID, got.ID, tc.ID)
			}
			if de.Field != tc.Field {
				t.Fatalf("field = %q, want %q", de.Field, tc.Field)
			}
			if (got != Request{ID: tc.ID}) {
				t.Fatalf("a failed decode left fields set: %+v", got)
			}
			o := ErrorObjectOf(err)
			if o.Code != tc.Want.Code || o.Type != tc.Want.Type {
				t.Fatalf("error object %+v, want code %d type %s", o, tc.Want.Code, tc.Want.Type)
			}
		})
	}
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
		{"one-digit jsonrpc", `{"jsonrpc":1,"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"array jsonrpc holding 2.0", `{"jsonrpc":[2.0],"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"empty string jsonrpc", `{"jsonrpc":"","id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"escaped jsonrpc", `{"jsonrpc":"\u0032.0","id":1,"method":"cancel","params":{"run":"r"}}`, nil, ""},
		{"object jsonrpc", `{"jsonrpc":{"v":"2.0"},"id":1,"method":"cancel","params":{"run":"r"}}`, ErrInvalidRequest, "jsonrpc"},
		{"array method", `{"jsonrpc":"2.0","id":1,"method":["cancel"],"params":{"run":"r"}}`, ErrInvalidRequest, "method"},
		{"nested names reused by the parent", `{"params":{"run":"r","id":3},"id":1,"jsonrpc":"2.0","method":"cancel"}`, ErrUnknownField, "params.id"},
		{"nested names reused by the parent, many", `{"params":{"run":"r",` + prototest.ManyKeys(20) + `},"k1":1,"id":1,"jsonrpc":"2.0","method":"cancel"}`, ErrInvalidRequest, "k1"},
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
		{"duplicate past the pairwise keys", env(`1`, `{"run":"r",`+prototest.ManyKeys(40)+`,"k30":0}`), ErrDuplicateKey, ""},
		{"duplicate of the last of many keys", env(`1`, `{"run":"r",`+prototest.ManyKeys(40)+`,"k39":0}`), ErrDuplicateKey, ""},
		{"duplicate of the 17th key", env(`1`, `{`+prototest.ManyKeys(17)+`,"k16":0}`), ErrDuplicateKey, ""},
		{"many distinct escaped keys", env(`1`, `{"run":"r",`+strings.ReplaceAll(prototest.ManyKeys(40), `"k`, `"\u006b`)+`}`), ErrUnknownField, "params.k0"},
		{"sibling objects with the same names", env(`1`, `{"run":[{"a":1,"b":2},{"a":1,"b":2}]}`), ErrWrongType, "params.run"},
		{"array before another member", env(`1`, `{"run":"r","x":[1],"y":2}`), ErrUnknownField, "params.x"},
		{"duplicate after an array", env(`1`, `{"run":"r","x":[1],"x":2}`), ErrDuplicateKey, ""},
		{"duplicate after an array, top level", `{"a":[1],"a":2}`, ErrDuplicateKey, ""},
		{"duplicate after an array in a nested object", env(`1`, `{"run":"r","z":{"q":[1],"q":1}}`), ErrDuplicateKey, ""},
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

// TestDuplicateKeyRecoversID: a line refused for a duplicate key still carries its id
// in the answer when the top-level object has exactly one "id" member holding a valid
// id, wherever it stands (first, last, spelt with an escape), and the null id when
// "id" itself is repeated or invalid (docs/protocol.md, "Order of checks": the answer
// carries the id from the envelope's id check on; a duplicate key comes before, so the
// id is given only when it is unambiguous). Checked against protoref too.
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

// TestIDTypeMessage: an id that is neither a number nor a string is refused with a
// message that says what an id may be (docs/protocol.md, "Requests": an integer or a
// string), not only that it is not an integer.
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

// TestDecodeStaysInsideTheLine: the Reader hands Decode lines that are slices of its
// buffer, with more bytes (the next lines) behind them. Decode must read nothing past
// the end of its line: every proper prefix of a valid line, given as a slice of the
// whole line's buffer, is refused as a parse error at an offset inside the prefix,
// whatever follows it in memory; and with no capacity behind it, it does not panic.
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
