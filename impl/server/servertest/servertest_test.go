package servertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestStart: a started gate answers each token of the fixture (roles.json) with its
// role, on the socket and on TCP, and Raw speaks lines.
func TestStart(t *testing.T) {
	g := servertest.Start(t, servertest.Options{TCP: true})
	for token, role := range map[string]string{servertest.AgentToken: "agent", servertest.ScopedToken: "agent",
		servertest.ApproverToken: "approver", servertest.OperatorToken: "operator"} {
		require.Equal(t, role, g.Dial(t, token).Role.String())
	}
	c, err := client.Dial(context.Background(), g.TCP, servertest.OperatorToken)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Open(context.Background(), "r", 0)
	require.NoError(t, err)
	before := g.State(t)
	resp := g.Raw(t).Send(t, `{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"r"}}`)
	require.Equal(t, "hello_required", resp.Error.Type)
	require.Equal(t, before, g.State(t))
}

// TestProcess: the real binary starts, is killed, starts again on the same data and
// stops cleanly; what it answered before the kill is there after it.
func TestProcess(t *testing.T) {
	ctx := context.Background()
	bin, err := servertest.Build(ctx, t.TempDir())
	require.NoError(t, err)
	p, err := servertest.NewProcess(bin, []string{"serve"}, t.TempDir())
	require.NoError(t, err)
	require.NoError(t, p.Start(ctx))
	require.True(t, p.Running())
	op, err := client.Dial(ctx, p.TCP, servertest.OperatorToken)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r", 0)
	require.NoError(t, err)
	op.Close()
	p.Kill()
	require.False(t, p.Running())
	require.NoError(t, p.Start(ctx))
	require.Contains(t, p.Log(), "msg=recovered", "the log of this life")
	agent, err := client.Dial(ctx, "unix:"+p.Unix, servertest.AgentToken)
	require.NoError(t, err)
	st, err := agent.Status(ctx, "r", "")
	require.NoError(t, err)
	require.Equal(t, core.RunActive, st.Status, "the open survived the kill")
	agent.Close()
	require.NoError(t, p.Stop())
}
