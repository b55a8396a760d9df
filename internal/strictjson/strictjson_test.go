package strictjson_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/internal/strictjson"
)

// read reads {"a": STRING, "b": [STRING...]} and the end of the text.
func read(src string) error {
	s := strictjson.New([]byte(src))
	err := s.Object("the file", func(key string) error {
		var v string
		switch key {
		case "a":
			return s.String(`"a"`, &v)
		case "b":
			return s.Array(`"b"`, func() error { return s.String("an element", &v) })
		}
		return s.Errorf("unknown field %q", key)
	})
	if err != nil {
		return err
	}
	return s.End("the file")
}

// TestFaultsNameTheirLine: every fault is an *Error at the line of the token at fault.
func TestFaultsNameTheirLine(t *testing.T) {
	require.NoError(t, read("{\"a\": \"x\",\n \"b\": [\"y\", \"z\"]}\n"))
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unknown field", "{\"a\": \"x\",\n\n \"c\": 1}", 3, `unknown field "c"`},
		{"key twice", "{\"a\": \"x\",\n \"a\": \"y\"}", 2, `"a" is given twice in the file (also on line 1`},
		{"escaped key twice", "{\"a\": \"x\", \"\\u0061\": \"y\"}", 1, "given twice"},
		{"wrong type", "{\n\"a\": 1}", 2, `"a" must be a string`},
		{"not an array", "{\"b\": {}}", 1, `"b" must be an array`},
		{"not an object", "[]", 1, "the file must be an object"},
		{"syntax", "{\n\"a\": \"x\",,}", 2, "not JSON"},
		{"cut short", "{\"a\":\n", 2, "not JSON: unexpected end of file"},
		{"trailing data", "{}\n\n{}", 3, "more data after the file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := read(c.src)
			var je *strictjson.Error
			require.True(t, errors.As(err, &je), "%v", err)
			require.Equal(t, c.line, je.Line, "%v", err)
			require.Contains(t, je.Msg, c.msg)
		})
	}
}
