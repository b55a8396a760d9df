package server_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

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
