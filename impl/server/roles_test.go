package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
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
		{"name with a line feed", `{"tokens": [{"name": "a\nb", "token": "` + tokA + `", "role": "agent", "runs": ["*"]}]}`, 1, "token name"},
		{"name over 128 bytes", `{"tokens": [{"name": "` + strings.Repeat("n", 129) + `", "token": "` + tokA + `", "role": "agent", "runs": ["*"]}]}`, 1, "over the limit of 128"},
		{"empty run pattern", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": [""]}]}`, 1, "bad run pattern"},
		{"weak: 16 bytes", `{"tokens": [{"name": "a", "token": "0123456789abcdef", "role": "agent", "runs": ["*"]}]}`, 1, "weak (16 bytes)"},
		{"weak: one character", `{"tokens": [{"name": "a", "token": "` + strings.Repeat("x", 40) + `", "role": "agent", "runs": ["*"]}]}`, 1, "1 different characters"},
		{"weak: placeholder", `{"tokens": [{"name": "a", "token": "operator-demo-token-change-me-0123", "role": "operator", "runs": ["*"]}]}`, 1, "change-me"},
		{"trailing data", `{"tokens": [{"name": "a", "token": "` + tokA + `", "role": "agent", "runs": ["*"]}]} {}`, 1, "more data after"},
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
	for run, want := range map[core.RunID]bool{"team-a-1": true, "solo": true, "team-b-1": false, "solo2": false,
		"team-a-x/y": false} {
		require.Equal(t, want, c.Allows(run), run)
	}
	c, ok = rs.Lookup(tokB)
	require.True(t, ok)
	for _, run := range []core.RunID{"anything", "thread/42", "/", "a/b/c", "\\", "*"} {
		require.True(t, c.Allows(run), "%q: \"*\" is every run", run)
	}
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

// TestSetRolesClosesWhatItRevokes: a reload of the roles closes the connections of
// the tokens it removed or changed, and only those; hellos from then on see the new
// roles; and a connection that was revoked is refused whatever it sends.
func TestSetRolesClosesWhatItRevokes(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agent, scoped, op := g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ScopedToken), g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r1", 0)
	require.NoError(t, err)

	const newApprover = "Pq7Lm2Xz9Rt4Wv6Ks3Nb8Hd5Gf1Jc0Ya"
	rs, err := server.ParseRoles([]byte(fmt.Sprintf(`{"tokens": [
		{"name": "agent", "token": %q, "role": "agent", "runs": ["*"]},
		{"name": "ops", "token": %q, "role": "operator", "runs": ["ops-*"]},
		{"name": "bob", "token": %q, "role": "approver", "runs": ["*"]}]}`,
		servertest.AgentToken, servertest.OperatorToken, newApprover)), server.RolesOptions{})
	require.NoError(t, err)
	closed, err := g.Server.SetRoles(rs)
	require.NoError(t, err)
	require.Equal(t, 2, closed, "the scoped agent (removed) and the operator (runs changed)")

	_, err = agent.Status(ctx, "r1", "")
	require.NoError(t, err, "an unchanged token keeps its connection")
	for name, c := range map[string]interface {
		Status(context.Context, string, string) (proto.StatusResult, error)
	}{"scoped": scoped, "operator": op} {
		_, err := c.Status(ctx, "r1", "")
		require.Error(t, err, "%s: a revoked connection still answered", name)
	}
	_, err = dial(t, "unix:"+g.Unix, servertest.ScopedToken)
	require.ErrorIs(t, err, proto.ErrUnauthenticated, "a removed token")
	op2, err := dial(t, "unix:"+g.Unix, servertest.OperatorToken)
	require.NoError(t, err)
	_, err = op2.Open(ctx, "ops-1", 0)
	require.NoError(t, err)
	_, err = op2.Open(ctx, "r2", 0)
	require.ErrorIs(t, err, proto.ErrForbidden, "the operator's new scope")
	_, err = dial(t, "unix:"+g.Unix, newApprover)
	require.NoError(t, err, "an added token")

	_, err = g.Server.SetRoles(nil)
	require.ErrorIs(t, err, server.ErrNoRoles)
}
