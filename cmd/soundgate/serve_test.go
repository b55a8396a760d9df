package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
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

// served is a `soundgate serve` a test started: its output, read while it runs, and
// its end (exited is closed once it has exited, with err set). The test's end kills
// it.
type served struct {
	cmd    *exec.Cmd
	logs   servertest.SyncBuffer
	exited chan struct{}
	err    error
}

// serve starts bin serve with args; if sock is not empty, it returns once the socket
// is there.
func serve(t *testing.T, bin, sock string, args ...string) *served {
	t.Helper()
	p := &served{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.exited })
	if sock != "" { // listening, not only bound: a connect between the two is refused
		require.Eventually(t, func() bool {
			nc, err := net.Dial("unix", sock)
			if err == nil {
				nc.Close()
			}
			return err == nil
		}, 10*time.Second, 10*time.Millisecond, "%s", p.logs.String())
	}
	return p
}

// gateFixture is a directory with the binary, the roles fixture and a socket path.
func gateFixture(t *testing.T) (dir, bin, roles, sock string) {
	dir = t.TempDir()
	bin = buildSoundgate(t, dir)
	roles, err := servertest.WriteRoles(dir)
	require.NoError(t, err)
	return dir, bin, roles, filepath.Join(dir, "gate.sock")
}

// TestSecondGateCannotTakeTheSocket: a second gate (another data directory, so its
// log is not locked) started on the socket of a running one must not start. It
// once deleted the socket and answered on it, and then admitted a key that the
// first gate had admitted: the same effect twice.
func TestSecondGateCannotTakeTheSocket(t *testing.T) {
	dir, bin, roles, sock := gateFixture(t)
	serve(t, bin, sock, "--roles", roles, "--data", filepath.Join(dir, "data-a"), "--listen", "", "--unix", sock)

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

	second := serve(t, bin, "", "--roles", roles, "--data", filepath.Join(dir, "data-b"), "--listen", "", "--unix", sock)
	select {
	case <-second.exited:
		require.Error(t, second.err, "the second gate exited 0")
		require.Contains(t, second.logs.String(), sock, "the second gate's error names the socket")
	case <-time.After(10 * time.Second):
		t.Fatalf("a second gate is serving on the socket of a running one:\n%s", second.logs.String())
	}
	require.Equal(t, core.AnswerDuplicate, admit(), "the key was admitted again")
}

// TestSighupReloadsTheRoles: through the real binary, SIGHUP with a roles file that
// does not pass (a typo) keeps the roles the gate has and logs why; with one that
// passes, the new tokens hold and the removed ones are refused.
func TestSighupReloadsTheRoles(t *testing.T) {
	_, bin, roles, sock := gateFixture(t)
	gate := serve(t, bin, sock, "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock)

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
		require.NoError(t, gate.cmd.Process.Signal(syscall.SIGHUP))
		require.Eventually(t, func() bool { return strings.Contains(gate.logs.String(), logged) }, 10*time.Second, 10*time.Millisecond, "%s", gate.logs.String())
	}

	typo := strings.Replace(servertest.RolesJSON, `"runs"`, `"run"`, 1)
	reload(typo, "roles reload refused")
	require.Contains(t, gate.logs.String(), `unknown field \"run\"`)
	require.NoError(t, hello(servertest.ScopedToken), "the old roles still hold")

	const bob = "Pq7Lm2Xz9Rt4Wv6Ks3Nb8Hd5Gf1Jc0Ya"
	reload(fmt.Sprintf(`{"tokens": [{"name": "bob", "token": %q, "role": "operator", "runs": ["*"]}]}`, bob), "roles reloaded")
	require.NoError(t, hello(bob), "a token the reload added")
	require.ErrorIs(t, hello(servertest.ScopedToken), proto.ErrUnauthenticated, "a token the reload removed")
}

// TestServeIdleTimeout: --idle-timeout reaches the server (an agent's connection
// that says hello and nothing more is closed, an operator's is not), and a value the
// gate cannot use is a usage error that names the flag.
func TestServeIdleTimeout(t *testing.T) {
	_, bin, roles, sock := gateFixture(t)
	for _, bad := range []struct{ value, says string }{
		{"-1s", "--idle-timeout must not be negative"},
		{"500us", "--idle-timeout must be at least 1ms"},
		{"soon", "invalid value"},
	} {
		p := serve(t, bin, "", "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, "--idle-timeout", bad.value)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("--idle-timeout %s: the gate started", bad.value)
		}
		require.Equal(t, exitUsage, p.cmd.ProcessState.ExitCode(), "--idle-timeout %s:\n%s", bad.value, p.logs.String())
		require.Contains(t, p.logs.String(), bad.says)
	}
	serve(t, bin, sock, "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, "--idle-timeout", "200ms")
	said := func(token string) net.Conn {
		nc, err := net.Dial("unix", sock)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		_, err = nc.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":"` + token + `"}}` + "\n"))
		require.NoError(t, err)
		return nc
	}
	agent, op := said(servertest.AgentToken), said(servertest.OperatorToken)
	agent.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadAll(agent) // the hello's answer, then the close
	require.NoError(t, err, "the idle agent's connection was not closed")
	op.SetReadDeadline(time.Now().Add(time.Second))
	_, err = io.ReadAll(op)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "the operator's connection was closed")
}

// TestServeQuotaFlags: --max-runs-per-token and --max-result-bytes-per-token reach
// the server (one more is refused with quota), and a value under 1 is a usage error
// that names the flag.
func TestServeQuotaFlags(t *testing.T) {
	_, bin, roles, sock := gateFixture(t)
	for _, flag := range []string{"--max-runs-per-token", "--max-result-bytes-per-token"} {
		p := serve(t, bin, "", "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, flag, "0")
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s 0: the gate started", flag)
		}
		require.Equal(t, exitUsage, p.cmd.ProcessState.ExitCode(), "%s 0:\n%s", flag, p.logs.String())
		require.Contains(t, p.logs.String(), flag+" must be at least 1")
	}
	serve(t, bin, sock, "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock,
		"--max-runs-per-token", "1", "--max-result-bytes-per-token", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op := dialListening(t, ctx, sock, servertest.OperatorToken)
	agent, err := client.Dial(ctx, "unix:"+sock, servertest.AgentToken)
	require.NoError(t, err)
	defer agent.Close()
	_, err = op.Open(ctx, "r1", 0)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r2", 0)
	require.ErrorIs(t, err, proto.ErrQuota)
	_, err = agent.Admit(ctx, "r1", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	_, err = agent.Complete(ctx, "r1", "k", core.OutcomeOK, "12345")
	require.ErrorIs(t, err, proto.ErrQuota)
	_, err = agent.Complete(ctx, "r1", "k", core.OutcomeOK, "1234")
	require.NoError(t, err)
}

// TestServeOrderedIDs: with --ordered-ids a retirement moves the watermark (an id
// below the retired one, never opened, is refused; one above is new), and without
// retention the flag is a usage error.
func TestServeOrderedIDs(t *testing.T) {
	_, bin, roles, sock := gateFixture(t)
	p := serve(t, bin, "", "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, "--ordered-ids", "--retention", "0")
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("--ordered-ids --retention 0: the gate started")
	}
	require.Equal(t, exitUsage, p.cmd.ProcessState.ExitCode(), p.logs.String())
	require.Contains(t, p.logs.String(), "--ordered-ids moves the watermark as runs retire: it needs --retention above 0")

	serve(t, bin, sock, "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, "--ordered-ids", "--retention", "50ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op := dialListening(t, ctx, sock, servertest.OperatorToken)
	_, err := op.Cancel(ctx, "run-0002") // a tombstone: finished
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, err := op.Status(ctx, "run-0002", "")
		return err == nil && st.Status == core.RunRetired
	}, 10*time.Second, 20*time.Millisecond)
	_, err = op.Open(ctx, "run-0001", 0)
	require.ErrorIs(t, err, core.ErrRunRetired, "an id below the watermark, never opened")
	_, err = op.Open(ctx, "run-0003", 0)
	require.NoError(t, err)
}

// dialListening dials the gate on sock as token once it listens (the socket's file
// exists a moment before it does); the client is closed with the test.
func dialListening(t *testing.T, ctx context.Context, sock, token string) *client.Client {
	t.Helper()
	var c *client.Client
	require.Eventually(t, func() bool {
		var err error
		c, err = client.Dial(ctx, "unix:"+sock, token)
		return err == nil
	}, 10*time.Second, 10*time.Millisecond)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSetGCPercent: the flag wins when given; else GOGC from the environment, when
// set; else the gate's default.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	current := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	for _, tc := range []struct {
		name string
		env  string // "": unset
		args []string
		want int
	}{
		{"default", "", nil, gcPercentDefault},
		{"the environment's", "300", nil, 300},
		{"the flag over the environment's", "300", []string{"--gc-percent", "60"}, 60},
		{"the flag", "", []string{"--gc-percent", "70"}, 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GOGC", tc.env)
				debug.SetGCPercent(300) // what the runtime read from GOGC at start
			} else {
				t.Setenv("GOGC", "") // restored at the end of the test
				os.Unsetenv("GOGC")
				debug.SetGCPercent(100)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			percent := fs.Int("gc-percent", gcPercentDefault, "")
			require.NoError(t, fs.Parse(tc.args))
			setGCPercent(fs, *percent, slog.New(slog.DiscardHandler))
			require.Equal(t, tc.want, current())
		})
	}
}

// TestOpenTrace: a trace file a crash left with a line cut short gets that line
// ended before the next start writes, so the checker sees it as torn, not as a line
// glued to the next start's first; a whole file is only appended to.
func TestOpenTrace(t *testing.T) {
	for _, tc := range []struct{ name, before, after string }{
		{"a new file", "", "{}\n"},
		{"a whole line last", "{\"seq\":1}\n", "{\"seq\":1}\n{}\n"},
		{"a line cut short last", "{\"seq\":1}\n{\"seq\":2,\"op", "{\"seq\":1}\n{\"seq\":2,\"op\n{}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.ndjson")
			if tc.before != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.before), 0o600))
			}
			f, err := openTrace(path)
			require.NoError(t, err)
			_, err = f.Write([]byte("{}\n"))
			require.NoError(t, err)
			require.NoError(t, f.Close())
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tc.after, string(got))
		})
	}
	_, err := openTrace(filepath.Join(t.TempDir(), "no", "such", "dir", "trace"))
	require.ErrorContains(t, err, "open the trace file")
}
