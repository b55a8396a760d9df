package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/mcpproxy"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/stretchr/testify/require"
)

// filesystemServer is the real upstream of these tests, as ci/mcp/install.sh installs
// it: @modelcontextprotocol/server-filesystem from npm.
func filesystemServer(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../ci/mcp/upstream/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	require.NoError(t, err)
	_, serr := os.Stat(p)
	_, nerr := exec.LookPath("node")
	if serr != nil || nerr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the real MCP upstream is not installed (%v, node: %v): run ci/mcp/install.sh (make test does)", serr, nerr)
		}
		t.Skipf("NOT RUN: the real MCP upstream is not installed (%v, node: %v); run ci/mcp/install.sh, or make test", serr, nerr)
	}
	return p
}

// proxyGate is a gate with an open run, an approver, and an agent token file.
type proxyGate struct {
	g         *servertest.Gate
	approver  *client.Client
	agent     *client.Client
	tokenFile string
}

func startProxyGate(t *testing.T, dir, run string) *proxyGate {
	t.Helper()
	pg := &proxyGate{g: servertest.Start(t, servertest.Options{})}
	_, err := pg.g.Dial(t, servertest.OperatorToken).Open(context.Background(), run, 0)
	require.NoError(t, err)
	pg.approver = pg.g.Dial(t, servertest.ApproverToken)
	pg.agent = pg.g.Dial(t, servertest.AgentToken)
	pg.tokenFile = filepath.Join(dir, "agent.token")
	require.NoError(t, os.WriteFile(pg.tokenFile, []byte(servertest.AgentToken+"\n"), 0o600))
	return pg
}

// effect is the gate's status of key in run.
func (pg *proxyGate) effect(t *testing.T, run, key string) core.EffectStatus {
	st, err := pg.agent.Status(context.Background(), run, key)
	require.NoError(t, err)
	if st.Effect == nil {
		return core.EffectAbsent
	}
	return st.Effect.Status
}

func fsKey(t *testing.T, tool string, args any) string {
	b, err := json.Marshal(args)
	require.NoError(t, err)
	c, err := mcpproxy.CanonicalJSON(b)
	require.NoError(t, err)
	return mcpproxy.DigestKey("filesystem", tool, c)
}

func toolText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMCPProxyRealProcess: the built binary between a Go SDK host (stdio) and the real
// filesystem server from npm. The server's tool list passes through unchanged; a
// read-only tool of the trusted server runs at once; write_file is held until an
// approver approves, performed once, and its replay is answered from the record: the
// file is not written again.
func TestMCPProxyRealProcess(t *testing.T) {
	fsJS := filesystemServer(t)
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	files := filepath.Join(dir, "files")
	require.NoError(t, os.Mkdir(files, 0o700))
	files, _ = filepath.EvalSymlinks(files)
	const run = "mcp-1"
	pg := startProxyGate(t, dir, run)
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"servers": {"filesystem": {"trusted": true}}}`), 0o600))

	var stderr servertest.SyncBuffer
	cmd := exec.Command(bin, "mcp-proxy", "--run", run, "--gate-unix", pg.g.Unix, "--token-file", pg.tokenFile,
		"--policy", policy, "--server", "filesystem", "--progress-every", "200ms", "--", "node", fsJS, files)
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, err := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "proxy stderr:\n%s", &stderr)
	defer host.Close()

	// The tools pass through unchanged: the same tools as the server gives directly (in
	// the SDK's order, by name, where the server lists them in its own).
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: exec.Command("node", fsJS, files)}, nil)
	require.NoError(t, err)
	want, err := direct.ListTools(ctx, nil)
	require.NoError(t, err)
	direct.Close()
	got, err := host.ListTools(ctx, nil)
	require.NoError(t, err)
	byName := func(ts []*mcp.Tool) string {
		m := map[string]*mcp.Tool{}
		for _, tl := range ts {
			m[tl.Name] = tl
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	require.Len(t, got.Tools, len(want.Tools))
	require.JSONEq(t, byName(want.Tools), byName(got.Tools))

	// write_file: held (gated: not read-only), nothing written, until approved.
	target := filepath.Join(files, "a.txt")
	args := map[string]any{"path": target, "content": "hello"}
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		r, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: args})
		done <- answer{r, err}
	}()
	key := fsKey(t, "write_file", args)
	require.Eventually(t, func() bool { return pg.effect(t, run, key) == core.EffectHeld }, 20*time.Second, 10*time.Millisecond,
		"proxy stderr:\n%s", &stderr)
	time.Sleep(500 * time.Millisecond)
	_, err = os.Stat(target)
	require.True(t, errors.Is(err, os.ErrNotExist), "B1: the file was written before the decision")

	// A read of the trusted server is not gated, but it waits too: the run is paused.
	readDone := make(chan answer, 1)
	go func() {
		r, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "list_allowed_directories", Arguments: map[string]any{}})
		readDone <- answer{r, err}
	}()
	readKey := fsKey(t, "list_allowed_directories", map[string]any{})
	require.Eventually(t, func() bool { return pg.effect(t, run, readKey) == core.EffectHeld }, 20*time.Second, 10*time.Millisecond)

	_, err = pg.approver.Decide(ctx, run, key, core.Approve)
	require.NoError(t, err)
	a := <-done
	require.NoError(t, a.err)
	require.False(t, a.res.IsError, toolText(a.res))
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
	ra := <-readDone
	require.NoError(t, ra.err)
	require.Contains(t, toolText(ra.res), files)

	// The replay is answered from the record: the file, changed meanwhile, stays as it is.
	require.NoError(t, os.WriteFile(target, []byte("changed"), 0o600))
	r, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: args})
	require.NoError(t, err)
	require.Equal(t, toolText(a.res), toolText(r))
	require.Equal(t, "duplicate", r.Meta["soundgate/answer"])
	b, _ = os.ReadFile(target)
	require.Equal(t, "changed", string(b), "B3: the replay wrote the file again")
	st, err := pg.agent.Status(ctx, run, key)
	require.NoError(t, err)
	require.Equal(t, core.EffectCompleted, st.Effect.Status)
	require.Equal(t, core.OutcomeOK, st.Effect.Outcome)
}

// rawProxy is the binary started with pipes for a host that writes lines itself.
type rawProxy struct {
	cmd    *exec.Cmd
	in     interface{ Write([]byte) (int, error) }
	close  func() error
	out    *bufio.Reader
	stderr *servertest.SyncBuffer
	exited chan error
}

func startRawProxy(t *testing.T, bin string, args ...string) *rawProxy {
	t.Helper()
	rp := &rawProxy{cmd: exec.Command(bin, append([]string{"mcp-proxy"}, args...)...), stderr: &servertest.SyncBuffer{}, exited: make(chan error, 1)}
	in, err := rp.cmd.StdinPipe()
	require.NoError(t, err)
	out, err := rp.cmd.StdoutPipe()
	require.NoError(t, err)
	rp.in, rp.close, rp.out = in, in.Close, bufio.NewReader(out)
	rp.cmd.Stderr = rp.stderr
	require.NoError(t, rp.cmd.Start())
	go func() { rp.exited <- rp.cmd.Wait() }()
	t.Cleanup(func() { rp.cmd.Process.Kill(); <-rp.exited })
	return rp
}

// send writes a line and, unless want is "", checks the next line answered contains it.
func (rp *rawProxy) send(t *testing.T, line, want string) {
	t.Helper()
	_, err := rp.in.Write([]byte(line + "\n"))
	require.NoError(t, err)
	if want == "" {
		return
	}
	got := make(chan string, 1)
	go func() { l, _ := rp.out.ReadString('\n'); got <- l }()
	select {
	case l := <-got:
		require.Contains(t, l, want, "answer to %s; stderr:\n%s", line, rp.stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer to %s; stderr:\n%s", line, rp.stderr)
	}
}

const rawInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestMCPProxyRawHost: the binary, driven by raw lines: a malformed line and an unknown
// method get JSON-RPC errors and the session goes on; a host that disconnects while a
// write is held makes the proxy exit 0, and a later approval writes nothing.
func TestMCPProxyRawHost(t *testing.T) {
	fsJS := filesystemServer(t)
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	files := filepath.Join(dir, "files")
	require.NoError(t, os.Mkdir(files, 0o700))
	files, _ = filepath.EvalSymlinks(files)
	const run = "mcp-raw"
	pg := startProxyGate(t, dir, run)
	rp := startRawProxy(t, bin, "--run", run, "--gate-unix", pg.g.Unix, "--token-file", pg.tokenFile, "--server", "filesystem",
		"--", "node", fsJS, files)
	rp.send(t, rawInit, `"id":1,"result"`)
	rp.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	rp.send(t, `{"jsonrpc":"2.0","id":2,`, `"id":null,"error":{"code":-32700`)
	rp.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/nonesuch","params":{}}`, `"id":3,"error":{"code":-32601`)
	rp.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, `"id":4,"result":{}`)

	target := filepath.Join(files, "b.txt")
	args := map[string]any{"content": "never", "path": target}
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
		"params": map[string]any{"name": "write_file", "arguments": args}})
	rp.send(t, string(line), "")
	key := fsKey(t, "write_file", args)
	require.Eventually(t, func() bool { return pg.effect(t, run, key) == core.EffectHeld }, 20*time.Second, 10*time.Millisecond,
		"stderr:\n%s", rp.stderr)
	require.NoError(t, rp.close()) // the host goes away mid-hold
	select {
	case err := <-rp.exited:
		require.NoError(t, err, "the proxy's exit; stderr:\n%s", rp.stderr)
		rp.exited <- err // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatalf("the proxy did not exit after the host left; stderr:\n%s", rp.stderr)
	}
	_, err := pg.approver.Decide(context.Background(), run, key, core.Approve)
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	_, err = os.Stat(target)
	require.True(t, errors.Is(err, os.ErrNotExist), "a call whose host left was forwarded")
}

// TestMCPProxyUsage: usage errors exit 2 with a clear message, a run that is not open
// exits 5, an upstream that does not start exits 1; none of them forwards anything.
func TestMCPProxyUsage(t *testing.T) {
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	pg := startProxyGate(t, dir, "open-run")
	op := pg.g.Dial(t, servertest.OperatorToken)
	_, err := op.Cancel(context.Background(), "cancelled-run")
	require.NoError(t, err)
	badPolicy := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(badPolicy, []byte("{\"servers\": {\n  \"fs\": {\"tools\": {\"write_file\": \"ungate\"}}}}\n"), 0o600))
	gate := []string{"--gate-unix", pg.g.Unix, "--token-file", pg.tokenFile}
	shortToken, hostToken := filepath.Join(dir, "short.token"), filepath.Join(dir, "host.token")
	require.NoError(t, os.WriteFile(shortToken, []byte("short\n"), 0o600))
	require.NoError(t, os.WriteFile(hostToken, []byte("host-token-0123456789abcdef\n"), 0o600))
	for _, c := range []struct {
		args []string
		env  []string
		code int
		out  string
	}{
		{[]string{"-h"}, nil, exitUsage, "Usage: soundgate mcp-proxy"},
		{[]string{"--run", "open-run"}, nil, exitUsage, "no upstream command"},
		{[]string{"--gate", "x:1", "--gate-unix", "/y", "--", "true"}, nil, exitUsage, "not both"},
		{append([]string{"--run", "open-run", "--policy", badPolicy}, append(gate, "--", "true")...), nil, exitUsage, "bad.json line 2"},
		{[]string{"--run", "open-run", "--gate-unix", pg.g.Unix, "--", "true"}, []string{"SOUNDGATE_TOKEN=", "SOUNDGATE_TOKEN_FILE="}, exitUsage, "no credential"},
		{append([]string{"--run", "never-opened"}, append(gate, "--", "true")...), nil, exitRefused, "unknown run"},
		{append([]string{"--run", "cancelled-run"}, append(gate, "--", "true")...), nil, exitRefused, "is cancelled, not active"},
		{[]string{"--run", "open-run", "--gate-unix", pg.g.Unix, "--", "true"}, []string{"SOUNDGATE_TOKEN=" + servertest.ApproverToken, "SOUNDGATE_TOKEN_FILE="}, exitRefused, "the proxy needs an agent's"},
		{append([]string{"--run", "open-run"}, append(gate, "--", "/nonexistent/upstream")...), nil, exitFailure, "upstream"},
		{append([]string{"--run", "open-run"}, append(gate, "--max-hold", "0", "--", "true")...), nil, exitUsage, "must be positive"},
		{append([]string{"--run", "open-run", "--http", "127.0.0.1:0"}, append(gate, "--", "true")...), nil, exitUsage, "--http needs --http-token-file"},
		{append([]string{"--run", "open-run", "--http-token-file", shortToken}, append(gate, "--", "true")...), nil, exitUsage, "--http-token-file without --http"},
		{append([]string{"--run", "open-run", "--http", "0.0.0.0:8931", "--http-token-file", hostToken}, append(gate, "--", "true")...), nil, exitUsage, "not a loopback IP"},
		{append([]string{"--run", "open-run", "--http", "127.0.0.1:0", "--http-token-file", shortToken}, append(gate, "--", "true")...), nil, exitUsage, "fewer than 16"},
		{append([]string{"--run", "open-run", "--http", "127.0.0.1:0", "--http-token-file", pg.tokenFile}, append(gate, "--", "true")...), nil, exitUsage, "holds the agent's gate credential"},
	} {
		cmd := exec.Command(bin, append([]string{"mcp-proxy"}, c.args...)...)
		cmd.Env = append(os.Environ(), c.env...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		require.Equal(t, c.code, code, "mcp-proxy %v: %s", c.args, out)
		require.Contains(t, string(out), c.out, "mcp-proxy %v", c.args)
	}
}

// TestMCPProxyPolicyTypo: a policy that names a tool the real server does not have (a
// misspelt name, which on a trusted server could leave a read-only tool ungated) stops
// the proxy at start with exit 2 and the line of the name.
func TestMCPProxyPolicyTypo(t *testing.T) {
	fsJS := filesystemServer(t)
	dir := t.TempDir()
	bin := buildSoundgate(t, dir)
	pg := startProxyGate(t, dir, "typo-run")
	policy := filepath.Join(dir, "policy.json")
	require.NoError(t, os.WriteFile(policy, []byte("{\"servers\": {\"filesystem\": {\"trusted\": true, \"tools\": {\n  \"write_file\": \"gated\",\n  \"read_text_fil\": \"gated\"}}}}\n"), 0o600))
	cmd := exec.Command(bin, "mcp-proxy", "--run", "typo-run", "--gate-unix", pg.g.Unix, "--token-file", pg.tokenFile,
		"--policy", policy, "--server", "filesystem", "--", "node", fsJS, dir)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	require.Equal(t, exitUsage, ee.ExitCode(), "%s", out)
	require.Contains(t, string(out), `policy.json line 3: tool "read_text_fil" of server "filesystem" is not a tool of the server`)
}
