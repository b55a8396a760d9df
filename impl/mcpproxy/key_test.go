package mcpproxy

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCanonicalJSON: equal values, equal bytes, whatever the order and whitespace.
func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"b": 1, "a": [true, null, {"d": "x", "c": 1.50}]}`: `{"a":[true,null,{"c":1.50,"d":"x"}],"b":1}`,
		" \n{ }\t":                      `{}`,
		``:                              `{}`,
		`{"s":"<&>\u00e9\n"}`:           `{"s":"<&>é\n"}`,
		`{"\u0062":1,"a":2}`:            `{"a":2,"b":1}`,
		`[]`:                            `[]`,
		`"x"`:                           `"x"`,
		`{"a":{"z":0,"y":{"x":false}}}`: `{"a":{"y":{"x":false},"z":0}}`,
	} {
		got, err := CanonicalJSON([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, string(got), in)
	}
	a, _ := CanonicalJSON([]byte(`{"path":"/tmp/x","content":"hi"}`))
	b, _ := CanonicalJSON([]byte(`{ "content" : "hi" , "path" : "/tmp/x" }`))
	require.Equal(t, a, b)
}

// TestCanonicalJSONRefuses: what the upstream might read two ways is an ErrBadCall.
func TestCanonicalJSONRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"duplicate":         `{"a":1,"a":2}`,
		"duplicate escaped": `{"a":1,"\u0061":2}`,
		"not JSON":          `{"a":}`,
		"trailing":          `{} {}`,
		"invalid UTF-8":     "{\"a\":\"\xff\"}",
		"too deep":          strings.Repeat("[", ArgsDepthMax+2) + strings.Repeat("]", ArgsDepthMax+2),
		"truncated":         `{"a":[1,2`,
	} {
		_, err := CanonicalJSON([]byte(in))
		require.Error(t, err, name)
		require.True(t, errors.Is(err, ErrBadCall), name)
	}
}

// TestDigestKey: the key depends on server, tool and arguments, unambiguously, and on
// nothing else.
func TestDigestKey(t *testing.T) {
	k := DigestKey("fs", "write", []byte(`{"a":1}`))
	require.Equal(t, k, DigestKey("fs", "write", []byte(`{"a":1}`)))
	require.True(t, strings.HasPrefix(k, "mcp:"))
	require.Len(t, k, len("mcp:")+64)
	for _, other := range []string{
		DigestKey("fs2", "write", []byte(`{"a":1}`)),
		DigestKey("fs", "write2", []byte(`{"a":1}`)),
		DigestKey("fs", "write", []byte(`{"a":2}`)),
		DigestKey("f", "swrite", []byte(`{"a":1}`)), // the same bytes run together: length prefixes tell them apart
	} {
		require.NotEqual(t, k, other)
	}
}

// TestCallTarget: _meta names the run and the key; else --run and the digest; a bad
// _meta value is refused, never guessed around.
func TestCallTarget(t *testing.T) {
	args := []byte(`{"b":2,"a":1}`)
	canon, _ := CanonicalJSON(args)
	tg, err := CallTarget(nil, "r1", "fs", "w", args)
	require.NoError(t, err)
	require.Equal(t, Target{Run: "r1", Key: DigestKey("fs", "w", canon)}, tg)

	tg, err = CallTarget(map[string]any{MetaRun: "r2", MetaKey: "k"}, "r1", "fs", "w", args)
	require.NoError(t, err)
	require.Equal(t, Target{Run: "r2", Key: "k"}, tg)

	for name, c := range map[string]struct {
		meta map[string]any
		run  string
	}{
		"no run":         {nil, ""},
		"run not string": {map[string]any{MetaRun: 7.0}, "r1"},
		"empty run":      {map[string]any{MetaRun: ""}, "r1"},
		"run too long":   {map[string]any{MetaRun: strings.Repeat("r", 129)}, "r1"},
		"key too long":   {map[string]any{MetaKey: strings.Repeat("k", 257)}, "r1"},
		"key not string": {map[string]any{MetaKey: []any{"k"}}, "r1"},
		"key not UTF-8":  {map[string]any{MetaKey: "\xff"}, "r1"},
	} {
		_, err := CallTarget(c.meta, c.run, "fs", "w", args)
		require.Error(t, err, name)
		require.True(t, errors.Is(err, ErrBadCall), name)
	}
	_, err = CallTarget(nil, "r1", "fs", "w", []byte(`{"a":1,"a":1}`))
	require.True(t, errors.Is(err, ErrBadCall))
}
