package mcpproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/proto"
)

// Meta keys a host may put in a tools/call's _meta to name the run and the key.
const (
	MetaRun = "soundgate/run"
	MetaKey = "soundgate/key"
)

// ArgsDepthMax bounds the nesting of a call's arguments the proxy canonicalizes (the
// walk is recursive).
const ArgsDepthMax = 64

// ErrBadCall is wrapped by every error that makes the proxy refuse a tools/call
// before it asks the gate: bad arguments, a bad run or key in _meta.
var ErrBadCall = errors.New("soundgate/mcpproxy: bad call")

// CanonicalJSON rewrites a JSON text so that equal values have equal bytes: object
// members sorted by name (bytewise), no insignificant whitespace, strings re-escaped
// one way. Numbers keep their text (1 and 1.0 stay distinct: the proxy does not guess
// what the upstream reads). Duplicate member names, invalid UTF-8 and nesting deeper
// than ArgsDepthMax are errors: the upstream's reading of them is not knowable. Empty
// input is the empty object (MCP: arguments may be omitted).
func CanonicalJSON(in []byte) ([]byte, error) {
	if len(bytes.TrimSpace(in)) == 0 {
		return []byte("{}"), nil
	}
	if !utf8.Valid(in) {
		return nil, fmt.Errorf("%w: arguments are not valid UTF-8", ErrBadCall)
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canon(dec, &out, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: arguments: data after the JSON value", ErrBadCall)
	}
	return out.Bytes(), nil
}

func canon(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	if depth > ArgsDepthMax {
		return fmt.Errorf("%w: arguments nest deeper than %d levels", ErrBadCall, ArgsDepthMax)
	}
	t, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: arguments are not JSON: %v", ErrBadCall, err)
	}
	switch v := t.(type) {
	case json.Delim:
		if v == '[' {
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := canon(dec, out, depth+1); err != nil {
					return err
				}
			}
			dec.Token() // ']'
			out.WriteByte(']')
			return nil
		}
		members := map[string][]byte{}
		for dec.More() {
			nt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%w: arguments are not JSON: %v", ErrBadCall, err)
			}
			name := nt.(string)
			if _, dup := members[name]; dup {
				return fmt.Errorf("%w: arguments name %q twice", ErrBadCall, name)
			}
			var b bytes.Buffer
			if err := canon(dec, &b, depth+1); err != nil {
				return err
			}
			members[name] = b.Bytes()
		}
		if _, err := dec.Token(); err != nil { // '}'
			return fmt.Errorf("%w: arguments are not JSON: %v", ErrBadCall, err)
		}
		names := make([]string, 0, len(members))
		for n := range members {
			names = append(names, n)
		}
		sort.Strings(names)
		out.WriteByte('{')
		for i, n := range names {
			if i > 0 {
				out.WriteByte(',')
			}
			writeString(out, n)
			out.WriteByte(':')
			out.Write(members[n])
		}
		out.WriteByte('}')
	case string:
		writeString(out, v)
	case json.Number:
		out.WriteString(v.String())
	case bool:
		if v {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

// writeString writes s as encoding/json does, without HTML escaping.
func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.Encode(s)               // a valid UTF-8 string always encodes
	out.Truncate(out.Len() - 1) // Encode's newline
}

// keyPrefix starts every key the proxy derives, so that it cannot meet a key of
// another client of the gate by chance.
const keyPrefix = "mcp:"

// DigestKey is the gate key of a call of tool on server with arguments args (canonical
// JSON): keyPrefix and the hex SHA-256 of the three, each prefixed by its length so
// that no two triples share their bytes. The JSON-RPC id is not part of it: a retry has
// a new id and must have the same key.
func DigestKey(server, tool string, canonArgs []byte) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, part := range [][]byte{[]byte("soundgate-mcp-key/1"), []byte(server), []byte(tool), canonArgs} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(part)))])
		h.Write(part)
	}
	return keyPrefix + hex.EncodeToString(h.Sum(nil))
}

// Target is the run and key a call is asked under.
type Target struct {
	Run, Key string
}

// CallTarget picks the run and key of a tools/call: the run from _meta[MetaRun], else
// defaultRun; the key from _meta[MetaKey], else DigestKey of the call. A _meta value
// of the wrong type, an empty or invalid string, or one past the protocol's limits is
// an ErrBadCall: the proxy does not guess a run or a key.
func CallTarget(meta map[string]any, defaultRun, server, tool string, args json.RawMessage) (Target, error) {
	run, err := metaString(meta, MetaRun, proto.RunBytesMax)
	if err != nil {
		return Target{}, err
	}
	if run == "" {
		run = defaultRun
	}
	if run == "" {
		return Target{}, fmt.Errorf("%w: no run: the proxy has no --run and the call's _meta has no %q", ErrBadCall, MetaRun)
	}
	key, err := metaString(meta, MetaKey, proto.KeyBytesMax)
	if err != nil {
		return Target{}, err
	}
	if key == "" {
		canonArgs, err := CanonicalJSON(args)
		if err != nil {
			return Target{}, err
		}
		key = DigestKey(server, tool, canonArgs)
	}
	return Target{Run: run, Key: key}, nil
}

// metaString is meta[name] as a string of 1..limit bytes of UTF-8, or "" if absent.
func metaString(meta map[string]any, name string, limit int) (string, error) {
	v, ok := meta[name]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	switch {
	case !ok:
		return "", fmt.Errorf("%w: _meta[%q] must be a string", ErrBadCall, name)
	case s == "":
		return "", fmt.Errorf("%w: _meta[%q] is empty", ErrBadCall, name)
	case len(s) > limit:
		return "", fmt.Errorf("%w: _meta[%q] is %d bytes, over the gate's limit of %d", ErrBadCall, name, len(s), limit)
	case !utf8.ValidString(s):
		return "", fmt.Errorf("%w: _meta[%q] is not valid UTF-8", ErrBadCall, name)
	}
	return s, nil
}
