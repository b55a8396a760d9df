package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestStatusShowsAgentsIdsEscaped: through the real command, a key an agent chose
// cannot forge a line of `soundgate status` (a fake "cancelled") nor hide on screen,
// and --json prints the protocol's own JSON.
func TestStatusShowsAgentsIdsEscaped(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	forged, hidden := "k\nrun r1 cancelled epoch=2 pending=[]", "\u202eyenom-eriw"
	for run, key := range map[string]string{"r1": forged, "r2": hidden} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
		_, err = agent.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: true})
		require.NoError(t, err)
	}
	status := func(args ...string) string {
		out := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(out)
		require.NoError(t, err)
		stdout := os.Stdout
		os.Stdout = f
		code := statusMain(append([]string{"--addr", "unix:" + g.Unix, "--token", servertest.ApproverToken}, args...))
		os.Stdout = stdout
		require.NoError(t, f.Close())
		require.Equal(t, exitOK, code)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return string(b)
	}
	out := status("r1")
	require.Equal(t, "run r1 active epoch=1 pending=["+strconv.Quote(forged)+"]\n", out)
	out = status("r2", hidden)
	require.Equal(t, 2, strings.Count(out, "\n"), out)
	require.NotContains(t, out, "\u202e")
	require.Contains(t, out, `pending=["\u202eyenom-eriw"]`)
	require.Contains(t, out, `effect "\u202eyenom-eriw" held gated`)

	var wire map[string]any
	require.NoError(t, json.Unmarshal([]byte(status("--json", "r1")), &wire))
	require.Equal(t, "r1", wire["run"])
	require.Equal(t, "active", wire["status"], "--json prints the protocol's names: %v", wire)
	require.Equal(t, []any{forged}, wire["pending"])
}

// TestConnectionRefusalIsARefusal: a gate that refuses the connection itself
// (overloaded: every connection taken) is a refusal of the gate, exit 5 as every
// other, not a failure (exit 1), and says which.
func TestConnectionRefusalIsARefusal(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 1}})
	g.Dial(t, servertest.AgentToken) // the only connection
	errOut := filepath.Join(t.TempDir(), "stderr")
	f, err := os.Create(errOut)
	require.NoError(t, err)
	stderr := os.Stderr
	os.Stderr = f
	code := statusMain([]string{"--addr", "unix:" + g.Unix, "--token", servertest.OperatorToken, "r1"})
	os.Stderr = stderr
	require.NoError(t, f.Close())
	b, err := os.ReadFile(errOut)
	require.NoError(t, err)
	require.Equal(t, exitRefused, code, "%s", b)
	require.True(t, strings.Contains(string(b), "overloaded"), "%s", b)
}

// TestHelpShowsNoToken: no command's -h prints a credential from the environment
// (a flag's default is printed by -h, and once was $SOUNDGATE_TOKEN), and every
// command that dials the gate offers --token-file.
func TestHelpShowsNoToken(t *testing.T) {
	const secret = "secret-token-from-the-environment-0123"
	for _, env := range []string{"SOUNDGATE_TOKEN", "SOUNDGATE_OPERATOR_TOKEN", "SOUNDGATE_APPROVER_TOKEN"} {
		t.Setenv(env, secret)
	}
	require.NotEmpty(t, commands)
	for name, c := range commands {
		out := filepath.Join(t.TempDir(), "out")
		f, err := os.Create(out)
		require.NoError(t, err)
		stdout, stderr := os.Stdout, os.Stderr
		os.Stdout, os.Stderr = f, f
		c.run([]string{"-h"})
		os.Stdout, os.Stderr = stdout, stderr
		require.NoError(t, f.Close())
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		help := string(b)
		require.NotEmpty(t, help, "%s -h", name)
		require.NotContains(t, help, secret, "%s -h prints the token", name)
		if strings.Contains(help, "\n  -token string") {
			require.Contains(t, help, "-token-file", "%s takes --token but not --token-file", name)
		}
	}
}
