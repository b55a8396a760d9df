package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadmeWalkthrough runs the README's "Try it" session with the real binary and the
// example roles file: a durable gate, an admit, a gated effect held, a waiting sibling
// released by an approver, an agent refused when it tries to decide, a duplicate, and
// a restart that keeps every decision.
func TestReadmeWalkthrough(t *testing.T) {
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	sock := filepath.Join(dir, "gate.sock")
	roles, err := filepath.Abs("../../docs/examples/roles.json")
	require.NoError(t, err)

	serve := func() (*exec.Cmd, *bytes.Buffer) {
		var logs bytes.Buffer
		cmd := exec.Command(bin, "serve", "--roles", roles, "--allow-weak-tokens", "--data", filepath.Join(dir, "data"), "--listen", "", "--unix", sock)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { _, err := os.Stat(sock); return err == nil }, 10*time.Second, 10*time.Millisecond)
		return cmd, &logs
	}
	srv, logs := serve()
	defer func() { srv.Process.Kill(); srv.Wait() }()

	run := func(token string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{args[0], "--addr", "unix:" + sock}, args[1:]...)...)
		cmd.Env = append(os.Environ(), "SOUNDGATE_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return strings.TrimSpace(string(out)), code
	}
	const agent, approver, operator = "agent-demo-token-change-me", "approver-demo-token-change-me", "operator-demo-token-change-me"
	steps := []struct {
		token string
		args  []string
		out   string
		code  int
	}{
		{operator, []string{"open", "demo-1"}, "run demo-1 active epoch=1 created=true", 0},
		{agent, []string{"admit", "demo-1", "send-email"}, "admit epoch=1", 0},
		{agent, []string{"admit", "--gated", "--description", "Wire 120 EUR to ACME", "demo-1", "wire-money"}, "held epoch=1", 3},
		{agent, []string{"decide", "demo-1", "wire-money", "approve"}, "soundgate: refused: forbidden: the agent role may not call decide", 5},
		{agent, []string{"pending"}, "soundgate: refused: forbidden: the agent role may not call pending", 5},
		{approver, []string{"status", "demo-1", "wire-money"}, "run demo-1 active epoch=1 pending=[wire-money]\neffect wire-money held gated\ndescription: Wire 120 EUR to ACME", 0},
		{agent, []string{"admit", "demo-1", "not-mine"}, "held epoch=1", 3},
		{agent, []string{"admit", "other-run", "k"}, `soundgate: refused: forbidden: run "other-run" is outside the scope of token "demo-agent"`, 5},
	}
	for _, s := range steps {
		out, code := run(s.token, s.args...)
		require.Equal(t, s.out, out, "soundgate %v", s.args)
		require.Equal(t, s.code, code, "soundgate %v: exit code", s.args)
	}
	out, code := run(approver, "pending")
	require.Regexp(t, `^demo-1 wire-money age=[0-9]+s Wire 120 EUR to ACME$`, out, "the approver's inbox")
	require.Zero(t, code)

	// The sibling waits; the approver's decision releases it.
	type res struct {
		out  string
		code int
	}
	sibling := make(chan res, 1)
	go func() {
		out, code := run(agent, "admit", "--wait", "1m", "demo-1", "delete-branch")
		sibling <- res{out, code}
	}()
	require.Eventually(t, func() bool {
		out, _ := run(agent, "status", "demo-1", "delete-branch")
		return strings.Contains(out, "effect delete-branch held")
	}, 10*time.Second, 20*time.Millisecond)
	out, code = run(approver, "decide", "--reason", "invoice checked", "demo-1", "wire-money", "approve")
	require.Equal(t, "decided approve repeat=false", out)
	require.Zero(t, code)
	s := <-sibling
	require.Equal(t, res{"admit epoch=1", 0}, s)

	out, code = run(agent, "admit", "demo-1", "wire-money")
	require.Equal(t, "admit epoch=1", out)
	require.Zero(t, code)
	out, code = run(agent, "admit", "demo-1", "wire-money")
	require.Equal(t, "duplicate epoch=1", out)
	require.Equal(t, exitDup, code)

	// A SIGKILL and a restart on the same data: every decision is still there.
	require.NoError(t, srv.Process.Kill())
	srv.Wait()
	os.Remove(sock)
	srv, logs = serve()
	out, code = run(agent, "admit", "demo-1", "wire-money")
	require.Equal(t, "duplicate epoch=1", out, "after restart; server log:\n%s", logs)
	require.Equal(t, exitDup, code)
	out, _ = run(agent, "status", "demo-1", "not-mine")
	require.Equal(t, "run demo-1 active epoch=1 pending=[]\neffect not-mine released", out)
	out, code = run(operator, "cancel", "demo-1")
	require.Equal(t, "run demo-1 cancelled epoch=2", out)
	out, code = run(agent, "admit", "--epoch", "2", "demo-1", "not-mine")
	require.Equal(t, "denied (cancelled) epoch=2", out)
	require.Equal(t, exitDenied, code)

	// Usage errors.
	_, code = run(agent, "admit", "demo-1")
	require.Equal(t, exitUsage, code)
	_, code = run("", "admit", "demo-1", "k")
	require.Equal(t, exitUsage, code)
	_, code = run(agent, "admit", "-h")
	require.Equal(t, exitUsage, code, "admit -h must not exit 0 (perform the effect)")
}
