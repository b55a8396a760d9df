package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestSetRolesClosesWhatItRevokes: a reload of the roles closes the connections of
// the tokens it removed or changed, and only those; hellos from then on see the new
// roles; and a connection that was revoked is refused whatever it sends.
func TestSetRolesClosesWhatItRevokes(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	agent, scoped, op := g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ScopedToken), g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r1", 0)
	require.NoError(t, err)

	const newApprover = "Pq7Lm2Xz9Rt4Wv6Ks3Nb8Hd5Gf1Jc0Ya"
	rs, err := server.ParseRoles([]byte(fmt.Sprintf(`{"tokens": [
		{"name": "agent", "token": %q, "role": "agent", "runs": ["*"]},
		{"name": "ops", "token": %q, "role": "operator", "runs": ["ops-*"]},
		{"name": "bob", "token": %q, "role": "approver", "runs": ["*"]}]}`,
		servertest.AgentToken, servertest.OperatorToken, newApprover)), server.RolesOptions{})
	require.NoError(t, err)
	closed, err := g.Server.SetRoles(rs)
	require.NoError(t, err)
	require.Equal(t, 2, closed, "the scoped agent (removed) and the operator (runs changed)")

	_, err = agent.Status(ctx, "r1", "")
	require.NoError(t, err, "an unchanged token keeps its connection")
	for name, c := range map[string]interface {
		Status(context.Context, string, string) (proto.StatusResult, error)
	}{"scoped": scoped, "operator": op} {
		_, err := c.Status(ctx, "r1", "")
		require.Error(t, err, "%s: a revoked connection still answered", name)
	}
	_, err = dial(t, "unix:"+g.Unix, servertest.ScopedToken)
	require.ErrorIs(t, err, proto.ErrUnauthenticated, "a removed token")
	op2, err := dial(t, "unix:"+g.Unix, servertest.OperatorToken)
	require.NoError(t, err)
	_, err = op2.Open(ctx, "ops-1", 0)
	require.NoError(t, err)
	_, err = op2.Open(ctx, "r2", 0)
	require.ErrorIs(t, err, proto.ErrForbidden, "the operator's new scope")
	_, err = dial(t, "unix:"+g.Unix, newApprover)
	require.NoError(t, err, "an added token")

	_, err = g.Server.SetRoles(nil)
	require.ErrorIs(t, err, server.ErrNoRoles)
}
