package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// Tests of the inbox's subscriptions (Server.Subscribe): what each change tells, to
// whom, and what a subscriber that does not read gets.

// nextEvents is one Next of sub, as "kind run/key", within a second.
func nextEvents(t *testing.T, sub *server.Subscription) (evs []string, lost bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	got, lost, closed, err := sub.Next(ctx)
	require.NoError(t, err)
	require.False(t, closed)
	for _, ev := range got {
		evs = append(evs, string(ev.Kind)+" "+string(ev.Approval.Run)+"/"+string(ev.Approval.Key))
	}
	return evs, lost
}

// TestSubscriptionEvents: each change of the inbox is told once, with its kind, to
// the subscribers whose scope covers the run, in the log's order.
func TestSubscriptionEvents(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Roles: inboxRoles(t)})
	ctx := context.Background()
	op, agent, ap := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	every := g.Server.Subscribe(nil, 0)
	defer every.Close()
	cred, ok := inboxRoles(t).Lookup(scopedApproverToken)
	require.True(t, ok)
	teamA := g.Server.Subscribe(cred.Allows, 0)
	defer teamA.Close()

	for _, run := range []string{"team-a-1", "team-b-1", "team-a-2", "team-a-3"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	admit := func(run, key string) {
		_, err := agent.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: true, Description: "send " + key})
		require.NoError(t, err)
	}
	admit("team-a-1", "pay")
	admit("team-b-1", "mail")
	evs, lost := nextEvents(t, every)
	require.False(t, lost)
	require.Equal(t, []string{"pending team-a-1/pay", "pending team-b-1/mail"}, evs)
	evs, _ = nextEvents(t, teamA)
	require.Equal(t, []string{"pending team-a-1/pay"}, evs, "a scoped subscriber hears of its runs only")

	_, err := ap.DecideWith(ctx, "team-a-1", "pay", core.Approve, client.DecideOptions{Reason: "ok by finance"})
	require.NoError(t, err)
	admit("team-a-2", "x")
	admit("team-a-2", "y")
	_, err = ap.Decide(ctx, "team-a-2", "x", core.Reject)
	require.NoError(t, err)
	admit("team-a-3", "z")
	_, err = op.Cancel(ctx, "team-a-3")
	require.NoError(t, err)
	admit("team-b-1", "other") // a second approval of the run
	_, err = op.Fence(ctx, "team-b-1")
	require.NoError(t, err)

	want := []string{
		"approved team-a-1/pay",
		"pending team-a-2/x", "pending team-a-2/y",
		"rejected team-a-2/x", "rejected team-a-2/y", // a reject covers the run's plan (P2)
		"pending team-a-3/z", "cancelled team-a-3/z",
		"pending team-b-1/other", "fenced team-b-1/mail", "fenced team-b-1/other",
	}
	var all []string
	for len(all) < len(want) {
		evs, lost := nextEvents(t, every)
		require.False(t, lost)
		all = append(all, evs...)
	}
	require.Equal(t, want, all)
	var scoped []string
	for len(scoped) < 7 {
		evs, _ := nextEvents(t, teamA)
		scoped = append(scoped, evs...)
	}
	require.Equal(t, want[:7], scoped, "team-a-* only")
	ctx2, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, _, _, err = teamA.Next(ctx2)
	require.ErrorIs(t, err, context.DeadlineExceeded, "nothing of team-b-1")
}

// TestSubscriptionOverflow: a subscriber that does not read loses its queue, is
// told so once, and hears what comes after; admits are answered all along.
func TestSubscriptionOverflow(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Node: node.Config{}})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	sub := g.Server.Subscribe(nil, 4)
	defer sub.Close()
	for i := range 6 {
		run := "r" + string(rune('0'+i))
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
		_, err = agent.Admit(ctx, run, "k", 1, client.AdmitOptions{Gated: true})
		require.NoError(t, err)
	}
	evs, lost := nextEvents(t, sub)
	require.True(t, lost, "six events into a queue of four")
	require.Equal(t, []string{"pending r4/k", "pending r5/k"}, evs, "what came after the overflow")
	_, err := op.Cancel(ctx, "r5")
	require.NoError(t, err)
	evs, lost = nextEvents(t, sub)
	require.False(t, lost, "told once")
	require.Equal(t, []string{"cancelled r5/k"}, evs)
}

// TestSubscriptionClose: Next returns closed after Close and after the server's
// shutdown, and a context's end as its error.
func TestSubscriptionClose(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	sub := g.Server.Subscribe(nil, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, _, err := sub.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	sub.Close()
	_, _, closed, err := sub.Next(context.Background())
	require.NoError(t, err)
	require.True(t, closed)

	other := g.Server.Subscribe(nil, 0)
	require.NoError(t, g.Close())
	_, _, closed, err = other.Next(context.Background())
	require.NoError(t, err)
	require.True(t, closed)
}
