package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestNotUTF8 checks that a string field that is not UTF-8 is refused with client.ErrNotUTF8
// naming the field, that nothing is sent, and that the connection stays usable. The
// encoder would rewrite the bytes to U+FFFD, so "\xff" and "\xfe" would be one key.
func TestNotUTF8(t *testing.T) {
	g, op := gateWithRun(t)
	ctx := context.Background()
	var err error
	agent, cc := dialCounting(t, g.Unix, servertest.AgentToken)
	appr, ac := dialCounting(t, g.Unix, servertest.ApproverToken)

	// A valid admit+complete of another binary-looking key, so that a collision would
	// answer duplicate.
	res, err := agent.Admit(ctx, "r", "\ufffd", 1, client.AdmitOptions{})
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer)
	_, err = agent.Complete(ctx, "r", "\ufffd", core.OutcomeOK, "first")
	require.NoError(t, err)

	cases := []struct {
		name  string
		c     *client.Client
		cc    *countConn
		call  func(c *client.Client) error
		field string
	}{
		{"admit key", agent, cc, func(c *client.Client) error {
			_, err := c.Admit(ctx, "r", "\xff", 1, client.AdmitOptions{})
			return err
		}, "key"},
		{"admit other key", agent, cc, func(c *client.Client) error {
			_, err := c.Admit(ctx, "r", "a\xfeb", 1, client.AdmitOptions{})
			return err
		}, "key"},
		{"admit run", agent, cc, func(c *client.Client) error {
			_, err := c.Admit(ctx, "r\xc3", "k", 1, client.AdmitOptions{})
			return err
		}, "run"},
		{"admit wait", agent, cc, func(c *client.Client) error {
			_, err := c.AdmitWait(ctx, "r", "\xff", 1, false, time.Second)
			return err
		}, "key"},
		{"complete key", agent, cc, func(c *client.Client) error {
			_, err := c.Complete(ctx, "r", "\xff", core.OutcomeOK, "x")
			return err
		}, "key"},
		{"complete result", agent, cc, func(c *client.Client) error {
			_, err := c.Complete(ctx, "r", "\ufffd", core.OutcomeOK, "bin\x80ary")
			return err
		}, "result"},
		{"status key", agent, cc, func(c *client.Client) error { _, err := c.Status(ctx, "r", "\xff"); return err }, "key"},
		{"decide key", appr, ac, func(c *client.Client) error { _, err := c.Decide(ctx, "r", "\xff", core.Approve); return err }, "key"},
		{"admit description", agent, cc, func(c *client.Client) error {
			_, err := c.Admit(ctx, "r", "k", 1, client.AdmitOptions{Gated: true, Description: "bin\xffary"})
			return err
		}, "description"},
		{"admit digest", agent, cc, func(c *client.Client) error {
			_, err := c.Admit(ctx, "r", "k", 1, client.AdmitOptions{ArgsDigest: "sha256:\xff"})
			return err
		}, "args_digest"},
		{"decide reason", appr, ac, func(c *client.Client) error {
			_, err := c.DecideWith(ctx, "r", "k", core.Approve, client.DecideOptions{Reason: "\xc3"})
			return err
		}, "reason"},
		{"pending cursor", appr, ac, func(c *client.Client) error {
			_, err := c.Pending(ctx, client.PendingOptions{Cursor: "\xff"})
			return err
		}, "cursor"},
		{"open run", op, nil, func(c *client.Client) error { _, err := c.Open(ctx, "\xff", 0); return err }, "run"},
		{"cancel run", op, nil, func(c *client.Client) error { _, err := c.Cancel(ctx, "\xff"); return err }, "run"},
		{"fence run", op, nil, func(c *client.Client) error { _, err := c.Fence(ctx, "\xff"); return err }, "run"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before int64
			if tc.cc != nil {
				before = tc.cc.writes.Load()
			}
			err := tc.call(tc.c)
			require.ErrorIs(t, err, client.ErrNotUTF8)
			require.NotErrorIs(t, err, client.ErrClosed)
			require.Contains(t, err.Error(), "soundgate/client: ")
			require.True(t, strings.HasSuffix(err.Error(), ": "+tc.field), err.Error())
			if tc.cc != nil {
				require.Equal(t, before, tc.cc.writes.Load(), "nothing may be sent")
			}
			_, err = tc.c.Status(ctx, "r", "")
			require.NoError(t, err, "the connection stays usable")
		})
	}

	// The valid key's effect is untouched: its result is still "first".
	st, err := agent.Status(ctx, "r", "\ufffd")
	require.NoError(t, err)
	require.NotNil(t, st.Effect)
	require.Equal(t, "first", st.Effect.Result)

	t.Run("dial token", func(t *testing.T) {
		_, err := client.Dial(ctx, g.Unix, "agent-token-\xff")
		require.ErrorIs(t, err, client.ErrNotUTF8)
		require.True(t, strings.HasSuffix(err.Error(), ": token"), err.Error())
		// Refused before dialing: no address is even tried.
		_, err = client.Dial(ctx, filepath.Join(t.TempDir(), "none.sock"), "\xff")
		require.ErrorIs(t, err, client.ErrNotUTF8)
	})
}

// TestRequestTooLarge checks that a request whose encoded line is over
// proto.LineBytesMax is refused for that call only: the connection and the calls after
// it keep working.
func TestRequestTooLarge(t *testing.T) {
	g, _ := gateWithRun(t)
	ctx := context.Background()
	var err error
	agent, cc := dialCounting(t, g.Unix, servertest.AgentToken)
	_, err = agent.Admit(ctx, "r", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)

	// Each control character escapes to \u00XX (6 bytes): within ResultBytesMax, but
	// the line is about 6 times over LineBytesMax/6.
	ctl := strings.Repeat("\x01", proto.ResultBytesMax)
	before := cc.writes.Load()
	_, err = agent.Complete(ctx, "r", "k", core.OutcomeOK, ctl)
	require.ErrorIs(t, err, client.ErrRequestTooLarge)
	require.NotErrorIs(t, err, client.ErrClosed)
	require.Equal(t, before, cc.writes.Load(), "nothing may be sent")

	// The connection still works, and the effect can be completed with a result that
	// fits (the same number of bytes, unescaped).
	res, err := agent.Complete(ctx, "r", "k", core.OutcomeOK, strings.Repeat("a", proto.ResultBytesMax))
	require.NoError(t, err)
	require.False(t, res.Repeat)
	st, err := agent.Status(ctx, "r", "k")
	require.NoError(t, err)
	require.Len(t, st.Effect.Result, proto.ResultBytesMax)
}

// TestLineBound checks the bound itself: a line of exactly LineBytesMax bytes is sent,
// one byte more is refused.
func TestLineBound(t *testing.T) {
	req := &proto.Request{ID: proto.IntID(1), Method: proto.MethodComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: "x"}
	base := len(proto.AppendRequest(nil, req)) - 1 - 1 // without LF and the one-byte result
	for _, tc := range []struct {
		extra   int
		tooLong bool
	}{{0, false}, {1, true}} {
		a, b := net.Pipe()
		c := client.NewForTest(a)
		lines := make(chan []byte, 1)
		go func() {
			line, _ := bufio.NewReader(b).ReadBytes('\n')
			lines <- line
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		// Result sized so that the line (id 1) is LineBytesMax + extra bytes long.
		_, err := c.Complete(ctx, "r", "k", core.OutcomeOK, strings.Repeat("y", proto.LineBytesMax-base+tc.extra))
		cancel()
		if tc.tooLong {
			require.ErrorIs(t, err, client.ErrRequestTooLarge)
		} else {
			require.ErrorIs(t, err, context.DeadlineExceeded) // sent; nobody answers
			line := <-lines
			require.Len(t, line, proto.LineBytesMax+1)
		}
		c.Close()
		b.Close()
	}
}

// TestLongAnswers: answers are read past the request line limit (a status listing
// 1,024 pending keys, each byte escaped, is about 1.6 MB), up to
// proto.AnswerLineBytesMax; a longer one breaks the connection with ErrLineTooLong.
func TestLongAnswers(t *testing.T) {
	for _, tc := range []struct {
		keys    int
		tooLong bool
	}{{1024, false}, {proto.AnswerLineBytesMax/900 + 1, true}} { // a key is 963 bytes on the wire
		a, b := net.Pipe()
		c := client.NewForTest(a)
		go func() {
			line, _ := bufio.NewReader(b).ReadBytes('\n')
			var req struct {
				ID int64 `json:"id"`
			}
			json.Unmarshal(line, &req)
			key := strings.Repeat(`\u0001`, 160) // 960 bytes on the wire
			keys := make([]string, tc.keys)
			for i := range keys {
				keys[i] = `"` + key + `"`
			}
			fmt.Fprintf(b, `{"jsonrpc":"2.0","id":%d,"result":{"run":"r","status":"active","epoch":1,"pending":[%s]}}`+"\n", req.ID, strings.Join(keys, ","))
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st, err := c.Status(ctx, "r", "")
		cancel()
		if tc.tooLong {
			require.ErrorIs(t, err, client.ErrClosed)
			require.ErrorIs(t, err, proto.ErrLineTooLong)
		} else {
			require.NoError(t, err)
			require.Len(t, st.Pending, tc.keys)
			require.Len(t, string(st.Pending[0]), 160)
		}
		c.Close()
		b.Close()
	}
}

// TestWriteErrorSticky checks that a write cut by the ctx deadline after part of the
// line went out breaks the client for good (sticky error wrapping both client.ErrClosed and
// the cause) and closes the socket, so that no later request is glued to the half line.
func TestWriteErrorSticky(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := client.NewForTest(a)
	defer c.Close()
	got := make(chan []byte, 1)
	readErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 10)
		n, _ := io.ReadFull(b, buf) // take part of the first line, then stall
		got <- buf[:n]
		time.Sleep(300 * time.Millisecond) // the write deadline passes meanwhile
		b.SetReadDeadline(time.Now().Add(2 * time.Second))
		rest, err := io.ReadAll(b)
		got <- rest
		readErr <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := c.Status(ctx, "r", "")
	cancel()
	require.ErrorIs(t, err, client.ErrClosed)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.Len(t, <-got, 10)

	// The next call fails at once with the sticky error and writes nothing.
	ctx, cancel = context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = c.Status(ctx, "r", "")
	require.ErrorIs(t, err, client.ErrClosed)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.Empty(t, <-got, "nothing after the half line")
	require.NoError(t, <-readErr, "the peer sees the socket closed (EOF)")
}

// TestBrokenClosesSocket checks that a connection the client finds broken (here: an
// error answer with a null id) is closed, so that the server drops its parked admits,
// and that calls in flight fail with client.ErrClosed wrapping the cause.
func TestBrokenClosesSocket(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := client.NewForTest(a)
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		_, err := c.Admit(context.Background(), "r", "k", 1, client.AdmitOptions{Wait: time.Minute})
		done <- err
	}()
	r := bufio.NewReader(b)
	_, err := r.ReadBytes('\n')
	require.NoError(t, err)
	_, err = b.Write(proto.AppendError(nil, proto.ID{Kind: proto.IDNull}, proto.ErrOverloaded))
	require.NoError(t, err)
	err = within(t, done, 2*time.Second, "the call in flight did not fail")
	require.ErrorIs(t, err, client.ErrClosed)
	require.ErrorIs(t, err, proto.ErrOverloaded)
	b.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = r.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the client must close the socket")
	_, err = c.Status(context.Background(), "r", "")
	require.ErrorIs(t, err, client.ErrClosed)
}

// TestBrokenDropsParkedAdmit checks against a real gate that when the client finds its
// connection broken while an admit is parked, the call fails with client.ErrClosed and the
// socket is closed (which is what makes the gate drop the parked admit rather than
// admit it for nobody).
func TestBrokenDropsParkedAdmit(t *testing.T) {
	g, op := gateWithRun(t)
	ctx := context.Background()
	var err error
	agent := g.Dial(t, servertest.AgentToken)
	nc := agent.ConnForTest()
	parked := make(chan error, 1)
	go func() {
		_, err := agent.Admit(ctx, "r", "k", 1, client.AdmitOptions{Gated: true, Wait: time.Minute})
		parked <- err
	}()
	// Wait until the admit is pending at the gate.
	require.Eventually(t, func() bool {
		st, err := op.Status(ctx, "r", "k")
		return err == nil && st.Effect != nil
	}, 5*time.Second, 5*time.Millisecond)
	agent.BreakForTest(errors.New("test: broken"))
	require.ErrorIs(t, within(t, parked, 2*time.Second, "the parked admit did not fail"), client.ErrClosed)
	_, err = nc.Write([]byte("{}\n"))
	require.Error(t, err, "the socket must be closed")
}

// TestAdmitWaitMs checks the wait_ms Admit sends: clamped to proto.WaitMsMax (a longer
// wait would be refused as invalid), a positive sub-millisecond wait rounded up to 1.
func TestAdmitWaitMs(t *testing.T) {
	for _, tc := range []struct {
		wait time.Duration
		ms   int64
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, 1},
		{999 * time.Microsecond, 1},
		{time.Millisecond, 1},
		{1500 * time.Microsecond, 1},
		{2 * time.Second, 2000},
		{5 * time.Minute, proto.WaitMsMax},
		{5*time.Minute + time.Millisecond, proto.WaitMsMax},
		{time.Hour, proto.WaitMsMax},
	} {
		a, b := net.Pipe()
		c := client.NewForTest(a)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			c.Admit(ctx, "r", "k", 1, client.AdmitOptions{Wait: tc.wait})
			close(done)
		}()
		line, err := bufio.NewReader(b).ReadBytes('\n')
		require.NoError(t, err)
		cancel()
		<-done
		req, err := proto.Decode(line)
		require.NoError(t, err, "the gate must accept the request (wait %v)", tc.wait)
		require.Equal(t, tc.ms, req.WaitMs, "wait %v", tc.wait)
		c.Close()
		b.Close()
	}
}

// TestAdmitLongWaitAccepted checks against a real gate that an admit with a wait over
// the gate's bound is parked (not refused as invalid) and answered by a decision.
func TestAdmitLongWaitAccepted(t *testing.T) {
	g, _ := gateWithRun(t)
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	appr := g.Dial(t, servertest.ApproverToken)
	done := servertest.AdmitAsync(agent, "r", "k", 1, client.AdmitOptions{Gated: true, Wait: 10 * time.Minute})
	require.Eventually(t, func() bool {
		_, err := appr.Decide(ctx, "r", "k", core.Approve)
		return err == nil
	}, 5*time.Second, 5*time.Millisecond)
	a := within(t, done, 5*time.Second, "the parked admit was not answered by the decision")
	require.NoError(t, a.Err)
	require.Equal(t, core.AnswerAdmit, a.Res.Answer)
}

// TestAdmitWaitNoBusyLoop checks that AdmitWait near its deadline returns the last held
// answer instead of asking again and again with 1 ms waits.
func TestAdmitWaitNoBusyLoop(t *testing.T) {
	g, _ := gateWithRun(t)
	ctx := context.Background()
	var err error
	agent, cc := dialCounting(t, g.Unix, servertest.AgentToken)
	wctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
	defer cancel()
	res, err := agent.AdmitWait(wctx, "r", "k", 1, true, time.Second)
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	require.LessOrEqual(t, cc.admits.Load(), int64(2), "asks")
	require.NoError(t, wctx.Err(), "AdmitWait returns before the deadline")
}

// TestAdmitWaitShortSteps checks that AdmitWait with a step shorter than
// admitWaitStepMin keeps asking while time is left (it stops early only for lack of
// time, not for a short step) and returns the answer a decision gives.
func TestAdmitWaitShortSteps(t *testing.T) {
	g, op := gateWithRun(t)
	ctx := context.Background()
	var err error
	agent, cc := dialCounting(t, g.Unix, servertest.AgentToken)
	appr := g.Dial(t, servertest.ApproverToken)
	decided := make(chan error, 1)
	go func() {
		// Decide once the approval is pending and the agent has asked a few times.
		for ctx.Err() == nil {
			st, err := op.Status(ctx, "r", "")
			if err == nil && len(st.Pending) == 1 && cc.admits.Load() >= 3 {
				_, err = appr.Decide(ctx, "r", "k", core.Approve)
				decided <- err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res, err := agent.AdmitWait(wctx, "r", "k", 1, true, 2*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer)
	require.GreaterOrEqual(t, cc.admits.Load(), int64(3), "asks")
	require.NoError(t, <-decided)
}

// TestSplitAddr: the address forms client.Dial and the bench take.
func TestSplitAddr(t *testing.T) {
	for _, c := range []struct{ addr, network, address string }{
		{"unix:/run/gate.sock", "unix", "/run/gate.sock"},
		{"/run/gate.sock", "unix", "/run/gate.sock"},
		{"127.0.0.1:7433", "tcp", "127.0.0.1:7433"},
		{"gate.internal:7433", "tcp", "gate.internal:7433"},
		{"[::1]:7433", "tcp", "[::1]:7433"},
	} {
		n, a := client.SplitAddr(c.addr)
		require.Equal(t, c.network, n, c.addr)
		require.Equal(t, c.address, a, c.addr)
	}
}

// TestOpenTimeoutNeverBecomesNever: a positive timeout under a millisecond still
// gives the run a deadline (whole milliseconds on the wire once made it 0: no
// deadline at all), and a negative one is refused before anything is sent.
func TestOpenTimeoutNeverBecomesNever(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	op := g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r1", 500*time.Microsecond)
	require.NoError(t, err)
	st, err := op.Status(ctx, "r1", "")
	require.NoError(t, err)
	require.True(t, st.DeadlineMs != 0 || st.Status == core.RunTimedOut, "a 0.5 ms timeout left run r1 %v with no deadline", st.Status)
	_, err = op.Open(ctx, "r2", -time.Second)
	require.ErrorContains(t, err, "negative timeout")
	_, err = op.Status(ctx, "r2", "")
	require.ErrorIs(t, err, core.ErrUnknownRun)
}

// TestArgsDigest: the digest of an admit's arguments is "sha256:" and the SHA-256 in
// lower-case hex, the format the gate accepts.
func TestArgsDigest(t *testing.T) {
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", client.ArgsDigest(nil))
	require.NoError(t, core.CheckArgsDigest(client.ArgsDigest([]byte(`{"to":"ACME"}`))))
}
