package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

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
