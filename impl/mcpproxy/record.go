package mcpproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// recordVersion is the "v" of the records this proxy writes; a record of another
// version is read as digest-only (never as a result it might misread).
const recordVersion = 1

// Record is what the proxy completes an effect with, as JSON (the gate's result
// bytes): the SHA-256 of the upstream's result JSON and, if the whole record fits the
// gate's limit, the result itself. A result that does not fit is recorded by digest
// and length only: never cut, since a cut result would replay as one the tool never
// returned. Error says, instead of a result, why there is none (the upstream failed
// the request, or died with it in flight).
type Record struct {
	V      int             `json:"v"`
	SHA256 string          `json:"sha256,omitempty"`
	Bytes  int             `json:"bytes,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// resultRecord is the record of a result the upstream returned, within limit bytes
// of JSON, the result kept only if it fits.
func resultRecord(res *mcp.CallToolResult, limit int) (string, error) {
	body, err := json.Marshal(res)
	if err != nil {
		return "", fmt.Errorf("encode the upstream's result: %w", err)
	}
	sum := sha256.Sum256(body)
	r := Record{V: recordVersion, SHA256: hex.EncodeToString(sum[:]), Bytes: len(body), Result: body}
	if text := encodeRecord(r); len(text) <= limit {
		return text, nil
	}
	r.Result = nil
	return encodeRecord(r), nil // a digest and a length always fit
}

// errorRecord is the record of a call that returned no result.
func errorRecord(msg string, limit int) string {
	r := Record{V: recordVersion, Error: msg}
	if text := encodeRecord(r); len(text) <= limit {
		return text
	}
	r.Error = "(the error message was longer than the gate's result limit)"
	return encodeRecord(r)
}

func encodeRecord(r Record) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(r) // a Record of valid JSON always encodes
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// fitsLine reports whether a complete request carrying result fits the wire's line
// limit once escaped (a result full of quotes doubles in size on the wire).
func fitsLine(run, key, result string) bool {
	req := &proto.Request{ID: proto.IntID(1 << 52), Method: proto.MethodComplete, Run: core.RunID(run), Key: core.Key(key),
		Outcome: core.OutcomeOK, Result: result}
	return len(proto.AppendRequest(nil, req)) <= proto.LineBytesMax
}

// Replay is what a duplicate answers the host: the recorded result, if there is one.
type Replay struct {
	Result *mcp.CallToolResult // nil: not available (digest only, not completed, or not this proxy's record)
	Why    string              // when Result is nil: why, for the host's error text
}

// replay reads a duplicate's record. The upstream is never asked: the call was
// performed once already.
func replay(a proto.AdmitResult) Replay {
	if a.Outcome == core.OutcomeNone {
		return Replay{Why: "it was performed (or is being performed) and has no recorded result yet"}
	}
	var r Record
	dec := json.NewDecoder(bytes.NewReader([]byte(a.Result)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.V != recordVersion {
		return Replay{Why: "its recorded result is not a record of this proxy"}
	}
	switch {
	case r.Error != "":
		return Replay{Why: "it ended with no result: " + r.Error}
	case r.Result == nil:
		return Replay{Why: fmt.Sprintf("its result (%d bytes, sha256 %s) was too large to record, only its digest was kept", r.Bytes, r.SHA256)}
	}
	sum := sha256.Sum256(r.Result)
	if hex.EncodeToString(sum[:]) != r.SHA256 {
		return Replay{Why: "its recorded result does not match its digest"}
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		return Replay{Why: "its recorded result does not decode: " + err.Error()}
	}
	return Replay{Result: &res}
}
