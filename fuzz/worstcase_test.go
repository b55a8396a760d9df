package fuzz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
)

// fill repeats unit inside prefix...suffix up to a line of exactly LineBytesMax bytes
// (or just under, when unit does not divide the room).
func fill(prefix, unit, suffix string) string {
	n := (proto.LineBytesMax - len(prefix) - len(suffix)) / len(unit)
	return prefix + strings.Repeat(unit, n) + suffix
}

func manyKeys(prefix string, n int, suffix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":0`, i)
	}
	b.WriteString(suffix)
	return b.String()
}

// TestWorstCaseLines feeds the decoders the most expensive lines of the maximal
// length we know of and holds the production decoder to the per-line budget
// (helpers_test.go): the fuzzer finds long inputs slowly, so they are written here.
func TestWorstCaseLines(t *testing.T) {
	env := `{"jsonrpc":"2.0","id":1,"method":"complete","params":{"run":"r","key":"k","outcome":"ok","result":`
	longKey := strings.Repeat("a", 4000)
	cases := []struct {
		name string
		line string
	}{
		{"many keys in params", manyKeys(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{`, 6000, `}}`)},
		{"many keys at top level", manyKeys(`{`, 6000, `}`)},
		{"many small objects", fill(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":[`, `{"a":1,"b":2,"c":3},`, `{}]}}`)},
		{"15 long keys per object", `{"x":{` + strings.Join(func() []string {
			var ks []string
			for i := 0; i < 15; i++ {
				ks = append(ks, fmt.Sprintf(`"%s%02d":0`, longKey, i))
			}
			return ks
		}(), ",") + `}}`},
		{"15 long escaped keys", `{"x":{` + strings.Join(func() []string {
			var ks []string
			for i := 0; i < 15; i++ {
				ks = append(ks, fmt.Sprintf(`"%s%02d":0`, strings.Repeat(`\u0061`, 700), i))
			}
			return ks
		}(), ",") + `}}`},
		{"escapes in the result", fill(env+`"`, `\u00e9`, `"}}`)},
		{"surrogate pairs in the result", fill(env+`"`, `\ud83d\ude00`, `"}}`)},
		{"deep nesting refused", fill(`{"a":`, `[`, ``)},
		{"nesting at the limit, repeated", fill(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":[`, strings.Repeat("[", proto.DepthMax-3)+strings.Repeat("]", proto.DepthMax-3)+",", `0]}}`)},
		{"long number", fill(`{"jsonrpc":"2.0","id":`, `9`, `}`)},
		{"whitespace", fill(`{`, ` `, `}`)},
		{"long unknown method", fill(`{"jsonrpc":"2.0","id":1,"method":"`, `m`, `","params":{}}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.line) > proto.LineBytesMax {
				t.Fatalf("case is %d bytes, over the line limit", len(tc.line))
			}
			line := []byte(tc.line)
			var d proto.Decoder
			var req proto.Request
			var err error
			checkBudget(t, "Decode", len(line), func() { err = d.Decode(line, &req) })
			checkDecoded(t, line, req, err)
			ref, rerr := protoref.Decode(line)
			if ref != req || (err == nil) != (rerr == nil) {
				t.Fatalf("reference disagrees: %+v, %v vs %+v, %v", ref, rerr, req, err)
			}
		})
	}
}
