package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
)

// Strong tokens for the roles files below.
const (
	tokA = "Zq8vX2mR7tLw4nKp9sBd3hYc6fJg1uEa"
	tokB = "m4Ht9QwLz2Xc7VbN5kRj8PyD3sGf6aUe"
)

// TestRolesFileRefusesWhatWouldWiden: each of these was once accepted, and each
// widened a token's privilege or hid a mistake (an approver of every run through a
// misspelt or empty "runs", an agent made approver by a second "role"). Each is an
// error that names its line.
func TestRolesFileRefusesWhatWouldWiden(t *testing.T) {
	for _, c := range []struct {
		name, file string
		line       int
		says       string
	}{
		{"not json", `not json`, 1, "not JSON"},
		{"no tokens", `{}`, 0, "no tokens"},
		{"empty tokens", `{"tokens": []}`, 0, "no tokens"},
		{"unknown top-level field", `{"tokens": [], "token": []}`, 1, `unknown field "token"`},
		{"misspelt runs", "{\"tokens\": [\n{\"name\": \"a\", \"token\": \"" + tokA + "\", \"role\": \"approver\", \"run\": [\"r1\"]}]}", 2, `unknown field "run"`},
		{"runs empty", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "approver", "runs": []}]}`, 1, `"runs" must list`},
		{"runs null", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "approver", "runs": null}]}`, 1, `"runs" must be an array`},
		{"runs missing", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "operator"}]}`, 1, `"runs" must list`},
		{"runs twice", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "approver", "runs": ["r1"], "runs": []}]}`, 1, `"runs" is given twice`},
		{"role twice", "{\"tokens\": [{\"name\": \"a\", \"token\": \"" + tokA + "\",\n \"role\": \"agent\",\n \"runs\": [\"*\"],\n \"role\": \"approver\"}]}", 4, `"role" is given twice`},
		{"escaped duplicate key", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": ["*"], "ro\u006ce": "approver"}]}`, 1, "given twice"},
		{"tokens twice", `{"tokens": [], "tokens": []}`, 1, "given twice"},
		{"unknown role", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "admin", "runs": ["*"]}]}`, 1, `role "admin"`},
		{"no role", `{"tokens": [{"name": "a", "token": "` + tokA + `", "runs": ["*"]}]}`, 1, `no "role"`},
		{"no name", `{"tokens": [{"token": "` + tokA + `", "role": "agent", "runs": ["*"]}]}`, 1, `needs a "name"`},
		{"same name", "{\"tokens\": [{\"name\": \"a\", \"token\": \"" + tokA + "\", \"role\": \"agent\", \"runs\": [\"*\"]},\n{\"name\": \"a\", \"token\": \"" + tokB + "\", \"role\": \"agent\", \"runs\": [\"*\"]}]}", 2, "also on line 1"},
		{"same token", "{\"tokens\": [{\"name\": \"a\", \"token\": \"" + tokA + "\", \"role\": \"operator\", \"runs\": [\"*\"]},\n{\"name\": \"b\", \"token\": \"" + tokA + "\", \"role\": \"approver\", \"runs\": [\"*\"]}]}", 2, "same token"},
		{"token too short", `{"tokens": [{"name": "a", "token": "short", "role": "agent", "runs": ["*"]}]}`, 1, "16 to"},
		{"token a number", `{"tokens": [{"name": "a", "token": 12, "role": "agent", "runs": ["*"]}]}`, 1, "must be a string"},
		{"run pattern a number", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": [1]}]}`, 1, "must be a string"},
		{"bad run pattern", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": ["[x"]}]}`, 1, "bad run pattern"},
		{"empty run pattern", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": [""]}]}`, 1, "bad run pattern"},
		{"weak: 16 bytes", `{"tokens": [{"name": "a", "token": "0123456789abcdef", "role": "agent", "runs": ["*"]}]}`, 1, "weak (16 bytes)"},
		{"weak: one character", `{"tokens": [{"name": "a", "token": "` + strings.Repeat("x", 40) + `", "role": "agent", "runs": ["*"]}]}`, 1, "1 different characters"},
		{"weak: placeholder", `{"tokens": [{"name": "a", "token": "operator-demo-token-change-me-0123", "role": "operator", "runs": ["*"]}]}`, 1, "change-me"},
		{"trailing data", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": ["*"]}]} {}`, 1, "more after"},
		{"cut short", `{"tokens": [{"name": "a"`, 1, "not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs, err := server.ParseRoles([]byte(c.file), server.RolesOptions{})
			require.Nil(t, rs)
			require.ErrorIs(t, err, server.ErrRolesFile)
			var re *server.RolesError
			require.True(t, errors.As(err, &re), "%T", err)
			require.Equal(t, c.line, re.Line, "%v", err)
			require.Contains(t, err.Error(), c.says)
		})
	}
}

// TestRolesFileScopes: what a valid file grants, and nothing more.
func TestRolesFileScopes(t *testing.T) {
	rs, err := server.ParseRoles([]byte(`{"tokens": [
		{"name": "worker", "token": "`+tokA+`", "role": "agent", "runs": ["team-a-*", "solo"]},
		{"name": "alice", "token": "`+tokB+`", "role": "approver", "runs": ["*"]}]}`), server.RolesOptions{})
	require.NoError(t, err)
	c, ok := rs.Lookup(tokA)
	require.True(t, ok)
	require.Equal(t, "worker", c.Name)
	require.Equal(t, proto.RoleAgent, c.Role)
	for run, want := range map[core.RunID]bool{"team-a-1": true, "solo": true, "team-b-1": false, "solo2": false} {
		require.Equal(t, want, c.Allows(run), run)
	}
	c, ok = rs.Lookup(tokB)
	require.True(t, ok)
	require.True(t, c.Allows("anything"))
	_, ok = rs.Lookup(tokA[:len(tokA)-1])
	require.False(t, ok)
	require.False(t, (&server.Credential{Role: proto.RoleOperator}).Allows("r"), "a credential with no runs covers none")

	weak := `{"tokens": [{"name": "demo", "token": "agent-demo-token-change-me", "role": "agent", "runs": ["demo-*"]}]}`
	_, err = server.ParseRoles([]byte(weak), server.RolesOptions{})
	require.ErrorIs(t, err, server.ErrRolesFile)
	_, err = server.ParseRoles([]byte(weak), server.RolesOptions{AllowWeakTokens: true})
	require.NoError(t, err, "--allow-weak-tokens accepts the demo's tokens")
}

// TestRolesFileModes: a roles file that every user may write is refused (anyone could
// make themselves an operator); one that the group may write or others may read is
// accepted with a warning.
func TestRolesFileModes(t *testing.T) {
	file := `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": ["*"]}]}`
	for _, c := range []struct {
		mode    os.FileMode
		refused bool
		warned  bool
	}{
		{0o600, false, false},
		{0o400, false, false},
		{0o640, false, true},
		{0o644, false, true},
		{0o620, false, true},
		{0o664, false, true},
		{0o602, true, false},
		{0o666, true, false},
	} {
		p := filepath.Join(t.TempDir(), "roles.json")
		require.NoError(t, os.WriteFile(p, []byte(file), 0o600))
		require.NoError(t, os.Chmod(p, c.mode))
		rs, err := server.LoadRoles(p, server.RolesOptions{})
		if c.refused {
			require.ErrorIs(t, err, server.ErrRolesFile, "mode %04o", c.mode)
			require.Contains(t, err.Error(), p)
			continue
		}
		require.NoError(t, err, "mode %04o", c.mode)
		require.Equal(t, c.warned, len(rs.Warnings()) == 1, "mode %04o: warnings %v", c.mode, rs.Warnings())
	}
	_, err := server.LoadRoles(filepath.Join(t.TempDir(), "missing.json"), server.RolesOptions{})
	require.ErrorIs(t, err, server.ErrRolesFile)
}
