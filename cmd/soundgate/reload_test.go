package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// syncBuffer is a process's output, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuffer) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestSighupReloadsTheRoles: through the real binary, SIGHUP with a roles file that
// does not pass (a typo) keeps the roles the gate has and logs why; with one that
// passes, the new tokens hold and the removed ones are refused.
func TestSighupReloadsTheRoles(t *testing.T) {
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	roles, err := servertest.WriteRoles(dir)
	require.NoError(t, err)
	sock := filepath.Join(dir, "gate.sock")
	var logs syncBuffer
	cmd := exec.Command(bin, "serve", "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	require.Eventually(t, func() bool { _, err := os.Stat(sock); return err == nil }, 10*time.Second, 10*time.Millisecond)

	hello := func(token string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := client.Dial(ctx, "unix:"+sock, token)
		if err == nil {
			c.Close()
		}
		return err
	}
	reload := func(content, logged string) {
		t.Helper()
		require.NoError(t, os.WriteFile(roles, []byte(content), 0o600))
		require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), logged) }, 10*time.Second, 10*time.Millisecond, "%s", logs.String())
	}

	typo := strings.Replace(servertest.RolesJSON, `"runs"`, `"run"`, 1)
	reload(typo, "roles reload refused")
	require.Contains(t, logs.String(), `unknown field \"run\"`)
	require.NoError(t, hello(servertest.ScopedToken), "the old roles still hold")

	const bob = "Pq7Lm2Xz9Rt4Wv6Ks3Nb8Hd5Gf1Jc0Ya"
	reload(fmt.Sprintf(`{"tokens": [{"name": "bob", "token": %q, "role": "operator", "runs": ["*"]}]}`, bob), "roles reloaded")
	require.NoError(t, hello(bob), "a token the reload added")
	require.ErrorIs(t, hello(servertest.ScopedToken), proto.ErrUnauthenticated, "a token the reload removed")
}
