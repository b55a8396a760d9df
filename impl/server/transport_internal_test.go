package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/node"
)

// TestTransport: a server serves with the transport its Config names (the event loop
// where the platform has one), and SOUNDGATE_TEST_IO (the suite's switch, read by
// servertest) names the same choice.
func TestTransport(t *testing.T) {
	b, err := os.ReadFile("servertest/roles.json") // the fixture (servertest imports this package)
	require.NoError(t, err)
	rs, err := ParseRoles(b, RolesOptions{})
	require.NoError(t, err)
	for _, goroutines := range []bool{false, true} {
		n := node.New(node.Config{})
		s, err := New(Config{Roles: rs, Node: n, Goroutines: goroutines})
		require.NoError(t, err)
		sock := filepath.Join(t.TempDir(), "s")
		l, err := net.Listen("unix", sock)
		require.NoError(t, err)
		go s.Serve(l)
		c, err := client.Dial(context.Background(), sock, "agent-token-0123456789abcdefghij")
		require.NoError(t, err)
		s.mu.Lock()
		require.Equal(t, !goroutines && loopAvailable, s.loop != nil, "goroutines=%t", goroutines)
		for ss := range s.sessions {
			require.Equal(t, s.loop == nil, ss.interrupt != nil, "a session not served by the transport in use")
		}
		s.mu.Unlock()
		c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		require.NoError(t, s.Shutdown(ctx))
		cancel()
		n.Close()
	}
	switch v := os.Getenv("SOUNDGATE_TEST_IO"); v {
	case "", "loop", "goroutines":
	default:
		t.Fatalf("SOUNDGATE_TEST_IO=%q: want loop or goroutines", v)
	}
}
