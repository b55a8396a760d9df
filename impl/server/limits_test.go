package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

func TestConnectionLimit(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 2}})
	for i := 0; i < 2; i++ {
		g.Dial(t, servertest.AgentToken)
	}
	_, err := g.Connect(servertest.AgentToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "the third connection must be refused with overloaded")
}

// TestWaiterLimit: a second waiting admit beyond the node's WaitersMax is refused
// with overloaded, before the core sees it: the refusal changes nothing.
func TestWaiterLimit(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Node: node.Config{WaitersMax: 1}})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	first := servertest.AdmitAsync(agent, "r", "a", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
	before := g.State(t)
	_, err = agent.Admit(ctx, "r", "b", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded, "a second waiting admit must be refused")
	_, err = agent.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true, Wait: time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded)
	require.Equal(t, before, g.State(t), "overloaded changed the gate's state")
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	require.NoError(t, (<-first).Err)
}

// A connection that never says hello is closed after HelloTimeout, so silent peers
// cannot hold every connection slot.
func TestSilentPeerIsClosed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 2, HelloTimeout: 100 * time.Millisecond}})
	for i := 0; i < 2; i++ {
		require.Error(t, g.Raw(t).WaitClosed(), "the silent connection must be closed")
	}
	require.Eventually(t, func() bool { return g.Server.Connections() == 0 }, 5*time.Second, time.Millisecond)
	g.Dial(t, servertest.OperatorToken) // a slot is free again
}

// A peer that trickles a hello a byte at a time does not stretch its deadline: it
// is closed HelloTimeout after its connection was accepted, however often it sends.
func TestTricklingHelloIsClosed(t *testing.T) {
	const helloTimeout = 200 * time.Millisecond
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{HelloTimeout: helloTimeout}})
	nc, err := net.Dial("unix", g.Unix)
	require.NoError(t, err)
	defer nc.Close()
	began := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		b := make([]byte, 512)
		for {
			if _, err := nc.Read(b); err != nil {
				closed <- time.Since(began)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case took := <-closed:
			require.GreaterOrEqual(t, took, helloTimeout)
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(began) > 25*helloTimeout {
			t.Fatalf("a peer sending a byte every 20 ms is still connected after %v (HelloTimeout %v)", time.Since(began), helloTimeout)
		}
		nc.Write([]byte(helloLine[i%len(helloLine) : i%len(helloLine)+1]))
	}
}

// A peer that pipelines more than WriteQueueMax requests and reads its answers only
// later is paused, not dropped, and gets every answer in order: the server stops
// reading it while its answers wait, and goes on once they are written.
func TestPipeliningPeerIsPausedAndResumed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WriteQueueMax: 4}})
	nc, err := net.Dial("unix", g.Unix)
	require.NoError(t, err)
	defer nc.Close()
	const n = 20000 // about 2 MB of answers: more than the socket buffers hold
	var b bytes.Buffer
	b.WriteString(helloLine)
	for i := 1; i <= n; i++ {
		b.WriteString(statusLine(i))
	}
	werr := make(chan error, 1)
	go func() { _, err := nc.Write(b.Bytes()); werr <- err }()
	time.Sleep(300 * time.Millisecond) // the peer does not read for a while
	r := proto.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i <= n; i++ {
		line, err := r.ReadLine()
		require.NoError(t, err, "answer %d", i)
		resp, err := proto.DecodeResponse(line)
		require.NoError(t, err)
		require.Equal(t, proto.IntID(int64(i)), resp.ID, "answers out of order")
	}
	require.NoError(t, <-werr)
}

// A peer that never reads its answers is dropped after WriteTimeout, nothing of the
// server stays behind for it (no reader waiting for room), and the gate goes on
// serving others.
func TestPeerThatDoesNotReadIsDropped(t *testing.T) {
	eachTransport(t, testPeerThatDoesNotReadIsDropped)
}

func testPeerThatDoesNotReadIsDropped(t *testing.T, goroutines bool) {
	g := servertest.Start(t, servertest.Options{Goroutines: goroutines,
		Limits: server.Limits{ConnectionsMax: 4, WriteQueueMax: 4, WriteTimeout: 100 * time.Millisecond}})
	var b bytes.Buffer
	b.WriteString(helloLine)
	for i := 1; i <= 40000; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"` + strings.Repeat("r", 100) + `"}}` + "\n")
	}
	for i := 0; i < 3; i++ {
		c := g.Raw(t)
		go c.Conn.Write(b.Bytes()) // never reads
	}
	require.Eventually(t, func() bool { return g.Server.Connections() == 0 }, 10*time.Second, 10*time.Millisecond,
		"a peer that does not read is still connected")
	require.Eventually(t, func() bool { return goroutinesIn("(*gconn).waitRoom") == 0 }, 10*time.Second, 20*time.Millisecond,
		"reader goroutines outlive their dropped connections")
	g.Dial(t, servertest.AgentToken) // the hello is answered: the gate serves on
}

func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), fn)
}

// dial says hello with token on addr; the error, if any, is the gate's refusal.
func dial(t *testing.T, addr, token string) (*client.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, token)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// TestAgentsCannotTakeTheReservedConnections: agents, with one token or many, hold
// at most the connections that are not reserved; approvers and operators still get
// in, and the refusal says why. (An agent token holding every connection but one
// once made the operator's cancel fail with overloaded.)
func TestAgentsCannotTakeTheReservedConnections(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 8, ReservedConnections: 2}})
	addr := "unix:" + g.Unix
	for i := range 6 {
		token := servertest.AgentToken
		if i%2 == 1 {
			token = servertest.ScopedToken
		}
		_, err := dial(t, addr, token)
		require.NoError(t, err, "agent connection %d", i+1)
	}
	_, err := dial(t, addr, servertest.AgentToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "a seventh agent connection")
	// The refused connection is counted until its transport has closed it.
	require.Eventually(t, func() bool { return g.Server.Connections() == 6 }, 10*time.Second, time.Millisecond)
	op, err := dial(t, addr, servertest.OperatorToken)
	require.NoError(t, err, "the operator, with agents holding their share")
	_, err = op.Open(context.Background(), "r1", 0)
	require.NoError(t, err)
	_, err = dial(t, addr, servertest.ApproverToken)
	require.NoError(t, err, "the approver")
	_, err = dial(t, addr, servertest.OperatorToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "a ninth connection of eight")
	require.Equal(t, uint64(2), g.Server.Refusals()["overloaded"])
}

// TestConnectionsPerToken: one token holds at most ConnectionsPerTokenMax
// connections; one it closes is counted no more.
func TestConnectionsPerToken(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsPerTokenMax: 3}})
	addr := "unix:" + g.Unix
	var held []*client.Client
	for range 3 {
		c, err := dial(t, addr, servertest.ScopedToken)
		require.NoError(t, err)
		held = append(held, c)
	}
	_, err := dial(t, addr, servertest.ScopedToken)
	require.ErrorIs(t, err, proto.ErrOverloaded)
	require.ErrorContains(t, err, "overloaded")
	_, err = dial(t, addr, servertest.AgentToken)
	require.NoError(t, err, "another token is not held back")
	held[0].Close()
	require.Eventually(t, func() bool {
		c, err := client.Dial(context.Background(), addr, servertest.ScopedToken)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "a closed connection still counts")
}

// TestAdminListener: a listener served by ServeAdmin refuses agents and has
// connections of its own: with the other listener full of peers that never say
// hello, an operator still cancels through it.
func TestAdminListener(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 4, AdminConnectionsMax: 2}})
	adminPath := filepath.Join(t.TempDir(), "admin.sock")
	l, err := server.ListenUnix(adminPath)
	require.NoError(t, err)
	go g.Server.ServeAdmin(l)
	admin := "unix:" + adminPath

	for range 4 { // the shared listener, full of silent peers
		nc, err := net.Dial("unix", g.Unix)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
	}
	require.Eventually(t, func() bool { return g.Server.Connections() == 4 }, 10*time.Second, time.Millisecond)
	_, err = dial(t, "unix:"+g.Unix, servertest.OperatorToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "the shared listener is full")

	_, err = dial(t, admin, servertest.AgentToken)
	require.ErrorIs(t, err, proto.ErrForbidden, "an agent on the admin listener")
	require.Eventually(t, func() bool { return g.Server.Connections() == 4 }, 10*time.Second, time.Millisecond)
	op, err := dial(t, admin, servertest.OperatorToken)
	require.NoError(t, err)
	_, err = op.Open(context.Background(), "r1", 0)
	require.NoError(t, err)
	res, err := op.Cancel(context.Background(), "r1")
	require.NoError(t, err)
	require.Equal(t, "cancelled", res.Status.String())
	_, err = dial(t, admin, servertest.ApproverToken)
	require.NoError(t, err)
	_, err = dial(t, admin, servertest.OperatorToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "a third admin connection of two")
}

// TestLimitsThatLeaveAgentsNothing: a reserve as large as the pool is refused.
func TestLimitsThatLeaveAgentsNothing(t *testing.T) {
	n := node.New(node.Config{})
	defer n.Close()
	_, err := server.New(server.Config{Roles: servertest.Roles(), Node: n, Limits: server.Limits{ConnectionsMax: 4, ReservedConnections: 4}})
	require.ErrorIs(t, err, server.ErrLimits)
	_, err = server.New(server.Config{Roles: servertest.Roles(), Node: n, Limits: server.Limits{ConnectionsMax: 4, ReservedConnections: 3}})
	require.NoError(t, err)
}

// TestWaitersPerToken: one token's admits that wait for a decision are bounded
// (quota, saying which and how much), other tokens still wait, and a wait that ends,
// by its answer or with its connection, frees its place.
func TestWaitersPerToken(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WaitersPerTokenMax: 2}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op, approver := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken)
	for _, run := range []string{"r1", "team-a-1"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
		_, err = g.Dial(t, servertest.AgentToken).Admit(ctx, run, "gate", 1, client.AdmitOptions{Gated: true})
		require.NoError(t, err) // the run is held: every other admit of it waits
	}
	waitOpts := client.AdmitOptions{Wait: time.Minute}
	agent, other := g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.AgentToken)
	first := servertest.AdmitAsync(agent, "r1", "k1", 1, waitOpts)
	servertest.AdmitAsync(other, "r1", "k2", 1, waitOpts) // the same token, another connection
	require.Eventually(t, func() bool { return g.Node.Waiting() == 2 }, 10*time.Second, time.Millisecond)

	_, err := agent.Admit(ctx, "r1", "k3", 1, waitOpts)
	require.ErrorIs(t, err, proto.ErrQuota)
	require.ErrorContains(t, err, `token "agent" has 2 admits waiting`)
	res, err := agent.Admit(ctx, "r1", "k3", 1, client.AdmitOptions{})
	require.NoError(t, err, "an admit that does not wait is not held back")
	require.Equal(t, core.AnswerHeld, res.Answer)
	scoped := servertest.AdmitAsync(g.Dial(t, servertest.ScopedToken), "team-a-1", "k1", 1, waitOpts)
	require.Eventually(t, func() bool { return g.Node.Waiting() == 3 }, 10*time.Second, time.Millisecond, "another token waits")

	_, err = approver.Decide(ctx, "r1", "gate", core.Approve)
	require.NoError(t, err)
	require.NoError(t, (<-first).Err)
	// Both of the token's waits were answered, so its quota is free again.
	for i := range 2 {
		_, err := agent.Admit(ctx, "r1", fmt.Sprint("after-", i), 1, waitOpts)
		require.NoError(t, err)
	}
	_, err = approver.Decide(ctx, "team-a-1", "gate", core.Approve)
	require.NoError(t, err)
	require.NoError(t, (<-scoped).Err)
	require.Equal(t, uint64(1), g.Server.Refusals()["quota"])
}

// TestWaitersOfAClosedConnectionAreFreed: the waiters of a connection that goes away
// no longer count against its token.
func TestWaitersOfAClosedConnectionAreFreed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WaitersPerTokenMax: 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op := g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r1", 0)
	require.NoError(t, err)
	agent := g.Dial(t, servertest.AgentToken)
	_, err = agent.Admit(ctx, "r1", "gate", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	gone := g.Dial(t, servertest.AgentToken)
	servertest.AdmitAsync(gone, "r1", "k1", 1, client.AdmitOptions{Wait: time.Minute})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 10*time.Second, time.Millisecond)
	_, err = agent.Admit(ctx, "r1", "k2", 1, client.AdmitOptions{Wait: time.Minute})
	require.ErrorIs(t, err, proto.ErrQuota)
	gone.Close()
	require.Eventually(t, func() bool {
		r := servertest.AdmitAsync(agent, "r1", "k2", 1, client.AdmitOptions{Wait: time.Minute})
		select {
		case a := <-r:
			return a.Err == nil
		case <-time.After(100 * time.Millisecond):
			return true // it waits: the quota was freed
		}
	}, 10*time.Second, 10*time.Millisecond)
}

// TestRefusalsCountedAndLogged: every refusal (a forbidden call, an unknown token,
// a connection over the limit) is counted by kind and logged at most once a second
// per kind, naming the token by its name and never the token; each hello is logged
// at debug level, with the role and the token's name.
func TestRefusalsCountedAndLogged(t *testing.T) {
	var logs servertest.SyncBuffer
	g := servertest.Start(t, servertest.Options{
		Limits: server.Limits{ConnectionsMax: 2},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	for range 3 {
		_, err := agent.Decide(ctx, "r1", "k", core.Approve)
		require.ErrorIs(t, err, proto.ErrForbidden)
	}
	_, err := client.Dial(ctx, "unix:"+g.Unix, "not-a-token-of-this-gate-0123456789")
	require.ErrorIs(t, err, proto.ErrUnauthenticated)
	// The refused connection is counted until its transport has closed it.
	require.Eventually(t, func() bool { return g.Server.Connections() == 1 }, 10*time.Second, time.Millisecond)
	scoped := g.Dial(t, servertest.ScopedToken) // the second connection
	_, err = scoped.Admit(ctx, "team-b-1", "k", 1, client.AdmitOptions{})
	require.ErrorIs(t, err, proto.ErrForbidden)
	_, err = client.Dial(ctx, "unix:"+g.Unix, servertest.OperatorToken) // a third
	require.ErrorIs(t, err, proto.ErrOverloaded)

	require.Equal(t, map[string]uint64{"forbidden": 4, "unauthenticated": 1, "overloaded": 1}, g.Server.Refusals())
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "refusal=forbidden"), "rate-limited to a line a second:\n%s", out)
	require.Contains(t, out, "refusal=unauthenticated")
	require.Contains(t, out, "refusal=overloaded")
	require.Contains(t, out, "token_name=agent")
	require.Contains(t, out, `msg=hello`)
	require.Contains(t, out, "role=agent")
	for _, tok := range []string{servertest.AgentToken, servertest.ScopedToken, servertest.OperatorToken, "not-a-token-of-this-gate"} {
		require.NotContains(t, out, tok, "a token in the log")
	}
}
