package mcpproxy

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParsePolicy: a valid policy parses into what it says.
func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy("p.json", []byte(`{
  "servers": {
    "fs": {"trusted": true, "tools": {"write_file": "gated", "read_file": "ungated"}},
    "mail": {"tools": {}}
  }
}`))
	require.NoError(t, err)
	require.Len(t, p.Servers, 2)
	require.True(t, p.Servers["fs"].Trusted)
	require.Equal(t, map[string]Mode{"write_file": Gated, "read_file": Ungated}, p.Servers["fs"].Tools)
	require.False(t, p.Servers["mail"].Trusted)
	require.Empty(t, p.Servers["mail"].Tools)
}

// TestPolicyCheckTools: a tool the policy names that the server does not have (a
// misspelt name) is an error naming its line; other servers' entries are not checked.
func TestPolicyCheckTools(t *testing.T) {
	p, err := ParsePolicy("p.json", []byte("{\"servers\": {\"fs\": {\"trusted\": true, \"tools\": {\n\"write_file\": \"gated\",\n\"read_secret\": \"gated\"}},\n\"other\": {\"tools\": {\"x\": \"gated\"}}}}"))
	require.NoError(t, err)
	require.NoError(t, p.CheckTools("fs", []string{"write_file", "read_secret", "ls"}))
	require.NoError(t, p.CheckTools("unnamed", []string{"a"}))
	err = p.CheckTools("fs", []string{"write_file", "read_secrets", "ls"})
	var pe *PolicyError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, ErrPolicy)
	require.Equal(t, 3, pe.Line)
	require.Contains(t, err.Error(), `p.json line 3: tool "read_secret" of server "fs" is not a tool of the server (it has: ls, read_secrets, write_file)`)
}

// TestParsePolicyRefuses: every leniency that could widen privilege is an error
// naming the line of the fault.
func TestParsePolicyRefuses(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"unknown top field", "{\n \"servers\": {},\n \"default\": \"ungated\"\n}", 3, `unknown field "default"`},
		{"unknown server field", "{\"servers\": {\n \"fs\": {\n  \"tool\": {\"w\": \"ungated\"}}}}", 3, `unknown field "tool" in server "fs"`},
		{"duplicate tool", "{\"servers\": {\"fs\": {\"tools\": {\n\"w\": \"gated\",\n\"w\": \"ungated\"}}}}", 3, `"w" is given twice`},
		{"duplicate server", "{\"servers\": {\n\"fs\": {},\n\"fs\": {\"trusted\": true}}}", 3, `"fs" is given twice`},
		{"duplicate trusted", "{\"servers\": {\"fs\": {\"trusted\": false,\n\"trusted\": true}}}", 2, `"trusted" is given twice`},
		{"typo in mode", "{\"servers\": {\"fs\": {\"tools\": {\n\"w\": \"ungate\"}}}}", 2, `must be "gated" or "ungated", not "ungate"`},
		{"mode of wrong type", "{\"servers\": {\"fs\": {\"tools\": {\"w\": false}}}}", 1, `not false`},
		{"trusted as string", "{\"servers\": {\"fs\": {\n\"trusted\": \"yes\"}}}", 2, `must be true or false`},
		{"wildcard tool", "{\"servers\": {\"fs\": {\"tools\": {\n\"*\": \"ungated\"}}}}", 2, `wildcards are not supported`},
		{"wildcard server", "{\"servers\": {\n\"*\": {\"trusted\": true}}}", 2, `wildcards are not supported`},
		{"no servers", "{}", 1, `no "servers" field`},
		{"not JSON", "{\n\"servers\": {,}}", 2, `not JSON`},
		{"trailing data", "{\"servers\": {}}\n{}", 2, `data after`},
		{"truncated", "{\"servers\": {", 1, `end of file`},
		{"array", "[]", 1, `must be an object`},
		{"null server", "{\"servers\": {\"fs\": null}}", 1, `must be an object`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePolicy("p.json", []byte(c.src))
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrPolicy), "%v", err)
			var pe *PolicyError
			require.True(t, errors.As(err, &pe))
			require.Equal(t, c.line, pe.Line, "%v", err)
			require.Contains(t, err.Error(), c.msg)
			require.Contains(t, err.Error(), "p.json line")
		})
	}
}

// TestPolicyMode: the policy's entry decides; else a trusted server's read-only
// annotation ungates; everything else is gated (fail closed).
func TestPolicyMode(t *testing.T) {
	p := &Policy{Servers: map[string]ServerPolicy{
		"trusted": {Trusted: true, Tools: map[string]Mode{"rm": Ungated, "ls": Gated}},
		"plain":   {Tools: map[string]Mode{"cat": Ungated}},
	}}
	ro := &Annotations{ReadOnly: true}
	for _, c := range []struct {
		server, tool string
		ann          *Annotations
		want         Mode
	}{
		{"trusted", "rm", nil, Ungated},                                            // the policy names it
		{"trusted", "ls", ro, Gated},                                               // the policy beats the annotation
		{"trusted", "cat", ro, Ungated},                                            // a trusted server's read-only hint
		{"trusted", "cat", &Annotations{ReadOnly: true, Destructive: true}, Gated}, // contradictory hints: gated
		{"trusted", "cat", &Annotations{}, Gated},                                  // not read-only
		{"trusted", "cat", nil, Gated},                                             // no annotations
		{"plain", "cat", nil, Ungated},
		{"plain", "dog", ro, Gated}, // an untrusted server's hints are ignored
		{"unknown", "cat", ro, Gated},
	} {
		got, why := p.Mode(c.server, c.tool, c.ann)
		require.Equal(t, c.want, got, "%s/%s: %s", c.server, c.tool, why)
		require.NotEmpty(t, why)
	}
	var zero Policy
	got, _ := zero.Mode("any", "tool", ro)
	require.Equal(t, Gated, got)
}

// TestLoadPolicy: no path is the zero policy; a missing file is an error that is not
// ErrPolicy (an I/O failure, not a fault of the file).
func TestLoadPolicy(t *testing.T) {
	p, err := LoadPolicy("")
	require.NoError(t, err)
	require.Empty(t, p.Servers)
	_, err = LoadPolicy("/nonexistent/policy.json")
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrPolicy))
}
