package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// watchRun is `soundgate pending --watch` running in the test, its stdout and stderr
// on pipes: stop ends it as Ctrl-C does.
type watchRun struct {
	t          *testing.T
	stop       context.CancelFunc
	code       chan int
	outR, errR *os.File
	outW, errW *os.File
	so, se     *os.File

	mu       sync.Mutex
	out, err bytes.Buffer
	drained  sync.WaitGroup
}

// startWatch runs pending with args; its stdout is read only once drain is called,
// its stderr at once.
func startWatch(t *testing.T, args ...string) *watchRun {
	t.Helper()
	r := &watchRun{t: t, code: make(chan int, 1), so: os.Stdout, se: os.Stderr}
	var err error
	r.outR, r.outW, err = os.Pipe()
	require.NoError(t, err)
	r.errR, r.errW, err = os.Pipe()
	require.NoError(t, err)
	r.copy(r.errR, &r.err)
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	os.Stdout, os.Stderr = r.outW, r.errW
	go func() {
		r.code <- pending(append([]string{"--watch"}, args...), func() (context.Context, context.CancelFunc) { return ctx, cancel })
	}()
	return r
}

func (r *watchRun) copy(from *os.File, to *bytes.Buffer) {
	r.drained.Add(1)
	go func() {
		defer r.drained.Done()
		buf := make([]byte, 4096)
		for {
			n, err := from.Read(buf)
			r.mu.Lock()
			to.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
}

// drain starts reading the command's stdout.
func (r *watchRun) drain() { r.copy(r.outR, &r.out) }

func (r *watchRun) stdout() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.out.String()
}

// waitFor waits until the command has printed want on stdout.
func (r *watchRun) waitFor(want string) {
	r.t.Helper()
	require.Eventually(r.t, func() bool { return strings.Contains(r.stdout(), want) }, 10*time.Second, time.Millisecond,
		"waiting for %q in\n%s", want, r.stdout())
}

// end waits for the command's exit code (after stop, or by itself) and returns it
// with everything it printed.
func (r *watchRun) end() (stdout, stderr string, code int) {
	r.t.Helper()
	select {
	case code = <-r.code:
	case <-time.After(10 * time.Second):
		r.t.Fatal("pending --watch did not end")
	}
	os.Stdout, os.Stderr = r.so, r.se
	r.outW.Close()
	r.errW.Close()
	r.drained.Wait()
	r.outR.Close()
	r.errR.Close()
	return r.stdout(), r.err.String(), code
}

// TestPendingWatch: --watch prints the inbox as pending does, then a line per change
// on the gate's clock, with ids, reasons and descriptions escaped; Ctrl-C ends it
// with exit 0; a gate that goes away ends it with exit 1 and says so.
func TestPendingWatch(t *testing.T) {
	clock := &servertest.Clock{}
	clock.Set(1_767_225_600_000) // 2026-01-01T00:00:00Z
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent, ap := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	for _, run := range []string{"r1", "r2"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	_, err := agent.Admit(ctx, "r1", "wire-money", 1, client.AdmitOptions{Gated: true, Description: "Wire 120 EUR to ACME"})
	require.NoError(t, err)
	clock.Set(1_767_225_612_000)
	flags := []string{"--addr", "unix:" + g.Unix, "--token", servertest.ApproverToken}

	r := startWatch(t, flags...)
	r.drain()
	r.waitFor("r1 wire-money age=12s Wire 120 EUR to ACME\n")
	require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond)
	forged := "k\nr1 ok \x1b[32mapproved\x1b[0m"
	clock.Set(1_767_225_613_250)
	_, err = agent.Admit(ctx, "r2", forged, 1, client.AdmitOptions{Gated: true, Description: "Refund\n\u202eevil", ArgsDigest: client.ArgsDigest(nil)})
	require.NoError(t, err)
	clock.Set(1_767_225_614_000)
	_, err = ap.DecideWith(ctx, "r1", "wire-money", core.Approve, client.DecideOptions{Reason: "invoice checked"})
	require.NoError(t, err)
	_, err = op.Cancel(ctx, "r2")
	require.NoError(t, err)
	r.waitFor("cancelled")
	r.stop()
	out, errOut, code := r.end()
	require.Equal(t, exitOK, code, "Ctrl-C ends it cleanly: %s", errOut)
	require.Equal(t, "r1 wire-money age=12s Wire 120 EUR to ACME\n"+
		"2026-01-01T00:00:13.250Z pending r2 "+fmt.Sprintf("%q", forged)+" digest="+client.ArgsDigest(nil)+` "Refund\n\u202eevil"`+"\n"+
		`2026-01-01T00:00:14.000Z approved r1 wire-money reason="invoice checked" Wire 120 EUR to ACME`+"\n"+
		"2026-01-01T00:00:14.000Z cancelled r2 "+fmt.Sprintf("%q", forged)+" digest="+client.ArgsDigest(nil)+` "Refund\n\u202eevil"`+"\n", out)
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\u202e")
	require.Empty(t, errOut)

	// --json: the page, then each notification's params.
	r = startWatch(t, append(flags, "--json")...)
	r.drain()
	r.waitFor(`"more":false}`)
	require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond)
	_, err = op.Open(ctx, "r3", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r3", forged, 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	r.waitFor(`"event":"pending"`)
	r.stop()
	out, _, code = r.end()
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2)
	require.Equal(t, `{"approvals":[],"more":false}`, lines[0])
	var ev struct {
		Event, Run, Key string
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &ev))
	require.Equal(t, []string{"pending", "r3", forged}, []string{ev.Event, ev.Run, ev.Key}, "--json keeps the bytes")

	// The gate goes away.
	r = startWatch(t, flags...)
	r.drain()
	r.waitFor("age=")
	require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, g.Close())
	_, errOut, code = r.end()
	require.Equal(t, exitFailure, code)
	require.Contains(t, errOut, "soundgate: the gate went away, the watch ended: ")
}

// TestPendingWatchLost: a watch whose output is not read falls behind; once it is
// read again, it says lost and lists the whole inbox again, then goes on.
func TestPendingWatchLost(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	r := startWatch(t, "--addr", "unix:"+g.Unix, "--token", servertest.OperatorToken)
	require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond)
	// A pipe holds 64 KiB: lines of about 60 bytes, about a thousand, then the
	// client's queue fills, and the gate's after it.
	const n = 3000
	for i := range n {
		run := fmt.Sprint("r", i/1000)
		if i%1000 == 0 {
			_, err := op.Open(ctx, run, 0)
			require.NoError(t, err)
		}
		_, err := agent.Admit(ctx, run, fmt.Sprintf("k%04d", i), 1, client.AdmitOptions{Gated: true}) // in the inbox's order
		require.NoError(t, err)
	}
	r.drain()
	r.waitFor(" lost\n")
	r.waitFor("\nr2 k2999 age=") // the list again, to its last approval
	_, err := op.Cancel(ctx, "r0")
	require.NoError(t, err)
	r.waitFor(" cancelled r0 k0999\n")
	r.stop()
	out, _, code := r.end()
	require.Equal(t, exitOK, code)
	_, after, _ := strings.Cut(out, " lost\n")
	lines := strings.Split(after, "\n")
	require.GreaterOrEqual(t, len(lines), n, "the whole inbox, listed again")
	for i := range n {
		require.True(t, strings.HasPrefix(lines[i], fmt.Sprintf("r%d k%04d age=", i/1000, i)), "line %d after lost: %q", i, lines[i])
	}
	require.Less(t, strings.Count(out, " pending r"), n, "some changes were dropped")
}

// TestPendingWatchRefusals: an agent is refused (exit 5), --cursor makes no sense
// with --watch (exit 2), and an unreachable gate fails (exit 1): none waits.
func TestPendingWatchRefusals(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"an agent", []string{"--addr", "unix:" + g.Unix, "--token", servertest.AgentToken}, exitRefused, "forbidden: the agent role may not call watch"},
		{"a cursor", []string{"--addr", "unix:" + g.Unix, "--token", servertest.ApproverToken, "--cursor", "x"}, exitUsage, "no --cursor"},
		{"no gate", []string{"--addr", "unix:" + g.Unix + ".none", "--token", servertest.ApproverToken}, exitFailure, "dial"},
	} {
		r := startWatch(t, tc.args...)
		r.drain()
		out, errOut, code := r.end()
		require.Equal(t, tc.code, code, tc.name)
		require.Contains(t, errOut, tc.says, tc.name)
		require.Empty(t, out, tc.name)
	}
	require.Equal(t, 0, g.Server.Watches())
}
