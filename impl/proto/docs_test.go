package proto_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// exchange is one request line of docs/protocol.md's transcripts and the answer line
// the server gave for it.
type exchange struct {
	at       int // line number in docs/protocol.md
	request  string
	response string
}

// protocolDoc returns docs/protocol.md, the protocol's reference for client authors.
func protocolDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatalf("the protocol's reference is needed: %v", err)
	}
	return string(doc)
}

// docSection returns the section of text from the heading "## name" to the heading
// "## next".
func docSection(t *testing.T, text, name, next string) string {
	t.Helper()
	start := strings.Index(text, "\n## "+name+"\n")
	end := strings.Index(text, "\n## "+next+"\n")
	if start < 0 || end < start {
		t.Fatalf("docs/protocol.md has no %q section before %q", name, next)
	}
	return text[start:end]
}

// transcript reads every "> request" line of docs/protocol.md that is followed
// directly by a "< answer" line.
func transcript(t *testing.T) []exchange {
	t.Helper()
	var out []exchange
	lines := strings.Split(protocolDoc(t), "\n")
	for n := 1; n < len(lines); n++ {
		if prev, line := lines[n-1], lines[n]; strings.HasPrefix(line, "< ") && strings.HasPrefix(prev, "> ") {
			out = append(out, exchange{n + 1, prev[2:], line[2:]})
		}
	}
	return out
}

// TestTranscriptDecodeErrors: for every line of docs/protocol.md's transcripts that the
// decoder refuses, the error answer is byte for byte the one the document shows: code,
// message (with the field, the detail and the byte offset of the fault), data.type,
// data.field and the id. The document is what client authors read; it was produced by
// a real server, and this keeps the decoder and it from drifting apart.
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
		r := NewResult(req.Method)
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

// TestErrorTableDocumented: docs/protocol.md's error table ("Errors") is the wire's
// contract and within version 1 no code or type changes meaning ("Versioning"). Every
// row's code is the one this package sends for that data.type, every error of this
// package and of the core has a row, and the documented code ranges are the
// package's constants.
func TestErrorTableDocumented(t *testing.T) {
	section := docSection(t, protocolDoc(t), "Errors", "Limits")
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

// TestLimitsDocumented: the wire's limits are the numbers of docs/protocol.md's
// "Limits" table, which client authors build on, and the protocol version is the one
// the page describes. The other tests use the constants on both sides (a line of
// LineBytesMax bytes, a run of RunBytesMax+1), so a constant changed in the code
// alone would go unnoticed by them.
func TestLimitsDocumented(t *testing.T) {
	text := protocolDoc(t)
	section := docSection(t, text, "Limits", "Versioning")
	// Each row: | name | value | error |; the numbers of the value cell, in order.
	number := regexp.MustCompile(`[0-9][0-9,]*`)
	rows := map[string][]int64{}
	for _, line := range strings.Split(section, "\n") {
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
