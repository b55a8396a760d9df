package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// buildSoundgate builds this command into dir and returns the binary's path.
func buildSoundgate(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "soundgate")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestSecondGateCannotTakeTheSocket: a second gate (another data directory, so its
// log is not locked) started on the socket of a running one must not start. It
// once deleted the socket and answered on it, and then admitted a key that the
// first gate had admitted: the same effect twice.
func TestSecondGateCannotTakeTheSocket(t *testing.T) {
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	roles, err := servertest.WriteRoles(dir)
	require.NoError(t, err)
	sock := filepath.Join(dir, "gate.sock")
	// serve starts a gate; exited is closed when it has exited, with *waitErr set.
	serve := func(data string) (logs *bytes.Buffer, exited chan struct{}, waitErr *error) {
		logs, exited, waitErr = &bytes.Buffer{}, make(chan struct{}), new(error)
		cmd := exec.Command(bin, "serve", "--roles", roles, "--data", filepath.Join(dir, data), "--listen", "", "--unix", sock)
		cmd.Stdout, cmd.Stderr = logs, logs
		require.NoError(t, cmd.Start())
		go func() { *waitErr = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		return logs, exited, waitErr
	}
	serve("data-a")
	require.Eventually(t, func() bool { _, err := os.Stat(sock); return err == nil }, 10*time.Second, 10*time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admit := func() core.Answer {
		c, err := client.Dial(ctx, "unix:"+sock, servertest.AgentToken)
		require.NoError(t, err)
		defer c.Close()
		res, err := c.Admit(ctx, "r1", "wire-money", 1, client.AdmitOptions{})
		require.NoError(t, err)
		return res.Answer
	}
	op, err := client.Dial(ctx, "unix:"+sock, servertest.OperatorToken)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r1", 0)
	require.NoError(t, err)
	op.Close()
	require.Equal(t, core.AnswerAdmit, admit())

	logs, exited, waitErr := serve("data-b")
	select {
	case <-exited:
		require.Error(t, *waitErr, "the second gate exited 0")
		require.Contains(t, logs.String(), sock, "the second gate's error names the socket")
	case <-time.After(10 * time.Second):
		t.Fatalf("a second gate is serving on the socket of a running one:\n%s", logs)
	}
	require.Equal(t, core.AnswerDuplicate, admit(), "the key was admitted again")
}
