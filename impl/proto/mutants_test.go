package proto_test

// Tests written from the mutation score of impl/proto (docs/verify/mutation.md,
// `make mutation-proto`): each one checks a behaviour that docs/protocol.md or the
// package's documentation requires and that no other test pinned down, and names the
// surviving mutants it kills. A mutant id is stable (file:Func:operator:hash);
// `go run ./cmd/mutate -only ID ./impl/proto/` (with the target's -test and -skip)
// re-runs one.

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

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
// repeated "id" that is the first member taken for a unique one).
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
