package server_test

import (
	"context"
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

// secondOperatorToken is an operator of every run besides the fixture's "ops".
const secondOperatorToken = "second-operator-token-0123456789ab"

// quotaRetention is the retention of quotaGate's node; its clock moves by hand.
const quotaRetention = 10 * time.Second

// quotaGate starts a gate with limits, the roles fixture and a second operator
// ("ops2"), and a node that retires finished runs after quotaRetention on clock, when
// the test calls RetireDue (its own ticker never fires during a test).
func quotaGate(t *testing.T, limits server.Limits) (*servertest.Gate, *servertest.Clock) {
	t.Helper()
	roles := strings.Replace(servertest.RolesJSON, "\n]}", `,
  {"name": "ops2", "token": "`+secondOperatorToken+`", "role": "operator", "runs": ["*"]}
]}`, 1)
	rs, err := server.ParseRoles([]byte(roles), server.RolesOptions{})
	require.NoError(t, err)
	clock := &servertest.Clock{}
	clock.Set(1_000)
	g := servertest.Start(t, servertest.Options{Roles: rs, Limits: limits,
		Node: node.Config{Now: clock.Now, Retention: quotaRetention, RetireCheck: time.Hour}})
	return g, clock
}

// retireAll moves clock past the retention period and retires what is due.
func retireAll(t *testing.T, g *servertest.Gate, clock *servertest.Clock) {
	t.Helper()
	clock.Set(clock.Now() + core.Time(quotaRetention.Milliseconds()))
	require.Positive(t, g.Node.RetireDue(), "no run retired")
}

// requireQuota: err is the refusal quota and says which quota and how much; it
// changed nothing (the state is before) and left c's connection open.
func requireQuota(t *testing.T, g *servertest.Gate, c *client.Client, err error, says string, before []byte) {
	t.Helper()
	require.ErrorIs(t, err, proto.ErrQuota)
	require.ErrorContains(t, err, says)
	require.Equal(t, before, g.State(t), "a refusal changed the state")
	_, err = c.Status(context.Background(), "r1", "")
	require.NoError(t, err, "the connection did not stay open")
}

// TestRunsPerToken: one token's runs that are not retired are bounded (quota, saying
// which and how much); an open of a run that exists does not count, and is answered
// even at the quota (a retry whose answer was lost); another token still opens; a
// retired run gives its count back.
func TestRunsPerToken(t *testing.T) {
	g, clock := quotaGate(t, server.Limits{RunsPerTokenMax: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op, other := g.Dial(t, servertest.OperatorToken), g.Dial(t, secondOperatorToken)
	for _, o := range []struct {
		run     string
		created bool
	}{{"r1", true}, {"r1", false}, {"r2", true}, {"r2", false}} {
		res, err := op.Open(ctx, o.run, 0)
		require.NoError(t, err, "open %s", o.run)
		require.Equal(t, o.created, res.Created, "open %s", o.run)
	}
	before := g.State(t)
	_, err := op.Open(ctx, "r3", 0)
	requireQuota(t, g, op, err, `token "ops" has opened 2 runs that are not retired yet`, before)
	res, err := other.Open(ctx, "r3", 0)
	require.NoError(t, err, "another token was held back")
	require.True(t, res.Created)

	_, err = op.Cancel(ctx, "r1")
	require.NoError(t, err)
	_, err = g.Dial(t, servertest.AgentToken).Admit(ctx, "r2", "k", 1, client.AdmitOptions{})
	require.NoError(t, err) // admitted, not completed: r2 is not finished
	retireAll(t, g, clock)  // r1 and r3
	_, err = op.Open(ctx, "r1", 0)
	require.ErrorIs(t, err, core.ErrRunRetired, "an open of a retired run at the quota is answered as it is")
	_, err = op.Open(ctx, "r4", 0)
	require.NoError(t, err, "the retired run did not give its count back")
	_, err = op.Open(ctx, "r5", 0)
	require.ErrorIs(t, err, proto.ErrQuota)
	require.Equal(t, uint64(2), g.Server.Refusals()["quota"])
}

// TestResultBytesPerToken: one token's result bytes in runs that are not retired are
// bounded (quota, saying which and how much); a repeat complete does not count twice
// and is answered even at the quota, a complete the core refuses gives its bytes
// back, another token still records, and a retired run gives its bytes back.
func TestResultBytesPerToken(t *testing.T) {
	g, clock := quotaGate(t, server.Limits{ResultBytesPerTokenMax: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	op, agent, scoped := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ScopedToken)
	for _, run := range []string{"r1", "team-a-1"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	for _, k := range []string{"k1", "k2", "k3"} {
		_, err := agent.Admit(ctx, "r1", k, 1, client.AdmitOptions{})
		require.NoError(t, err)
	}
	bytes := func(n int) string { return strings.Repeat("x", n) }
	for _, c := range []struct {
		key    string
		result string
		repeat bool
		err    error
	}{
		{"k1", bytes(30), false, nil},
		{"k1", bytes(30), true, nil},                     // a repeat: counted once
		{"never", bytes(70), false, core.ErrNotAdmitted}, // refused by the core: given back
		{"k1", bytes(70), false, core.ErrConflict},       // likewise
		{"k2", bytes(70), false, nil},                    // 100 of 100
		{"k1", bytes(30), true, nil},                     // a repeat at the quota: answered
	} {
		res, err := agent.Complete(ctx, "r1", c.key, core.OutcomeOK, c.result)
		if c.err != nil {
			require.ErrorIs(t, err, c.err, "complete %s with %d bytes", c.key, len(c.result))
			continue
		}
		require.NoError(t, err, "complete %s with %d bytes", c.key, len(c.result))
		require.Equal(t, c.repeat, res.Repeat, "complete %s", c.key)
	}
	before := g.State(t)
	_, err := agent.Complete(ctx, "r1", "k3", core.OutcomeOK, bytes(1))
	requireQuota(t, g, agent, err, `token "agent" holds 100 bytes of results in runs not retired yet; 1 more would pass its most, 100`, before)
	_, err = agent.Complete(ctx, "r1", "k3", core.OutcomeOK, "")
	require.NoError(t, err, "a complete without a result is not held back")
	_, err = scoped.Admit(ctx, "team-a-1", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	_, err = scoped.Complete(ctx, "team-a-1", "k", core.OutcomeOK, bytes(100))
	require.NoError(t, err, "another token was held back")

	retireAll(t, g, clock) // r1 and team-a-1: each effect is completed
	_, err = op.Open(ctx, "r2", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r2", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	_, err = agent.Complete(ctx, "r2", "k", core.OutcomeOK, bytes(100))
	require.NoError(t, err, "the retired run did not give its bytes back")
	require.Equal(t, uint64(1), g.Server.Refusals()["quota"])
}
