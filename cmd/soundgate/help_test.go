package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
