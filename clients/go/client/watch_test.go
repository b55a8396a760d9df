package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// next is one w.Next within five seconds, as "event run/key".
func next(t *testing.T, w *client.Watch) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := w.Next(ctx)
	require.NoError(t, err)
	if ev.Event == proto.EventLost {
		return ev.Event
	}
	return ev.Event + " " + string(ev.Run) + "/" + string(ev.Key)
}

// TestWatch: Watch hands out the gate's events in order, with their notes, while the
// connection's calls go on; a second Watch is refused before anything is sent;
// after Unwatch, Next ends with ErrUnwatched and the client may watch again.
func TestWatch(t *testing.T) {
	g, op := gateWithRun(t)
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	appr, cc := dialCounting(t, g.Unix, servertest.ApproverToken)
	w, err := appr.Watch(ctx)
	require.NoError(t, err)
	sent := cc.writes.Load()
	_, err = appr.Watch(ctx)
	require.ErrorIs(t, err, proto.ErrWatchRepeated)
	require.Equal(t, sent, cc.writes.Load(), "refused by the client: nothing sent")

	_, err = agent.Admit(ctx, "r", "wire", 1, client.AdmitOptions{Gated: true, Description: "Wire 120 EUR", ArgsDigest: client.ArgsDigest(nil)})
	require.NoError(t, err)
	ev, err := w.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, proto.InboxEvent{Event: "pending", Run: "r", Key: "wire", SinceMs: ev.AtMs, Description: "Wire 120 EUR",
		ArgsDigest: client.ArgsDigest(nil), AtMs: ev.AtMs}, ev)
	require.NotZero(t, ev.AtMs)
	page, err := appr.Pending(ctx, client.PendingOptions{})
	require.NoError(t, err, "calls and events share the connection")
	require.Len(t, page.Approvals, 1)
	_, err = appr.DecideWith(ctx, "r", "wire", core.Reject, client.DecideOptions{Reason: "no"})
	require.NoError(t, err)
	ev, err = w.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "rejected", ev.Event)
	require.Equal(t, "no", ev.Reason)

	require.NoError(t, w.Unwatch(ctx))
	_, err = w.Next(ctx)
	require.ErrorIs(t, err, client.ErrUnwatched)
	require.ErrorIs(t, w.Unwatch(ctx), proto.ErrNotWatching, "the gate says so")
	w2, err := appr.Watch(ctx)
	require.NoError(t, err, "a watch again after Unwatch")
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "late", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = w2.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a cancelled run opens no approval: nothing to tell")
}

// TestWatchOverflow: a taker that does not call Next never delays the connection's
// answers; past proto.WatchQueueMax events held, the client drops them and Next
// says lost first, then hands out what came after.
func TestWatchOverflow(t *testing.T) {
	g, op := gateWithRun(t)
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	appr := g.Dial(t, servertest.ApproverToken)
	w, err := appr.Watch(ctx)
	require.NoError(t, err)
	const n = proto.WatchQueueMax + 100
	for i := range n {
		run := fmt.Sprint("r", i/1000) // under the core's pending approvals per run
		if i%1000 == 0 {
			_, err := op.Open(ctx, run, 0)
			require.NoError(t, err)
		}
		_, err := agent.Admit(ctx, run, fmt.Sprint(i), 1, client.AdmitOptions{Gated: true})
		require.NoError(t, err)
		if i%100 == 0 {
			_, err := appr.Status(ctx, run, "")
			require.NoError(t, err, "the watching connection answers while its events pile up")
		}
	}
	require.Eventually(t, func() bool { _, lost := w.Queued(); return lost }, 5*time.Second, time.Millisecond)
	require.Equal(t, "lost", next(t, w))
	newest, after := fmt.Sprint("pending r1/", n-1), 0
	for ev := ""; ev != newest; after++ {
		ev = next(t, w)
		require.NotEqual(t, "lost", ev, "told once")
	}
	require.Less(t, after, proto.WatchQueueMax, "what came after the drop, up to the newest event")
}

// TestWatchGateGone: when the gate goes away, Next returns ErrClosed with the cause,
// and Watch on the closed client returns it too.
func TestWatchGateGone(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	c := g.Dial(t, servertest.OperatorToken)
	w, err := c.Watch(context.Background())
	require.NoError(t, err)
	require.NoError(t, g.Close())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = w.Next(ctx)
	require.ErrorIs(t, err, client.ErrClosed)
	require.False(t, errors.Is(err, context.DeadlineExceeded))
	_, err = c.Watch(ctx)
	require.ErrorIs(t, err, client.ErrClosed)
}
