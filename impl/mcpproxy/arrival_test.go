package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

// numberOf reads the arrival number the filter wrote into a tools/call line.
func numberOf(t *testing.T, a *arrivals, line []byte) uint64 {
	t.Helper()
	var m struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(line, &m))
	return a.number(m.Params.Meta)
}

// TestArrivals: numbers follow the host's order, a call waits for the ones before it
// and no longer, a forged number counts for nothing, a lost predecessor delays the
// calls after it once, and an answer the SDK sends without calling the tool passes
// its number.
func TestArrivals(t *testing.T) {
	ctx := context.Background()
	call := func(id, meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"note","arguments":{}` + meta + `}}`)
	}
	t.Run("order", func(t *testing.T) {
		a := newArrivals()
		n1 := numberOf(t, a, a.arrive(call("1", ""), json.RawMessage("1")))
		n2 := numberOf(t, a, a.arrive(call(`"b"`, `,"_meta":{"soundgate/arrival":"forged-1","x":2}`), json.RawMessage(`"b"`)))
		require.Equal(t, []uint64{1, 2}, []uint64{n1, n2}, "the host's own value is replaced")
		require.NoError(t, a.wait(ctx, 1), "the first call waits for nobody")
		waited := make(chan error, 1)
		go func() { waited <- a.wait(ctx, 2) }()
		select {
		case err := <-waited:
			t.Fatalf("call 2 was let through before call 1 passed: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		a.pass(1)
		require.NoError(t, <-waited)
	})
	t.Run("forged", func(t *testing.T) {
		a := newArrivals()
		for _, v := range []any{"1", 1, a.nonce, a.nonce + "-x", "other-" + strings.Repeat("0", 16) + "-1", nil} {
			require.Zero(t, a.number(map[string]any{arrivalMeta: v}), "%v", v)
		}
		require.Equal(t, uint64(7), a.number(map[string]any{arrivalMeta: a.nonce + "-7"}))
	})
	t.Run("lost predecessor", func(t *testing.T) {
		a := newArrivals()
		a.waitMax = 30 * time.Millisecond
		for i := range 3 {
			a.arrive(call(fmt.Sprint(i), ""), json.RawMessage(fmt.Sprint(i)))
		}
		start := time.Now()
		err := a.wait(ctx, 3)
		require.ErrorContains(t, err, "were not all asked of the gate")
		require.GreaterOrEqual(t, time.Since(start), a.waitMax)
		require.NoError(t, a.wait(ctx, 3), "after the bound, the lost ones count as passed")
	})
	t.Run("answered without the tool", func(t *testing.T) {
		a := newArrivals()
		a.arrive(call(`"x-1"`, ""), json.RawMessage(`"x-1"`))
		a.arrive(call("2", ""), json.RawMessage("2"))
		a.answered(json.RawMessage(` "x-1" `))
		require.NoError(t, a.wait(ctx, 2))
	})
	t.Run("cancelled wait", func(t *testing.T) {
		a := newArrivals()
		a.arrive(call("1", ""), json.RawMessage("1"))
		a.arrive(call("2", ""), json.RawMessage("2"))
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		require.ErrorIs(t, a.wait(cctx, 2), context.Canceled)
	})
	t.Run("not an object", func(t *testing.T) {
		a := newArrivals()
		line := call("1", `,"_meta":[1]`)
		require.Equal(t, string(line), string(a.arrive(line, json.RawMessage("1"))), "left for the SDK to refuse")
	})
}

// rawCall is a tools/call line of the raw host.
func rawCall(id int, tool string, args any) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, mustJSON(args))
}

// rawInit initializes the raw host's session.
func (e *env) rawInit(t *testing.T) {
	e.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, `"id":1,"result"`)
	e.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, "")
}

// TestHostOrderKept: a model turn's gated call and its sibling, sent back to back,
// reach the gate in the host's order even when the gated call's gate round trip is
// slow, so the sibling is held (B1); the control without the numbering shows the
// sibling admitted and performed before any decision: the leak the order prevents.
func TestHostOrderKept(t *testing.T) {
	wire, sib := textArgs{Text: "wire-money"}, textArgs{Text: "tell-ops"}
	slow := func() map[string]time.Duration {
		return map[string]time.Duration{key("append", wire): 150 * time.Millisecond}
	}
	turn := rawCall(10, "append", wire) + "\n" + rawCall(11, "note", sib) + "\n"

	t.Run("ordered", func(t *testing.T) {
		e := newEnv(t, envOptions{rawHost: true, admitDelay: slow()})
		e.rawInit(t)
		_, err := e.rawIn.Write([]byte(turn))
		require.NoError(t, err)
		e.waitHeld(key("append", wire), key("note", sib))
		require.Empty(t, e.world.list(), "B1: the sibling reached the upstream before the decision")
		e.decide(key("append", wire), core.Approve)
		got := map[string]bool{}
		for range 2 {
			l := e.readLine(t)
			require.NotContains(t, l, `"isError":true`, l)
			got[l[:strings.Index(l, `,"result"`)]] = true
		}
		require.Len(t, got, 2)
		require.ElementsMatch(t, []string{"append:wire-money", "note:tell-ops"}, e.world.list())
	})
	t.Run("control: unordered", func(t *testing.T) {
		e := newEnv(t, envOptions{rawHost: true, unordered: true, admitDelay: slow()})
		e.rawInit(t)
		_, err := e.rawIn.Write([]byte(turn))
		require.NoError(t, err)
		l := e.readLine(t)
		require.Contains(t, l, `"id":11`, "the sibling is answered first, before any decision")
		require.Equal(t, []string{"note:tell-ops"}, e.world.list(), "the leak: performed while its gated call was not yet asked")
		e.waitHeld(key("append", wire))
		e.decide(key("append", wire), core.Reject)
		require.Contains(t, e.readLine(t), "NOT executed")
	})
}
