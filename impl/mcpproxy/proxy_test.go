package mcpproxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// The probes' rules (probes/go/harness/rules.go, Apply), restated on the world's event
// log, since the probes are a module of their own:
//   B1: no effect of a paused plan before its decision (siblings of a gated call included);
//   B2: no effect of a rejected plan, before or after the rejection;
//   B3: no effect key performed more than once (replays included);
//   B4: no effect after a stop (cancel) of its run.

// TestSiblingsHeldThenApproved: while a gated call waits for approval, parallel
// ungated calls are held too and nothing reaches the upstream (B1); after the
// approval each is performed exactly once, and a replay of each is answered from the
// record without forwarding (B3).
func TestSiblingsHeldThenApproved(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	wire := textArgs{Text: "wire-money"}
	gated := e.callAsync(ctx, "append", wire)
	e.waitHeld(key("append", wire))
	var siblings []<-chan callResult
	var keys []string
	for i := range 4 {
		a := textArgs{Text: fmt.Sprintf("sibling-%d", i)}
		siblings = append(siblings, e.callAsync(ctx, "note", a))
		keys = append(keys, key("note", a))
	}
	e.waitHeld(keys...)
	time.Sleep(200 * time.Millisecond) // two progress intervals: still nothing
	requireOpen(t, append(siblings, gated)...)
	require.Empty(t, e.world.list(), "B1: an effect reached the upstream before the decision")

	e.decide(key("append", wire), core.Approve)
	first := map[string]string{}
	r := recv(t, gated)
	require.NoError(t, r.err)
	require.False(t, r.res.IsError, text(r.res))
	require.Contains(t, text(r.res), `appended "wire-money"`)
	first["append"] = text(r.res)
	for i, ch := range siblings {
		r := recv(t, ch)
		require.NoError(t, r.err)
		require.False(t, r.res.IsError, text(r.res))
		first[fmt.Sprint(i)] = text(r.res)
	}
	require.Equal(t, 1, e.world.count("append:wire-money"), "B3")
	for i := range 4 {
		require.Equal(t, 1, e.world.count(fmt.Sprintf("note:sibling-%d", i)), "B3")
	}
	require.Len(t, e.world.list(), 5)

	// Replays: the same arguments, new JSON-RPC ids; answered from the record.
	res, err := e.call(ctx, "append", wire, nil)
	require.NoError(t, err)
	require.Equal(t, first["append"], text(res))
	require.Equal(t, "duplicate", res.Meta["soundgate/answer"])
	for i := range 4 {
		res, err := e.call(ctx, "note", textArgs{Text: fmt.Sprintf("sibling-%d", i)}, nil)
		require.NoError(t, err)
		require.Equal(t, first[fmt.Sprint(i)], text(res))
	}
	require.Len(t, e.world.list(), 5, "B3: a replay reached the upstream")
}

// TestSiblingsRejected: a rejection denies the gated call and every held sibling,
// none is forwarded (B2), and each answer says it was not executed and must not be
// retried; a retry is denied again.
func TestSiblingsRejected(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	wire := textArgs{Text: "wire-money"}
	gated := e.callAsync(ctx, "append", wire)
	e.waitHeld(key("append", wire))
	var siblings []<-chan callResult
	for i := range 3 {
		a := textArgs{Text: fmt.Sprintf("sibling-%d", i)}
		siblings = append(siblings, e.callAsync(ctx, "note", a))
		e.waitHeld(key("note", a))
	}
	e.decide(key("append", wire), core.Reject)
	for _, ch := range append(siblings, gated) {
		r := recv(t, ch)
		requireNotExecuted(t, r, "rejected", "must not be retried")
		require.Equal(t, "denied", r.res.Meta["soundgate/answer"])
	}
	r, err := e.call(ctx, "note", textArgs{Text: "sibling-0"}, nil)
	requireNotExecuted(t, callResult{r, err}, "rejected")
	require.Empty(t, e.world.list(), "B2: an effect of a rejected plan reached the upstream")
}

// TestRunCancelled: an operator's cancel answers every held call denied (cancelled),
// and nothing is forwarded then or later (B4).
func TestRunCancelled(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	wire := textArgs{Text: "wire-money"}
	gated := e.callAsync(ctx, "append", wire)
	e.waitHeld(key("append", wire))
	sib := e.callAsync(ctx, "note", textArgs{Text: "s"})
	e.waitHeld(key("note", textArgs{Text: "s"}))
	_, err := e.op.Cancel(ctx, run)
	require.NoError(t, err)
	for _, ch := range []<-chan callResult{gated, sib} {
		requireNotExecuted(t, recv(t, ch), "cancelled", "must not be retried")
	}
	r, err := e.call(ctx, "note", textArgs{Text: "after"}, nil)
	requireNotExecuted(t, callResult{r, err}, "cancelled")
	require.Empty(t, e.world.list(), "B4: an effect after the cancel")
}

// TestFenceBeforeFirstCall: the proxy's attempt of its --run begins when it starts, so
// a Fence before its first call denies that call (stale_epoch) instead of letting the
// proxy learn the new epoch then (B4 for a timeout that fences before the agent acts).
func TestFenceBeforeFirstCall(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	_, err := e.op.Fence(ctx, run)
	require.NoError(t, err)
	r, err := e.call(ctx, "note", textArgs{Text: "late"}, nil)
	requireNotExecuted(t, callResult{r, err}, "stale_epoch")
	require.Empty(t, e.world.list(), "B4: an effect of a fenced attempt")
}

// TestUngatedCallsRun: with nothing pending, an ungated call is admitted and forwarded
// at once, and its effect is completed at the gate with its record.
func TestUngatedCallsRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	r, err := e.call(ctx, "note", textArgs{Text: "x"}, nil)
	require.NoError(t, err)
	require.Equal(t, "noted 1", text(r))
	st, err := e.agent.Status(ctx, run, key("note", textArgs{Text: "x"}))
	require.NoError(t, err)
	require.Equal(t, core.EffectCompleted, st.Effect.Status)
	require.Equal(t, core.OutcomeOK, st.Effect.Outcome)
	require.Contains(t, st.Effect.Result, `"sha256":`)
	require.Contains(t, st.Effect.Result, `noted 1`)
}

// TestHostCancelsHeldCall: a notifications/cancelled from the host ends the wait,
// changes nothing at the gate and approves nothing; a later approval forwards
// nothing (the call is gone).
func TestHostCancelsHeldCall(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := textArgs{Text: "held"}
	ctx, cancel := context.WithCancel(context.Background())
	ch := e.callAsync(ctx, "append", a)
	e.waitHeld(key("append", a))
	cancel()
	r := recv(t, ch)
	require.ErrorIs(t, r.err, context.Canceled)
	require.Equal(t, core.EffectHeld, e.effect(key("append", a)), "the host's cancel changed the gate")
	e.decide(key("append", a), core.Approve)
	time.Sleep(500 * time.Millisecond) // five of the proxy's ask intervals
	require.Empty(t, e.world.list(), "a cancelled call was forwarded")
	st, err := e.agent.Status(context.Background(), run, key("append", a))
	require.NoError(t, err)
	if st.Effect.Status == core.EffectCompleted { // an ask in flight was admitted: recorded as not performed
		require.Equal(t, core.OutcomeFailed, st.Effect.Outcome)
		require.Contains(t, st.Effect.Result, "not performed")
	} else {
		require.Equal(t, core.EffectReleased, st.Effect.Status)
	}
}

// TestProgressWhileHeld: a held call whose host gave a progress token gets progress
// notifications until the decision.
func TestProgressWhileHeld(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := textArgs{Text: "p"}
	ch := make(chan callResult, 1)
	go func() {
		r, err := e.call(context.Background(), "append", a, mcp.Meta{"progressToken": "tok-1"})
		ch <- callResult{r, err}
	}()
	for range 2 {
		select {
		case p := <-e.progress:
			require.Equal(t, "tok-1", p.ProgressToken)
			require.Contains(t, p.Message, "waiting for approval")
		case <-time.After(10 * time.Second):
			t.Fatal("no progress notification while held")
		}
	}
	requireOpen(t, ch)
	e.decide(key("append", a), core.Approve)
	r := recv(t, ch)
	require.NoError(t, r.err)
	require.False(t, r.res.IsError)
	require.Equal(t, 1, e.world.count("append:p"))
}

// TestDeferred: a held call is answered at once, pending approval; the retry with the
// same arguments gets the decision, and runs once.
func TestDeferred(t *testing.T) {
	e := newEnv(t, envOptions{deferred: true})
	ctx := context.Background()
	a := textArgs{Text: "d"}
	r, err := e.call(ctx, "append", a, nil)
	requireNotExecuted(t, callResult{r, err}, "pending approval", "call again with the same arguments")
	require.Equal(t, "held", r.Meta["soundgate/answer"])
	require.Equal(t, core.EffectHeld, e.effect(key("append", a)))
	e.decide(key("append", a), core.Approve)
	r, err = e.call(ctx, "append", a, nil)
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	r, err = e.call(ctx, "append", a, nil)
	require.NoError(t, err)
	require.Equal(t, "duplicate", r.Meta["soundgate/answer"])
	require.Equal(t, []string{"append:d"}, e.world.list())
}

// TestMaxHold: a call held past the maximum hold is answered not executed, still
// pending; nothing is forwarded and the gate still holds it.
func TestMaxHold(t *testing.T) {
	e := newEnv(t, envOptions{maxHold: 300 * time.Millisecond})
	a := textArgs{Text: "m"}
	r, err := e.call(context.Background(), "append", a, nil)
	requireNotExecuted(t, callResult{r, err}, "maximum hold", "still pending")
	require.Equal(t, core.EffectHeld, e.effect(key("append", a)))
	require.Empty(t, e.world.list())
}

// TestToolErrorRecordedFailed: a result with isError completes the effect failed; its
// replay is the recorded result, not a second call.
func TestToolErrorRecordedFailed(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	a := textArgs{Text: "f"}
	r, err := e.call(ctx, "fail", a, nil)
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Equal(t, "disk full", text(r))
	st, err := e.agent.Status(ctx, run, key("fail", a))
	require.NoError(t, err)
	require.Equal(t, core.OutcomeFailed, st.Effect.Outcome)
	r, err = e.call(ctx, "fail", a, nil)
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Equal(t, "disk full", text(r))
	require.Equal(t, []string{"fail:f"}, e.world.list())
}

// TestResultTooLarge: a result past the gate's limit reaches the host whole, is
// recorded by digest only, and its replay says the call was performed and its result
// is not available (never a cut result), without forwarding.
func TestResultTooLarge(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	a := textArgs{Text: "b"}
	r, err := e.call(ctx, "big", a, nil)
	require.NoError(t, err)
	require.Len(t, text(r), 2*16384)
	r, err = e.call(ctx, "big", a, nil)
	requireNotExecuted(t, callResult{r, err}, "already performed", "too large to record")
	require.Equal(t, []string{"big:b"}, e.world.list())
}

// TestBadCalls: a bad run or key in _meta, arguments past the proxy's limit, an
// unknown tool, a run that is not open: each a clear error, nothing forwarded.
func TestBadCalls(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	for name, c := range map[string]struct {
		meta mcp.Meta
		args any
		want string
	}{
		"run not a string": {mcp.Meta{MetaRun: 7}, textArgs{"x"}, `_meta["soundgate/run"] must be a string`},
		"key too long":     {mcp.Meta{MetaKey: strings.Repeat("k", 257)}, textArgs{"x"}, "over the gate's limit of 256"},
		"run not open":     {mcp.Meta{MetaRun: "never-opened"}, textArgs{"x"}, "unknown run"},
		"huge arguments":   {nil, textArgs{strings.Repeat("a", ArgsBytesMax)}, "over the proxy's limit"},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := e.call(ctx, "note", c.args, c.meta)
			requireNotExecuted(t, callResult{r, err}, c.want)
		})
	}
	_, err := e.call(ctx, "no-such-tool", textArgs{"x"}, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "unknown tool")
	require.Empty(t, e.world.list())

	// A run and a key from _meta are the ones asked.
	_, err = e.op.Open(ctx, "run-2", 0)
	require.NoError(t, err)
	r, err := e.call(ctx, "note", textArgs{"y"}, mcp.Meta{MetaRun: "run-2", MetaKey: "my-key"})
	require.NoError(t, err)
	require.False(t, r.IsError, text(r))
	st, err := e.agent.Status(ctx, "run-2", "my-key")
	require.NoError(t, err)
	require.Equal(t, core.EffectCompleted, st.Effect.Status)
	r, err = e.call(ctx, "note", textArgs{"other args, same key"}, mcp.Meta{MetaRun: "run-2", MetaKey: "my-key"})
	require.NoError(t, err)
	require.Equal(t, "duplicate", r.Meta["soundgate/answer"])
	require.Equal(t, []string{"note:y"}, e.world.list())
}

// TestUpstreamDies: an upstream that dies with a call in flight: the host hears that
// whether the tool acted is unknown (recorded failed); later calls hear that the
// upstream exited, and nothing is forwarded.
func TestUpstreamDies(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	r, err := e.call(ctx, "crash", textArgs{"c"}, nil)
	require.NoError(t, err)
	require.True(t, r.IsError)
	require.Contains(t, text(r), "whether the tool acted is unknown")
	st, err := e.agent.Status(ctx, run, key("crash", textArgs{"c"}))
	require.NoError(t, err)
	require.Equal(t, core.OutcomeFailed, st.Effect.Outcome)
	require.Eventually(t, func() bool {
		r, err := e.call(ctx, "note", textArgs{"n"}, nil)
		return err == nil && r.IsError && strings.Contains(text(r), "exited")
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, []string{"crash:c"}, e.world.list())
	require.Equal(t, core.EffectAbsent, e.effect(key("note", textArgs{"n"})), "a call to a dead upstream was asked of the gate")
}

// TestHostDisconnectsMidHold: the host goes away while a call is held: the proxy
// returns cleanly, and a later approval forwards nothing.
func TestHostDisconnectsMidHold(t *testing.T) {
	e := newEnv(t, envOptions{})
	a := textArgs{Text: "h"}
	e.callAsync(context.Background(), "append", a)
	e.waitHeld(key("append", a))
	e.hostConn.die()
	select {
	case <-e.proxyDone:
		require.NoError(t, e.proxyErr)
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not return after the host left")
	}
	e.decide(key("append", a), core.Approve)
	time.Sleep(200 * time.Millisecond)
	require.Empty(t, e.world.list())
}

// TestToolsPassedThrough: the host sees the upstream's tools, names, schemas and
// annotations unchanged, and a tool added upstream later (with a list-changed
// notification to the host).
func TestToolsPassedThrough(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx := context.Background()
	direct := directSession(t, upstreamServer(&world{}, func() {}))
	want, err := direct.ListTools(ctx, nil)
	require.NoError(t, err)
	got, err := e.host.ListTools(ctx, nil)
	require.NoError(t, err)
	require.JSONEq(t, mustJSON(want.Tools), mustJSON(got.Tools))

	mcp.AddTool(e.up, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	select {
	case <-e.listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed after the upstream added a tool")
	}
	require.Eventually(t, func() bool {
		got, err := e.host.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		for _, tl := range got.Tools {
			if tl.Name == "late" {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond)

	e.up.RemoveTools("late")
	require.Eventually(t, func() bool {
		got, err := e.host.ListTools(ctx, nil)
		return err == nil && len(got.Tools) == len(want.Tools)
	}, 10*time.Second, 20*time.Millisecond, "a tool removed upstream is still listed")
	_, err = e.call(ctx, "late", struct{}{}, nil)
	require.ErrorContains(t, err, "unknown tool")
}

// directSession connects a client straight to s (no proxy).
func directSession(t testing.TB, s *mcp.Server) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	go s.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close(); cancel() })
	return cs
}
