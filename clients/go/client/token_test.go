package client_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
)

// TestToken: the order in which a command line's credential is found, and the
// token files that are refused.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		return p
	}
	good, other := file("good", "from-file\n"), file("other", "from-env-file")
	for _, c := range []struct {
		name            string
		value, file     string
		env, envFile    string
		want, wantError string
	}{
		{name: "nothing"},
		{name: "flag first", value: "from-flag", file: good, env: "from-env", envFile: other, want: "from-flag"},
		{name: "then the flag's file", file: good, env: "from-env", envFile: other, want: "from-file"},
		{name: "then the variable", env: "from-env", envFile: other, want: "from-env"},
		{name: "then the variable's file", envFile: other, want: "from-env-file"},
		{name: "crlf cut", file: file("crlf", "tok\r\n"), want: "tok"},
		{name: "empty file", file: file("empty", "\n"), wantError: "one line"},
		{name: "two lines", file: file("two", "a\nb\n"), wantError: "one line"},
		{name: "missing file", file: filepath.Join(dir, "missing"), wantError: "token file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SOUNDGATE_TEST_TOKEN", c.env)
			t.Setenv("SOUNDGATE_TEST_TOKEN_FILE", c.envFile)
			got, err := client.Token(c.value, c.file, "SOUNDGATE_TEST_TOKEN")
			if c.wantError != "" {
				require.ErrorContains(t, err, c.wantError)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}
