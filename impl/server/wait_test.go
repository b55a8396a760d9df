package server_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

func waitHeld(t *testing.T, agent *client.Client, run, key string) {
	t.Helper()
	require.Eventually(t, func() bool {
		st, _ := agent.Status(context.Background(), run, key)
		return st.Effect != nil && st.Effect.Status == core.EffectHeld
	}, 5*time.Second, time.Millisecond)
}

// TestHeldIsAnsweredAfterDecision: a waiting admit is answered right after the
// decision that releases or denies it, and held when its wait runs out.
func TestHeldIsAnsweredAfterDecision(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	op, agent, approver := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	res, err := agent.Admit(ctx, "r", "gated", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)

	sibling := servertest.AdmitAsync(agent, "r", "sibling", 1, client.AdmitOptions{Wait: time.Minute})
	gated := servertest.AdmitAsync(agent, "r", "gated", 1, client.AdmitOptions{Wait: time.Minute})
	waitHeld(t, agent, "r", "sibling")
	select {
	case o := <-sibling:
		t.Fatalf("the sibling was answered during the pause: %+v", o)
	case <-time.After(50 * time.Millisecond):
	}
	_, err = approver.Decide(ctx, "r", "gated", core.Approve)
	require.NoError(t, err)
	for _, ch := range []<-chan servertest.Admitted{sibling, gated} {
		o := <-ch
		require.NoError(t, o.Err)
		require.Equal(t, core.AnswerAdmit, o.Res.Answer)
	}

	// A rejection answers the waiting sibling with denied(rejected).
	_, err = agent.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	sibling = servertest.AdmitAsync(agent, "r", "s2", 1, client.AdmitOptions{Wait: time.Minute})
	waitHeld(t, agent, "r", "s2")
	_, err = approver.Decide(ctx, "r", "g2", core.Reject)
	require.NoError(t, err)
	o := <-sibling
	require.NoError(t, o.Err)
	require.Equal(t, core.AnswerDenied, o.Res.Answer)
	require.Equal(t, core.ReasonRejected, o.Res.Reason)

	// The wait runs out: held.
	_, err = agent.Admit(ctx, "r", "g3", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	start := time.Now()
	res, err = agent.Admit(ctx, "r", "g3", 1, client.AdmitOptions{Wait: 30 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	// Cancel answers a waiting admit with denied(cancelled).
	gated = servertest.AdmitAsync(agent, "r", "g3", 1, client.AdmitOptions{Wait: time.Minute})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	o = <-gated
	require.NoError(t, o.Err)
	require.Equal(t, core.ReasonCancelled, o.Res.Reason)
}

// A waiting admit whose peer has gone is dropped, not admitted later for nobody.
func TestParkedAdmitOfGonePeerIsDropped(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: func() core.Time { return 1 }}})
	ctx := context.Background()
	op, ap, ag := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.AgentToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = ag.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	gone, err := client.Dial(ctx, g.Unix, servertest.AgentToken)
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	gone.Admit(cctx, "r", "k", 1, client.AdmitOptions{Wait: 5 * time.Minute})
	cancel()
	gone.Close() // the process that asked is gone
	require.Eventually(t, func() bool { return g.Node.Waiting() == 0 }, 5*time.Second, time.Millisecond)
	_, err = ap.Decide(ctx, "r", "g", core.Approve)
	require.NoError(t, err)
	st, err := ag.Status(ctx, "r", "k")
	require.NoError(t, err)
	require.NotEqual(t, core.EffectAdmitted, st.Effect.Status, "an admit was given to a disconnected peer")
	res, err := ag.Admit(ctx, "r", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer, "the retry gets the admit")
}

// When a re-ask times the run out in the middle of a wake, the admits kept as held
// are asked again and hear denied(timed_out) at once, not when their wait runs out.
func TestWaiterNotStrandedOnTimedOutRun(t *testing.T) {
	var armed, calls atomic.Int32
	now := func() core.Time {
		// Armed: the decide reads the clock first (call 1), the re-ask of a second
		// (call 2, still before the deadline), the re-ask of b third: past it.
		if armed.Load() == 1 && calls.Add(1) > 2 {
			return 2000
		}
		return 100
	}
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: now}})
	ctx := context.Background()
	op, ap, ag := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.AgentToken)
	_, err := op.Open(ctx, "r", time.Second) // deadline 1100
	require.NoError(t, err)
	ag.Admit(ctx, "r", "g1", 1, client.AdmitOptions{Gated: true})
	ag.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true})
	a := servertest.AdmitAsync(ag, "r", "a", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
	b := servertest.AdmitAsync(ag, "r", "b", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 2 }, 5*time.Second, time.Millisecond)
	armed.Store(1)
	start := time.Now()
	_, err = ap.Decide(ctx, "r", "g1", core.Approve) // g2 still pending: a stays held, b's re-ask times r out
	require.NoError(t, err)
	for _, ch := range []<-chan servertest.Admitted{a, b} {
		o := <-ch
		require.NoError(t, o.Err)
		require.Equal(t, core.ReasonTimedOut, o.Res.Reason)
	}
	require.Less(t, time.Since(start), 2*time.Second, "a waiter was stranded on a timed-out run")
}
