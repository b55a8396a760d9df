package server_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// The idle rule (Limits.IdleTimeout), on both transports: an agent's connection with
// nothing waiting and nothing in flight is closed once quiet for IdleTimeout;
// approvers', operators' and parked admits' connections are not.

// idleTimeout is the tests' IdleTimeout: short, so that the tests wait little; no
// test asserts how soon after it a connection is closed.
const idleTimeout = 200 * time.Millisecond

// idleGate starts a gate with IdleTimeout idle on the transport named, logging to logs.
func idleGate(t *testing.T, goroutines bool, idle time.Duration, logs *servertest.SyncBuffer) *servertest.Gate {
	o := servertest.Options{Goroutines: goroutines, Limits: server.Limits{IdleTimeout: idle}}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return servertest.Start(t, o)
}

// helloRaw connects with token and says hello; the hello must be answered.
func helloRaw(t *testing.T, g *servertest.Gate, token string) *servertest.Raw {
	t.Helper()
	c := g.Raw(t)
	resp := c.Send(t, hello(token))
	require.Nil(t, resp.Error, "hello with %s", token)
	return c
}

// requireAnswered sends a status request with id on c and requires its answer (an
// error answer too: the run need not exist).
func requireAnswered(t *testing.T, c *servertest.Raw, id int, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, proto.IntID(int64(id)), c.Send(t, strings.TrimSuffix(statusLine(id), "\n")).ID, msgAndArgs...)
}

// requireClosedBy requires that the gate closes c (not a time-out of the wait, nor
// an answer), and no sooner than atLeast after since (a time before the last
// request the gate read of it).
func requireClosedBy(t *testing.T, c *servertest.Raw, since time.Time, atLeast time.Duration) {
	t.Helper()
	err := c.WaitClosed()
	require.Error(t, err, "an answer came instead of the close")
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection was still open after %v", servertest.RawTimeout)
	require.GreaterOrEqual(t, time.Since(since), atLeast, "closed before it was idle that long")
}

// TestIdleByRole: after hello and nothing more, agents' connections are closed once
// idle for IdleTimeout, each counted as an idle refusal and logged with the token's
// name (never the token); approvers' and operators' stay open and are answered.
func TestIdleByRole(t *testing.T) {
	roles := []struct {
		token  string
		closed bool
	}{
		{servertest.AgentToken, true},
		{servertest.ScopedToken, true},
		{servertest.ApproverToken, false},
		{servertest.OperatorToken, false},
	}
	eachTransport(t, func(t *testing.T, goroutines bool) {
		var logs servertest.SyncBuffer
		g := idleGate(t, goroutines, idleTimeout, &logs)
		conns := make([]*servertest.Raw, len(roles))
		began := time.Now()
		for i, r := range roles {
			conns[i] = helloRaw(t, g, r.token)
		}
		for i, r := range roles {
			if r.closed {
				requireClosedBy(t, conns[i], began, idleTimeout)
			}
		}
		time.Sleep(time.Until(began.Add(3 * idleTimeout)))
		for i, r := range roles {
			if !r.closed {
				requireAnswered(t, conns[i], 1, "%s, idle for %v", r.token, 3*idleTimeout)
			}
		}
		require.Equal(t, uint64(2), g.Server.Refusals()["idle"])
		out := logs.String()
		require.Contains(t, out, "refusal=idle")
		require.Regexp(t, `refusal=idle .*token_name=(agent|scoped)`, out)
		for _, r := range roles {
			require.NotContains(t, out, r.token, "a token in the log")
		}
	})
}

// TestIdleClockRestartsOnActivity: an agent that sends a request more often than
// IdleTimeout stays open however long it goes on; once it stops it is closed.
func TestIdleClockRestartsOnActivity(t *testing.T) {
	eachTransport(t, func(t *testing.T, goroutines bool) {
		g := idleGate(t, goroutines, idleTimeout, nil)
		c := helloRaw(t, g, servertest.AgentToken)
		var last time.Time
		for i := range 20 { // 5 IdleTimeouts, a request every quarter of one
			time.Sleep(idleTimeout / 4)
			last = time.Now()
			requireAnswered(t, c, i+1, "request %d of an active agent", i+1)
		}
		require.Zero(t, g.Server.Refusals()["idle"])
		requireClosedBy(t, c, last, idleTimeout)
		require.Equal(t, uint64(1), g.Server.Refusals()["idle"])
	})
}

// TestIdleParkedAdmitStaysOpen: an agent whose admit waits for a decision for
// longer than IdleTimeout is not idle: its connection stays open, gets the answer
// when the approver decides, and is served on; idle after that, it is closed.
func TestIdleParkedAdmitStaysOpen(t *testing.T) {
	eachTransport(t, func(t *testing.T, goroutines bool) {
		g := idleGate(t, goroutines, idleTimeout, nil)
		ctx := context.Background()
		op, approver := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken)
		_, err := op.Open(ctx, "r", 0)
		require.NoError(t, err)
		agent := helloRaw(t, g, servertest.AgentToken)
		held := agent.Send(t, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"g","epoch":1,"gated":true}}`)
		require.Nil(t, held.Error)
		agent.Write(t, `{"jsonrpc":"2.0","id":2,"method":"admit","params":{"run":"r","key":"s","epoch":1,"wait_ms":60000}}`+"\n")
		require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
		time.Sleep(3 * idleTimeout)
		require.Zero(t, g.Server.Refusals()["idle"], "a connection closed for idleness while its admit waited")
		// Before the decide: the server stamps the parked answer's write, and every
		// later activity, after it on its own clock (the event loop's is the pass's
		// start, which may be earlier than the test's now after the answer arrived).
		last := time.Now()
		_, err = approver.Decide(ctx, "r", "g", core.Approve)
		require.NoError(t, err)
		answer := agent.Recv(t)
		require.Nil(t, answer.Error, "the parked admit's answer")
		require.Contains(t, string(answer.Result), `"answer":"admit"`)
		requireAnswered(t, agent, 3, "served on after its wait")
		requireClosedBy(t, agent, last, idleTimeout)
		require.Equal(t, uint64(1), g.Server.Refusals()["idle"])
	})
}

// TestShutdownWhileIdleDeadlinesRearm: Shutdown wakes every reader with a deadline
// of now; a reader that took that wake-up for an idle deadline and re-armed it
// (IdleTimeout an hour here) would hold Shutdown for an hour. Readers of agents just
// active, with an admit parked, and of an operator, over several rounds.
func TestShutdownWhileIdleDeadlinesRearm(t *testing.T) {
	eachTransport(t, func(t *testing.T, goroutines bool) {
		for round := range 10 {
			g := idleGate(t, goroutines, time.Hour, nil)
			op := g.Dial(t, servertest.OperatorToken)
			_, err := op.Open(context.Background(), "r", 0)
			require.NoError(t, err)
			var conns []*servertest.Raw
			for i := range 4 {
				c := helloRaw(t, g, servertest.AgentToken)
				requireAnswered(t, c, 1, "a status before Shutdown")
				if i == 0 {
					require.Nil(t, c.Send(t, `{"jsonrpc":"2.0","id":2,"method":"admit","params":{"run":"r","key":"g","epoch":1,"gated":true}}`).Error)
					c.Write(t, `{"jsonrpc":"2.0","id":3,"method":"admit","params":{"run":"r","key":"s","epoch":1,"wait_ms":60000}}`+"\n")
				}
				conns = append(conns, c)
			}
			conns = append(conns, helloRaw(t, g, servertest.OperatorToken))
			require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
			require.NoError(t, shutdown(g, 10*time.Second), "round %d: Shutdown waited for the idle deadlines", round)
			for _, c := range conns {
				requireClosedAfterAnswers(t, c)
			}
		}
	})
}

// requireClosedAfterAnswers requires that the gate closes c, after whatever answers
// it still sends (a parked admit's shutting_down).
func requireClosedAfterAnswers(t *testing.T, c *servertest.Raw) {
	t.Helper()
	for range 1 << 12 { // an answer's bytes, one at a time
		if err := c.WaitClosed(); err != nil {
			require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection stays open after Shutdown")
			return
		}
	}
	t.Fatal("the connection is not closed after Shutdown")
}
