// Package strictjson reads a configuration file's JSON token by token, so that every
// fault names its line: an unknown field, a key given twice (encoding/json keeps the
// last of two and ignores unknown ones), a value of the wrong type, trailing data. The
// gate's roles file and the MCP proxy's policy file are read this way, because every
// leniency of either would widen someone's privilege.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Error is a fault of the file at a line; the callers wrap it in their own error type.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Scanner walks the tokens of one JSON text.
type Scanner struct {
	src []byte
	dec *json.Decoder
}

// New returns a scanner of src.
func New(src []byte) *Scanner { return &Scanner{src: src, dec: json.NewDecoder(bytes.NewReader(src))} }

// Line is the line of the token just read: the decoder's offset is just past it (and
// past the whitespace after it), so the offset is moved back over that whitespace.
func (s *Scanner) Line() int {
	end := min(int(s.dec.InputOffset()), len(s.src))
	for end > 0 && (s.src[end-1] == ' ' || s.src[end-1] == '\t' || s.src[end-1] == '\r' || s.src[end-1] == '\n') {
		end--
	}
	return s.lineAt(max(end-1, 0))
}

func (s *Scanner) lineAt(offset int) int {
	return 1 + bytes.Count(s.src[:min(offset, len(s.src))], []byte("\n"))
}

// Errorf is an Error at the token just read.
func (s *Scanner) Errorf(format string, a ...any) error {
	return &Error{Line: s.Line(), Msg: fmt.Sprintf(format, a...)}
}

// Token reads a token; a syntax error names its own line, the end of the text its last.
func (s *Scanner) Token() (json.Token, error) {
	t, err := s.dec.Token()
	if err == nil {
		return t, nil
	}
	if errors.Is(err, io.EOF) {
		return nil, &Error{Line: s.lineAt(len(s.src)), Msg: "not JSON: unexpected end of file"}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, &Error{Line: s.lineAt(int(se.Offset)), Msg: "not JSON: " + se.Error()}
	}
	return nil, s.Errorf("not JSON: %v", err)
}

// Object reads an object, calling member for each key after refusing a key given
// twice; member must read the key's value.
func (s *Scanner) Object(what string, member func(key string) error) error {
	t, err := s.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return s.Errorf("%s must be an object", what)
	}
	seen := map[string]int{}
	for s.dec.More() {
		t, err := s.Token()
		if err != nil {
			return err
		}
		key := t.(string) // the decoder yields only strings as an object's keys
		if at, dup := seen[key]; dup {
			return s.Errorf("%q is given twice in %s (also on line %d; a JSON decoder would keep the last)", key, what, at)
		}
		seen[key] = s.Line()
		if err := member(key); err != nil {
			return err
		}
	}
	_, err = s.Token() // '}'
	return err
}

// Array reads an array, calling each for every element; each must read it.
func (s *Scanner) Array(what string, each func() error) error {
	t, err := s.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('[') {
		return s.Errorf("%s must be an array", what)
	}
	for s.dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	_, err = s.Token() // ']'
	return err
}

// String reads a string value into v.
func (s *Scanner) String(what string, v *string) error {
	t, err := s.Token()
	if err != nil {
		return err
	}
	str, ok := t.(string)
	if !ok {
		return s.Errorf("%s must be a string", what)
	}
	*v = str
	return nil
}

// End refuses anything after the top-level value, what.
func (s *Scanner) End(what string) error {
	if _, err := s.dec.Token(); !errors.Is(err, io.EOF) {
		return s.Errorf("more data after %s", what)
	}
	return nil
}
