package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestWaitsPerToken: one token's admits that wait for a decision are bounded
// (quota, saying which and how much), other tokens still wait, and a wait that ends,
// by its answer or with its connection, frees its place.
func TestWaitsPerToken(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WaitsPerTokenMax: 2}})
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

// TestWaitsOfAClosedConnectionAreFreed: the waits of a connection that goes away
// no longer count against its token.
func TestWaitsOfAClosedConnectionAreFreed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WaitsPerTokenMax: 1}})
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
