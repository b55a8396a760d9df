package server_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/server"
)

// TestListenUnixTakesOnlyADeadSocket: a gate replaces only a socket that nobody
// answers on; whatever else is at the path stays as it was, and the gate does not
// start. (serve --unix once deleted a file, a directory, the roles file or a live
// gate's socket, and a second gate then admitted keys the first had admitted.)
func TestListenUnixTakesOnlyADeadSocket(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, path string) // what is at path before
		taken bool
	}{
		{"nothing", func(*testing.T, string) {}, true},
		{"a socket nobody answers on", func(t *testing.T, p string) {
			l, err := net.Listen("unix", p)
			require.NoError(t, err)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			require.NoError(t, l.Close())
		}, true},
		{"a regular file", func(t *testing.T, p string) { require.NoError(t, os.WriteFile(p, []byte("roles"), 0o600)) }, false},
		{"an empty directory", func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o700)) }, false},
		{"a symbolic link", func(t *testing.T, p string) { require.NoError(t, os.Symlink("/nonexistent", p)) }, false},
		{"a socket a process answers on", func(t *testing.T, p string) {
			l, err := net.Listen("unix", p)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
		}, false},
		{"a socket another gate holds", func(t *testing.T, p string) {
			l, err := server.ListenUnix(p)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "gate.sock")
			c.setup(t, p)
			before, _ := os.Lstat(p)
			l, err := server.ListenUnix(p)
			if c.taken {
				require.NoError(t, err)
				st, err := os.Lstat(p)
				require.NoError(t, err)
				require.NotZero(t, st.Mode()&os.ModeSocket)
				require.NoError(t, l.Close())
				l, err = server.ListenUnix(p) // the lock went with the listener
				require.NoError(t, err, "after Close")
				require.NoError(t, l.Close())
				return
			}
			require.ErrorIs(t, err, server.ErrSocketInUse)
			require.Contains(t, err.Error(), p)
			after, err := os.Lstat(p)
			require.NoError(t, err, "what was at the path is gone")
			require.True(t, os.SameFile(before, after), "what was at the path was replaced")
		})
	}
}
