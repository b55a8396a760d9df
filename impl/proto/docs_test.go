package proto_test

import (
	"errors"
	"os"
	"strings"
	"testing"

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
