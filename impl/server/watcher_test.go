package server_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
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
	"github.com/soundgate/soundgate/impl/wal"
)

// Tests of the methods watch and unwatch: the inbox's changes as notifications on
// the connection (watcher.go, over the hub of watch.go).

// wireConn is a raw connection that tells the gate's answers from its notifications.
type wireConn struct {
	nc net.Conn
	rd *proto.Reader
}

func dialWire(t *testing.T, g *servertest.Gate) *wireConn {
	t.Helper()
	nc, err := net.Dial("unix", g.Unix)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &wireConn{nc: nc, rd: proto.NewAnswerReader(nc)}
}

func (w *wireConn) send(t *testing.T, line string) {
	t.Helper()
	_, err := w.nc.Write([]byte(line + "\n"))
	require.NoError(t, err)
}

// next reads the next line: an answer (resp) or a notification (ev, with its line).
func (w *wireConn) next(t *testing.T) (resp *proto.Response, ev *proto.InboxEvent, line string) {
	t.Helper()
	w.nc.SetReadDeadline(time.Now().Add(servertest.RawTimeout))
	b, err := w.rd.ReadLine()
	require.NoError(t, err, "read a line")
	line = string(b)
	if r, err := proto.DecodeResponse(b); err == nil {
		return &r, nil, line
	}
	method, params, err := proto.DecodeNotification(b)
	require.NoError(t, err, "%s is neither an answer nor a notification", line)
	require.Equal(t, proto.NotificationInbox, method)
	var e proto.InboxEvent
	require.NoError(t, e.UnmarshalJSON(params))
	return nil, &e, line
}

// answer reads the next line, which must be an answer, and returns "ok" for a result
// or the error's data.type.
func (w *wireConn) answer(t *testing.T) string {
	t.Helper()
	resp, ev, line := w.next(t)
	require.Nil(t, ev, "an answer, not the notification %s", line)
	if resp.Error != nil {
		return resp.Error.Type
	}
	return "ok"
}

// event reads the next line, which must be a notification, as "event run/key".
func (w *wireConn) event(t *testing.T) string {
	t.Helper()
	_, ev, line := w.next(t)
	require.NotNil(t, ev, "a notification, not the answer %s", line)
	return eventName(*ev)
}

func eventName(ev proto.InboxEvent) string {
	if ev.Event == proto.EventLost {
		return ev.Event
	}
	return ev.Event + " " + string(ev.Run) + "/" + string(ev.Key)
}

const (
	watchLine   = `{"jsonrpc":"2.0","id":1,"method":"watch","params":{}}`
	unwatchLine = `{"jsonrpc":"2.0","id":2,"method":"unwatch","params":{}}`
)

// TestWatchRefusals: who may watch, once per connection, with nothing in params; each
// refusal is typed, leaves the connection open, and subscribes nothing.
func TestWatchRefusals(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	for _, tc := range []struct {
		name, token string // "": no hello
		send, want  []string
		watching    int // connections that watch once the case is done
	}{
		{"no hello", "", []string{watchLine, unwatchLine}, []string{"hello_required", "hello_required"}, 0},
		{"an agent", servertest.AgentToken, []string{watchLine, unwatchLine}, []string{"forbidden", "forbidden"}, 0},
		{"unwatch first", servertest.ApproverToken, []string{unwatchLine}, []string{"not_watching"}, 0},
		{"params", servertest.OperatorToken, []string{`{"jsonrpc":"2.0","id":1,"method":"watch","params":{"run":"r"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"watch"}`}, []string{"unknown_field", "missing_field"}, 0},
		{"a second watch", servertest.ApproverToken, []string{watchLine, watchLine}, []string{"ok", "watch_repeated"}, 1},
		{"watch again after unwatch", servertest.OperatorToken, []string{watchLine, unwatchLine, unwatchLine, watchLine},
			[]string{"ok", "ok", "not_watching", "ok"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dialWire(t, g)
			defer w.nc.Close()
			if tc.token != "" {
				w.send(t, hello(tc.token))
				require.Equal(t, "ok", w.answer(t))
			}
			before := g.Server.Watches()
			for i, line := range tc.send {
				w.send(t, line)
				require.Equal(t, tc.want[i], w.answer(t), "answer to %s", line)
			}
			require.Equal(t, before+tc.watching, g.Server.Watches())
			w.send(t, statusLine(9))
			require.Contains(t, []string{"unknown_run", "hello_required", "forbidden"}, w.answer(t), "the connection stays open")
		})
	}
	require.Eventually(t, func() bool { return g.Server.Watches() == 0 }, 5*time.Second, time.Millisecond,
		"every closed connection's watch ended")

	c := g.Dial(t, servertest.AgentToken)
	_, err := c.Watch(context.Background())
	require.ErrorIs(t, err, proto.ErrForbidden)
	require.ErrorContains(t, err, "the agent role may not call watch")
}

// TestWatchesMax: at most Limits.WatchesMax connections watch at once; one more is
// refused with overloaded, and a watch that ends frees its place.
func TestWatchesMax(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WatchesMax: 2}})
	ctx := context.Background()
	a, b, c := g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken)
	wa, err := a.Watch(ctx)
	require.NoError(t, err)
	_, err = b.Watch(ctx)
	require.NoError(t, err)
	_, err = c.Watch(ctx)
	require.ErrorIs(t, err, proto.ErrOverloaded)
	require.ErrorContains(t, err, "2 connections watch the inbox")
	require.Equal(t, 2, g.Server.Watches(), "the refusal subscribed nothing")
	require.EqualValues(t, 1, g.Server.Refusals()["overloaded"])

	require.NoError(t, wa.Unwatch(ctx))
	_, err = c.Watch(ctx)
	require.NoError(t, err, "an unwatch frees a place")
	b.Close()
	require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond, "a closed connection frees its place")
	_, err = a.Watch(ctx)
	require.NoError(t, err)
}

// TestWatchEvents: each change of the inbox comes to every watch whose token covers
// the run, once, in the log's order, with what its approval says, after the watch's
// answer; the line is the protocol's.
func TestWatchEvents(t *testing.T) {
	clock := &servertest.Clock{}
	clock.Set(1_767_225_600_000)
	g := servertest.Start(t, servertest.Options{Roles: inboxRoles(t), Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent, ap := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	every, err := g.Dial(t, servertest.ApproverToken).Watch(ctx)
	require.NoError(t, err)
	teamA, err := g.Dial(t, scopedApproverToken).Watch(ctx)
	require.NoError(t, err)
	raw := dialWire(t, g)
	raw.send(t, hello(servertest.OperatorToken))
	require.Equal(t, "ok", raw.answer(t))
	raw.send(t, watchLine)
	_, _, line := raw.next(t)
	require.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"watching":true}}`, line)

	for _, run := range []string{"team-a-1", "team-b-1", "team-a-2", "team-a-3"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	admit := func(run, key, description string) {
		_, err := agent.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: true, Description: description, ArgsDigest: digest})
		require.NoError(t, err)
	}
	admit("team-a-1", "pay", "Pay \"ACME\"\nnow")
	_, _, line = raw.next(t)
	require.Equal(t, `{"jsonrpc":"2.0","method":"inbox","params":{"event":"pending","run":"team-a-1","key":"pay","since_ms":1767225600000,`+
		`"description":"Pay \"ACME\"\nnow","args_digest":"`+digest+`","at_ms":1767225600000}}`, line)
	clock.Set(1_767_225_605_000)
	admit("team-b-1", "mail", "")
	_, err = ap.DecideWith(ctx, "team-a-1", "pay", core.Approve, client.DecideOptions{Reason: "ok by finance"})
	require.NoError(t, err)
	_, _, line = raw.next(t)
	require.Contains(t, line, `"event":"pending","run":"team-b-1"`)
	_, _, line = raw.next(t)
	require.Equal(t, `{"jsonrpc":"2.0","method":"inbox","params":{"event":"approved","run":"team-a-1","key":"pay","since_ms":1767225600000,`+
		`"description":"Pay \"ACME\"\nnow","args_digest":"`+digest+`","reason":"ok by finance","at_ms":1767225605000}}`, line)
	admit("team-a-2", "x", "")
	admit("team-a-2", "y", "")
	_, err = ap.Decide(ctx, "team-a-2", "x", core.Reject)
	require.NoError(t, err)
	admit("team-a-3", "z", "")
	_, err = op.Cancel(ctx, "team-a-3")
	require.NoError(t, err)
	_, err = op.Fence(ctx, "team-b-1")
	require.NoError(t, err)

	want := []string{
		"pending team-a-1/pay", "pending team-b-1/mail", "approved team-a-1/pay",
		"pending team-a-2/x", "pending team-a-2/y", "rejected team-a-2/x", "rejected team-a-2/y",
		"pending team-a-3/z", "cancelled team-a-3/z", "fenced team-b-1/mail",
	}
	take := func(w *client.Watch, n int) []string {
		var got []string
		for range n {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			ev, err := w.Next(ctx)
			cancel()
			require.NoError(t, err, "after %v", got)
			got = append(got, eventName(ev))
		}
		return got
	}
	require.Equal(t, want, take(every, len(want)))
	var scoped []string
	for _, e := range want {
		if strings.Contains(e, "team-a-") {
			scoped = append(scoped, e)
		}
	}
	require.Equal(t, scoped, take(teamA, len(scoped)), "a token of team-a-* hears of its runs only")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = teamA.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "nothing of team-b-1")
	for _, e := range want[3:] { // the first three were read above
		require.Equal(t, e, raw.event(t))
	}
}

// TestWatchSlowSubscriber: a watch whose peer never reads its socket holds back no
// admit of another connection: every one is answered while the events pile up, the
// gate drops what the watch could not take, and once the peer reads it is told lost
// and then hears the newest events, in order.
func TestWatchSlowSubscriber(t *testing.T) {
	eachTransport(t, func(t *testing.T, goroutines bool) {
		// A peer that reads nothing for WriteTimeout is dropped: 3,000 admits under
		// -race on a busy machine took more than the default 10 s.
		g := servertest.Start(t, servertest.Options{Goroutines: goroutines, Limits: server.Limits{WriteTimeout: 5 * time.Minute}})
		ctx := context.Background()
		op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
		slow := dialWire(t, g)
		slow.send(t, hello(servertest.ApproverToken))
		slow.send(t, watchLine) // and read nothing, for now
		require.Eventually(t, func() bool { return g.Server.Watches() == 1 }, 5*time.Second, time.Millisecond)

		const runs, perRun = 4, 750 // 3,000 events of about 500 bytes: more than the socket, the outbox and the queue hold
		description := strings.Repeat("d", 400)
		for r := range runs {
			run := fmt.Sprint("r", r)
			_, err := op.Open(ctx, run, 0)
			require.NoError(t, err)
			for k := range perRun {
				actx, cancel := context.WithTimeout(ctx, 2*time.Second)
				res, err := agent.Admit(actx, run, fmt.Sprint(k), 1, client.AdmitOptions{Gated: true, Description: description})
				cancel()
				require.NoError(t, err, "admit %s/%d is answered while the watch does not read", run, k)
				require.Equal(t, core.AnswerHeld, res.Answer)
			}
		}
		require.Equal(t, 1, g.Server.Watches(), "the slow watch is still there")
		_, err := op.Cancel(ctx, "r3") // the last events: cancelled r3/0 .. r3/749
		require.NoError(t, err)

		require.Equal(t, "ok", slow.answer(t), "hello")
		require.Equal(t, "ok", slow.answer(t), "watch")
		var got []string
		for len(got) == 0 || got[len(got)-1] != "cancelled r3/749" {
			got = append(got, slow.event(t))
		}
		lost := slices.Index(got, proto.EventLost)
		require.GreaterOrEqual(t, lost, 0, "the watch is told it lost events")
		require.Less(t, len(got), runs*perRun+perRun, "events were dropped")
		require.NotContains(t, got[lost+1:], proto.EventLost, "told once")
		var want []string // everything, in order; what the watch heard is a part of it
		for r := range runs {
			for k := range perRun {
				want = append(want, fmt.Sprint("pending r", r, "/", k))
			}
		}
		for k := range perRun {
			want = append(want, fmt.Sprint("cancelled r3/", k))
		}
		before, after := got[:lost], got[lost+1:]
		t.Logf("heard %d of %d events: %d, lost, %d", len(got)-1, len(want), len(before), len(after))
		require.Equal(t, want[:len(before)], before, "before the loss, the first events in order")
		require.Equal(t, want[len(want)-len(after):], after, "after it, the newest events in order")
	})
}

// TestWatchEnds: after unwatch's answer no notification comes; a closed connection's
// watch ends; the gate's shutdown ends every watch, which the client reports as the
// connection's end.
func TestWatchEnds(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)

	w := dialWire(t, g)
	w.send(t, hello(servertest.ApproverToken))
	require.Equal(t, "ok", w.answer(t))
	w.send(t, watchLine)
	require.Equal(t, "ok", w.answer(t))
	_, err = agent.Admit(ctx, "r", "a", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	require.Equal(t, "pending r/a", w.event(t))
	w.send(t, unwatchLine)
	_, _, line := w.next(t)
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"watching":false}}`, line)
	require.Equal(t, 0, g.Server.Watches())
	_, err = agent.Admit(ctx, "r", "b", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	w.send(t, statusLine(3))
	resp, ev, line := w.next(t)
	require.Nil(t, ev, "no notification after unwatch: %s", line)
	require.Equal(t, proto.IntID(3), resp.ID)

	c := g.Dial(t, servertest.ApproverToken)
	cw, err := c.Watch(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, g.Server.Watches())
	c.Close()
	require.Eventually(t, func() bool { return g.Server.Watches() == 0 }, 5*time.Second, time.Millisecond, "a closed connection's watch ends")
	_, err = cw.Next(ctx)
	require.ErrorIs(t, err, client.ErrClosed)

	last, err := g.Dial(t, servertest.OperatorToken).Watch(ctx)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	done, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = last.Next(done)
	require.ErrorIs(t, err, client.ErrClosed, "the gate went away")
	require.False(t, errors.Is(err, context.DeadlineExceeded))
	require.Equal(t, 0, g.Server.Watches())
}

// TestWatchFailClosed: once the log fails, a watch is sent no change the log did
// not make durable: it is told lost, and the inbox asked again answers unavailable,
// as does a new watch.
func TestWatchFailClosed(t *testing.T) {
	l, err := wal.Open(filepath.Join(t.TempDir(), "data"), wal.Options{})
	require.NoError(t, err)
	defer l.Close()
	fl := &failingLog{inner: l}
	g := servertest.Start(t, servertest.Options{Node: node.Config{Log: fl}})
	ctx := context.Background()
	op, agent, ap := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	_, err = op.Open(ctx, "r", 0)
	require.NoError(t, err)
	w, err := ap.Watch(ctx)
	require.NoError(t, err)
	fl.failWD.Store(true)
	_, err = agent.Admit(ctx, "r", "k", 1, client.AdmitOptions{Gated: true})
	require.ErrorIs(t, err, proto.ErrUnavailable)
	ev, err := w.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, proto.EventLost, ev.Event, "not the pending event the log did not keep")
	_, err = ap.Pending(ctx, client.PendingOptions{})
	require.ErrorIs(t, err, proto.ErrUnavailable)
	_, err = g.Dial(t, servertest.OperatorToken).Watch(ctx)
	require.ErrorIs(t, err, proto.ErrUnavailable)
}

// TestInboxEventNames: every kind of the hub's events has its name on the wire.
func TestInboxEventNames(t *testing.T) {
	for _, k := range []server.InboxEventKind{server.EventPending, server.EventApproved, server.EventRejected,
		server.EventCancelled, server.EventFenced, server.EventTimedOut} {
		require.Contains(t, proto.InboxEvents, string(k))
	}
	require.Len(t, proto.InboxEvents, 7, "the six kinds and lost")
}
