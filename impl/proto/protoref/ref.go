// Package protoref is a deliberately simple reference decoder of soundgate's wire
// protocol, for tests and fuzzers only: the production decoder (proto.Decoder) must
// agree with it on every line, on acceptance, on the decoded request and on the kind,
// id and field of every error.
//
// It is built from encoding/json plus explicit checks written for clarity, not speed,
// and it follows docs/protocol.md's order of checks step by step. It shares no
// scanning code with package proto; it uses only proto's types, limits and errors.
// Production code must not import it.
package protoref

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Decode decodes one request line (with or without LF or CRLF) the simple way.
// Its results mean what proto.Decoder.Decode's mean.
func Decode(line []byte) (proto.Request, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))

	// 1. Size, 2. encoding, 3. syntax (including escapes and depth).
	if len(line) > proto.LineBytesMax {
		return fail(proto.ErrLineTooLong, proto.ID{}, "")
	}
	if !utf8.Valid(line) {
		return fail(proto.ErrInvalidUTF8, proto.ID{}, "")
	}
	if !json.Valid(line) || hasLoneSurrogate(line) || depth(line) > proto.DepthMax {
		return fail(proto.ErrParse, proto.ID{}, "")
	}
	// 4. Duplicate keys, at any depth. The id is still reported if it is unambiguous.
	if hasDuplicateKey(line) {
		return fail(proto.ErrDuplicateKey, uniqueID(line), "")
	}
	// 5. The envelope.
	top, ok := members(line)
	if !ok {
		return fail(proto.ErrInvalidRequest, proto.ID{}, "")
	}
	req, rawParams, err := envelope(top)
	if err != nil {
		return req, err
	}
	// 6. Params, member by member in order of appearance, then what is missing.
	if err := params(&req, rawParams); err != nil {
		return proto.Request{ID: req.ID}, err
	}
	return req, nil
}

// uniqueID returns the id of a line refused for a duplicate key: the value of its one
// top-level "id" member, or the null id if there is none, several, or it is invalid.
func uniqueID(line []byte) proto.ID {
	top, ok := members(line)
	if !ok {
		return proto.ID{}
	}
	var ids []json.RawMessage
	for _, m := range top {
		if m.name == "id" {
			ids = append(ids, m.value)
		}
	}
	if len(ids) != 1 {
		return proto.ID{}
	}
	id, _ := parseID(ids[0])
	return id
}

// envelope checks the top-level members (step 5) and returns the request with its id
// and method, and the raw params object.
func envelope(top []member) (proto.Request, json.RawMessage, error) {
	env := map[string]json.RawMessage{}
	unknown, hasUnknown := "", false
	for _, m := range top {
		switch m.name {
		case "jsonrpc", "id", "method", "params":
			env[m.name] = m.value
		default:
			if !hasUnknown {
				unknown, hasUnknown = m.name, true
			}
		}
	}
	rawID, ok := env["id"]
	if !ok {
		return proto.Request{}, nil, refusal(proto.ErrInvalidRequest, proto.ID{}, "id")
	}
	id, ok := parseID(rawID)
	if !ok {
		return proto.Request{}, nil, refusal(proto.ErrInvalidRequest, proto.ID{}, "id")
	}
	req := proto.Request{ID: id}
	if hasUnknown {
		return req, nil, refusal(proto.ErrInvalidRequest, id, cut(unknown))
	}
	var version string
	if raw, ok := env["jsonrpc"]; !ok || raw[0] != '"' || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return req, nil, refusal(proto.ErrInvalidRequest, id, "jsonrpc")
	}
	var methodName string
	if raw, ok := env["method"]; !ok || raw[0] != '"' || json.Unmarshal(raw, &methodName) != nil {
		return req, nil, refusal(proto.ErrInvalidRequest, id, "method")
	}
	method, ok := proto.ParseMethod(methodName)
	if !ok {
		return req, nil, refusal(proto.ErrUnknownMethod, id, "method")
	}
	rawParams, ok := env["params"]
	if !ok {
		return req, nil, refusal(proto.ErrMissingField, id, "params")
	}
	if rawParams[0] != '{' {
		return req, nil, refusal(proto.ErrWrongType, id, "params")
	}
	req.Method = method
	return req, rawParams, nil
}

// params checks the members of params (step 6) in order of appearance, storing each
// in req, then what is missing.
func params(req *proto.Request, raw json.RawMessage) error {
	members, _ := members(raw)
	allowed := fields[req.Method]
	seen := map[string]bool{}
	for _, p := range members {
		kind, ok := allowed[p.name]
		if !ok {
			return refusal(proto.ErrUnknownField, req.ID, "params."+cut(p.name))
		}
		seen[p.name] = true
		if err := set(req, p.name, kind, p.value); err != nil {
			return refusal(err, req.ID, "params."+p.name)
		}
	}
	for _, name := range order {
		if k, ok := allowed[name]; ok && k.required && !seen[name] {
			return refusal(proto.ErrMissingField, req.ID, "params."+name)
		}
	}
	return nil
}

func fail(kind *proto.Error, id proto.ID, field string) (proto.Request, error) {
	return proto.Request{ID: id}, refusal(kind, id, field)
}

func refusal(kind *proto.Error, id proto.ID, field string) error {
	return &proto.DecodeError{Err: kind, ID: id, Field: field, Offset: -1}
}

type fieldKind struct {
	typ      string // "string", "text", "digest", "cursor", "int", "bool", "decision", "outcome"
	lo, hi   int64  // range of an int, or of a string's length in bytes
	required bool
}

var (
	run    = fieldKind{"string", 1, proto.RunBytesMax, true}
	key    = fieldKind{"string", 1, proto.KeyBytesMax, true}
	keyOpt = fieldKind{"string", 1, proto.KeyBytesMax, false}
	epoch  = fieldKind{"int", 1, proto.IntMax, true}
	text   = fieldKind{"text", 0, 512, false} // a note's description or reason
	order  = []string{"version", "token", "run", "key", "epoch", "gated", "wait_ms", "timeout_ms", "decision", "outcome", "result",
		"description", "args_digest", "reason", "limit", "cursor"}
	fields = map[proto.Method]map[string]fieldKind{
		proto.MethodHello: {"version": {"int", 1, proto.IntMax, true}, "token": {"string", 1, proto.TokenBytesMax, true}},
		proto.MethodOpen:  {"run": run, "timeout_ms": {"int", 1, proto.TimeoutMsMax, false}},
		proto.MethodAdmit: {"run": run, "key": key, "epoch": epoch, "gated": {"bool", 0, 0, false},
			"wait_ms": {"int", 0, proto.WaitMsMax, false}, "description": text, "args_digest": {"digest", 1, 135, false}},
		proto.MethodDecide:   {"run": run, "key": key, "decision": {"decision", 0, 0, true}, "reason": text},
		proto.MethodComplete: {"run": run, "key": key, "outcome": {"outcome", 0, 0, true}, "result": {"string", 0, proto.ResultBytesMax, false}},
		proto.MethodCancel:   {"run": run, "reason": text},
		proto.MethodFence:    {"run": run, "reason": text},
		proto.MethodStatus:   {"run": run, "key": keyOpt},
		proto.MethodPending:  {"limit": {"int", 1, 1000, false}, "cursor": {"cursor", 1, 1024, false}},
		proto.MethodWatch:    {},
		proto.MethodUnwatch:  {},
	}
	integer = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	// digest is what an args digest must look like.
	digest = regexp.MustCompile(`^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$`)
)

// set checks one params member and stores it in req.
func set(req *proto.Request, name string, k fieldKind, raw json.RawMessage) *proto.Error {
	var s string
	var n int64
	switch k.typ {
	case "string", "text", "digest", "cursor", "decision", "outcome":
		if raw[0] != '"' {
			return proto.ErrWrongType
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return proto.ErrWrongType
		}
	case "int":
		if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return proto.ErrWrongType
		}
		if !integer.Match(raw) {
			return proto.ErrWrongType
		}
		var err error
		n, err = strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n < -proto.IntMax || n > proto.IntMax || n < k.lo || n > k.hi {
			return proto.ErrOutOfRange
		}
	case "bool":
		switch string(raw) {
		case "true", "false":
		default:
			return proto.ErrWrongType
		}
	}
	switch k.typ {
	case "string", "text", "digest", "cursor":
		if int64(len(s)) < k.lo || int64(len(s)) > k.hi {
			return proto.ErrOutOfRange
		}
		if k.typ == "text" && !noteText(s) || k.typ == "digest" && !digest.MatchString(s) || k.typ == "cursor" && !cursor(s) {
			return proto.ErrOutOfRange
		}
	case "decision":
		d, ok := core.ParseDecision(s)
		if !ok {
			return proto.ErrOutOfRange
		}
		req.Decision = d
	case "outcome":
		o, ok := core.ParseOutcome(s)
		if !ok {
			return proto.ErrOutOfRange
		}
		req.Outcome = o
	}
	switch name {
	case "version":
		req.Version = n
	case "token":
		req.Token = s
	case "run":
		req.Run = core.RunID(s)
	case "key":
		req.Key = core.Key(s)
	case "epoch":
		req.Epoch = uint64(n)
	case "gated":
		req.Gated = string(raw) == "true"
	case "wait_ms":
		req.WaitMs = n
	case "timeout_ms":
		req.TimeoutMs = n
	case "result":
		req.Result = s
	case "description":
		req.Description = s
	case "args_digest":
		req.ArgsDigest = s
	case "reason":
		req.Reason = s
	case "limit":
		req.Limit = n
	case "cursor":
		req.Cursor = s
	}
	return nil
}

// noteText reports whether s may be a description or a reason: no control character
// (C0, DEL, C1) but tab and line feed. (s came from encoding/json: it is UTF-8.)
func noteText(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' || r >= 0x7f && r <= 0x9f {
			return false
		}
	}
	return true
}

// cursor reports whether s is a cursor a pending answer could give: base64url
// without padding, canonical, of a signed varint (since), a uvarint run length of 1
// to 128, the run and a key of 1 to 256 bytes, both UTF-8.
func cursor(s string) bool {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || base64.RawURLEncoding.EncodeToString(b) != s {
		return false
	}
	since, n := binary.Varint(b)
	if n <= 0 {
		return false
	}
	rest := b[n:]
	l, n := binary.Uvarint(rest)
	if n <= 0 || l < 1 || l > proto.RunBytesMax || l > uint64(len(rest)-n) {
		return false
	}
	run, key := rest[n:n+int(l)], rest[n+int(l):]
	// the varints written the shortest way: one spelling per place
	canonical := append(binary.AppendUvarint(binary.AppendVarint(nil, since), l), rest[n:]...)
	return bytes.Equal(canonical, b) && utf8.Valid(run) && utf8.Valid(key) && len(key) >= 1 && len(key) <= proto.KeyBytesMax
}

func parseID(raw json.RawMessage) (proto.ID, bool) {
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil || len(s) > proto.IDBytesMax {
			return proto.ID{}, false
		}
		return proto.StringID(s), true
	}
	if !integer.Match(raw) {
		return proto.ID{}, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > proto.IntMax || n < -proto.IntMax {
		return proto.ID{}, false
	}
	return proto.IntID(n), true
}

type member struct {
	name  string
	value json.RawMessage
}

// members returns the members of a JSON object in order, duplicates included; ok is
// false if raw is not an object.
func members(raw []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, member{tok.(string), bytes.TrimSpace(v)})
	}
	return out, true
}

// hasDuplicateKey walks every object of the valid JSON text raw.
func hasDuplicateKey(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() bool // reports a duplicate in the next value
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			dup := false
			for dec.More() {
				k, _ := dec.Token()
				if seen[k.(string)] {
					dup = true
				}
				seen[k.(string)] = true
				if walk() {
					dup = true
				}
			}
			dec.Token()
			return dup
		case json.Delim('['):
			dup := false
			for dec.More() {
				if walk() {
					dup = true
				}
			}
			dec.Token()
			return dup
		}
		return false
	}
	return walk()
}

// depth returns the deepest nesting of arrays and objects in the valid JSON text raw.
func depth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	d, most := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return most
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			d++
			most = max(most, d)
		case json.Delim('}'), json.Delim(']'):
			d--
		}
	}
}

// hasLoneSurrogate reports whether the valid JSON text raw has a \u escape of a
// surrogate that is not part of a high-low pair (encoding/json would silently turn
// it into U+FFFD; the protocol refuses it). Outside strings valid JSON has no
// backslash, so scanning every backslash of the text is enough.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		r, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 32)
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+12 > len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return true
			}
			r2, _ := strconv.ParseUint(string(raw[i+8:i+12]), 16, 32)
			if r2 < 0xDC00 || r2 > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// cut shortens an offending name as the protocol does in error fields.
func cut(name string) string {
	if len(name) <= proto.NameBytesMax {
		return name
	}
	n := proto.NameBytesMax
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n] + "..."
}
