package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

// Tests of what an approval says on the wire (description, args_digest, reason) and
// of the inbox (the method pending).

var digest = client.ArgsDigest([]byte(`{"to":"ACME","eur":120}`))

// inboxRoles adds to the fixture's tokens an approver of the runs team-a-* only.
const scopedApproverToken = "approver-a-token-0123456789abcdefg"

func inboxRoles(t *testing.T) *server.Roles {
	t.Helper()
	rs, err := server.ParseRoles([]byte(`{"tokens": [
  {"name": "agent", "token": "`+servertest.AgentToken+`", "role": "agent", "runs": ["*"]},
  {"name": "alice", "token": "`+servertest.ApproverToken+`", "role": "approver", "runs": ["*"]},
  {"name": "bob", "token": "`+scopedApproverToken+`", "role": "approver", "runs": ["team-a-*"]},
  {"name": "ops", "token": "`+servertest.OperatorToken+`", "role": "operator", "runs": ["*"]}
]}`), server.RolesOptions{})
	require.NoError(t, err)
	return rs
}

// listed is a page of the inbox as "run/key", in order.
func listed(r proto.PendingResult) []string {
	var out []string
	for _, a := range r.Approvals {
		out = append(out, string(a.Run)+"/"+string(a.Key))
	}
	return out
}

// TestPendingScope: an approver sees the approvals of its runs only, an operator and
// an approver of every run see them all, an agent is refused (and asks the inbox
// nothing), and a connection without hello is told to say it.
func TestPendingScope(t *testing.T) {
	clock := &servertest.Clock{}
	clock.Set(1000)
	g := servertest.Start(t, servertest.Options{Roles: inboxRoles(t), Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	for i, run := range []string{"team-a-1", "team-b-1", "team-a-2"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
		clock.Set(core.Time(1000 + 10*i))
		_, err = agent.Admit(ctx, run, "k", 1, client.AdmitOptions{Gated: true})
		require.NoError(t, err)
	}
	clock.Set(2000)
	for _, tc := range []struct {
		name, token string
		want        []string
	}{
		{"approver of every run", servertest.ApproverToken, []string{"team-a-1/k", "team-b-1/k", "team-a-2/k"}},
		{"approver of team-a-*", scopedApproverToken, []string{"team-a-1/k", "team-a-2/k"}},
		{"operator", servertest.OperatorToken, []string{"team-a-1/k", "team-b-1/k", "team-a-2/k"}},
	} {
		r, err := g.Dial(t, tc.token).Pending(ctx, client.PendingOptions{})
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, listed(r), tc.name)
		require.False(t, r.More, tc.name)
	}
	appr := g.Dial(t, servertest.ApproverToken)
	r, err := appr.Pending(ctx, client.PendingOptions{Limit: 5000})
	require.NoError(t, err, "the client clamps a limit over the maximum")
	require.Len(t, r.Approvals, 3)
	_, err = appr.Pending(ctx, client.PendingOptions{Limit: -1})
	require.ErrorContains(t, err, "negative limit")
	_, err = agent.Pending(ctx, client.PendingOptions{})
	require.ErrorIs(t, err, proto.ErrForbidden)
	require.ErrorContains(t, err, "the agent role may not call pending")

	raw := g.Raw(t)
	resp := raw.Send(t, `{"jsonrpc":"2.0","id":1,"method":"pending","params":{}}`)
	require.Equal(t, proto.ErrHelloRequired.Type, resp.Error.Type)
}

// TestPendingOrderAgeAndNotes: the inbox lists oldest first with each approval's age
// on the gate's clock and its note, exactly as docs/protocol.md shows the answer; an
// approval decided leaves it; status shows the note and the reason.
func TestPendingOrderAgeAndNotes(t *testing.T) {
	clock := &servertest.Clock{}
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent, appr := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	for _, run := range []string{"demo-1", "demo-2"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	for _, a := range []struct {
		run, key, description string
		at                    core.Time
	}{
		{"demo-2", "refund", "", 1796031590000},
		{"demo-1", "wire-money", "Wire 120 EUR to ACME", 1796031595713},
		{"demo-1", "delete-branch", "git push --delete origin main", 1796031599000},
	} {
		clock.Set(a.at)
		o := client.AdmitOptions{Gated: true, Description: a.description}
		if a.key == "wire-money" {
			o.ArgsDigest = digest
		}
		res, err := agent.Admit(ctx, a.run, a.key, 1, o)
		require.NoError(t, err)
		require.Equal(t, core.AnswerHeld, res.Answer)
	}
	clock.Set(1796031600713)
	raw := g.Raw(t)
	raw.Send(t, hello(servertest.ApproverToken))
	raw.Write(t, `{"jsonrpc":"2.0","id":2,"method":"pending","params":{"limit":2}}`+"\n")
	line, err := rawLine(raw)
	require.NoError(t, err)
	page := proto.PendingResult{}
	require.NoError(t, json.Unmarshal(mustResult(t, line), &page))
	require.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"approvals":[`+
		`{"run":"demo-2","key":"refund","since_ms":1796031590000,"age_ms":10713},`+
		`{"run":"demo-1","key":"wire-money","since_ms":1796031595713,"age_ms":5000,"description":"Wire 120 EUR to ACME","args_digest":"`+digest+`"}],`+
		`"more":true,"cursor":"`+page.Cursor+`"}}`, string(line))
	next, err := appr.Pending(ctx, client.PendingOptions{Cursor: page.Cursor})
	require.NoError(t, err)
	require.Equal(t, []string{"demo-1/delete-branch"}, listed(next))
	require.Equal(t, "git push --delete origin main", next.Approvals[0].Description)
	require.False(t, next.More)
	require.Empty(t, next.Cursor)

	_, err = appr.DecideWith(ctx, "demo-1", "wire-money", core.Approve, client.DecideOptions{Reason: "invoice 2026-117 checked"})
	require.NoError(t, err)
	all, err := appr.Pending(ctx, client.PendingOptions{})
	require.NoError(t, err)
	require.Equal(t, []string{"demo-2/refund", "demo-1/delete-branch"}, listed(all))
	st, err := appr.Status(ctx, "demo-1", "wire-money")
	require.NoError(t, err)
	require.Equal(t, proto.EffectResult{Key: "wire-money", Status: core.EffectHeld, Epoch: 1, Gated: true, Approved: true,
		SinceMs: 1796031595713, Description: "Wire 120 EUR to ACME", ArgsDigest: digest, Reason: "invoice 2026-117 checked"}, *st.Effect)
}

// rawLine reads the next answer line of raw as it came.
func rawLine(raw *servertest.Raw) ([]byte, error) {
	resp := make([]byte, 0, 4096)
	buf := make([]byte, 1)
	for {
		if _, err := raw.Conn.Read(buf); err != nil {
			return nil, err
		}
		if buf[0] == '\n' {
			return resp, nil
		}
		resp = append(resp, buf[0])
	}
}

func mustResult(t *testing.T, line []byte) json.RawMessage {
	t.Helper()
	resp, err := proto.DecodeResponse(line)
	require.NoError(t, err)
	require.Nil(t, resp.Error, "%s", line)
	return resp.Result
}

// TestPendingPages: a large inbox is paged, not one huge line: whatever the limit,
// every answer line fits in the protocol's line limit (the page is cut and says
// more), and following the cursors lists every approval once, oldest first, even
// with the longest keys and descriptions, full of what JSON escapes to six bytes.
func TestPendingPages(t *testing.T) {
	clock := &servertest.Clock{}
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent, appr := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	var want []string
	longKey := strings.Repeat("\x01", proto.KeyBytesMax-4)
	longDesc := strings.Repeat("\"\\\n", proto.DescriptionBytesMax/3)
	for r := range 3 {
		run := fmt.Sprintf("run-%d-%s", r, strings.Repeat("\x02", proto.RunBytesMax-8))
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
		for k := range 100 {
			key := fmt.Sprintf("%04d%s", k, longKey)
			clock.Set(core.Time(1 + k*3 + r))
			_, err := agent.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: true, Description: longDesc, ArgsDigest: digest})
			require.NoError(t, err)
		}
	}
	for k := range 100 {
		for r := range 3 {
			want = append(want, fmt.Sprintf("run-%d-%s/%04d%s", r, strings.Repeat("\x02", proto.RunBytesMax-8), k, longKey))
		}
	}
	for _, limit := range []int{0, 7, 300, proto.PendingLimitMax} {
		var got []string
		o := client.PendingOptions{Limit: limit}
		pages := 0
		for {
			r, err := appr.Pending(ctx, o) // the client refuses a line over the limit
			require.NoError(t, err, "limit %d, page %d", limit, pages)
			pages++
			got = append(got, listed(r)...)
			if limit > 0 {
				require.LessOrEqual(t, len(r.Approvals), limit)
			}
			line := proto.AppendResult(nil, proto.IntID(1<<40), &r)
			require.LessOrEqual(t, len(line)-1, proto.LineBytesMax, "limit %d: the page fits in a line", limit)
			if !r.More {
				break
			}
			require.NotEmpty(t, r.Cursor)
			o.Cursor = r.Cursor
		}
		require.Equal(t, want, got, "limit %d", limit)
		t.Logf("limit %d: %d pages", limit, pages)
		if limit >= 300 {
			require.Greater(t, pages, 1, "limit %d: 300 approvals of ~3 KiB do not fit in one line", limit)
		}
	}
}

// TestNoteFieldErrors: each bad note or pending field is its typed error, naming the
// field, and changes nothing in the gate.
func TestNoteFieldErrors(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	ctx := context.Background()
	_, err := g.Dial(t, servertest.OperatorToken).Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = g.Dial(t, servertest.AgentToken).Admit(ctx, "r", "p", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	before := g.State(t)
	agent, appr := g.Raw(t), g.Raw(t)
	agent.Send(t, hello(servertest.AgentToken))
	appr.Send(t, hello(servertest.ApproverToken))
	admit := func(extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r","key":"k","epoch":1,"gated":true,` + extra + `}}`
	}
	decide := func(extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r","key":"p","decision":"reject",` + extra + `}}`
	}
	pending := func(params string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"pending","params":{` + params + `}}`
	}
	for _, tc := range []struct {
		name  string
		conn  *servertest.Raw
		line  string
		typ   *proto.Error
		field string
	}{
		{"description over 512 bytes", agent, admit(`"description":"` + strings.Repeat("x", 513) + `"`), proto.ErrOutOfRange, "params.description"},
		{"description with an escape sequence", agent, admit(`"description":"\u001b]8;;http://evil\u0007click\u001b]8;;\u0007"`), proto.ErrOutOfRange, "params.description"},
		{"description with CR", agent, admit(`"description":"ok\rFAKE"`), proto.ErrOutOfRange, "params.description"},
		{"description not a string", agent, admit(`"description":["x"]`), proto.ErrWrongType, "params.description"},
		{"digest of no format", agent, admit(`"args_digest":"md5:0123"`), proto.ErrOutOfRange, "params.args_digest"},
		{"digest upper case", agent, admit(`"args_digest":"` + strings.ToUpper(digest) + `"`), proto.ErrOutOfRange, "params.args_digest"},
		{"reason on an admit", agent, admit(`"reason":"x"`), proto.ErrUnknownField, "params.reason"},
		{"reason over 512 bytes", appr, decide(`"reason":"` + strings.Repeat("y", 513) + `"`), proto.ErrOutOfRange, "params.reason"},
		{"reason with a bell", appr, decide(`"reason":"no\u0007"`), proto.ErrOutOfRange, "params.reason"},
		{"description on a decide", appr, decide(`"description":"x"`), proto.ErrUnknownField, "params.description"},
		{"limit 0", appr, pending(`"limit":0`), proto.ErrOutOfRange, "params.limit"},
		{"limit over the maximum", appr, pending(`"limit":1001`), proto.ErrOutOfRange, "params.limit"},
		{"a cursor no answer gave", appr, pending(`"cursor":"AAAA"`), proto.ErrOutOfRange, "params.cursor"},
		{"a run", appr, pending(`"run":"r"`), proto.ErrUnknownField, "params.run"},
	} {
		resp := tc.conn.Send(t, tc.line)
		require.NotNil(t, resp.Error, tc.name)
		require.Equal(t, tc.typ.Type, resp.Error.Type, "%s: %s", tc.name, resp.Error.Message)
		require.Equal(t, tc.field, resp.Error.Field, tc.name)
		require.Equal(t, before, g.State(t), "%s changed the gate", tc.name)
	}
}

// TestNotesSurviveARestart: descriptions, digests, the times approvals opened and
// the reasons of decisions are in the log and the snapshot: a gate restarted on its
// data directory lists the same inbox (ages on its clock) and shows the same notes.
func TestNotesSurviveARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	clock := &servertest.Clock{}
	clock.Set(10_000)
	start := func() (*servertest.Gate, *wal.Log) {
		l, err := wal.Open(dir, wal.Options{})
		require.NoError(t, err)
		g, err := servertest.New(servertest.Options{Recover: l, Node: node.Config{Now: clock.Now}})
		require.NoError(t, err)
		return g, l
	}
	ctx := context.Background()
	g, l := start()
	op, agent, appr := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	for i, k := range []string{"a", "b", "c"} {
		clock.Set(core.Time(10_000 + 100*i))
		_, err := agent.Admit(ctx, "r", k, 1, client.AdmitOptions{Gated: true, Description: "effect <" + k + ">\n\ttabbed", ArgsDigest: digest})
		require.NoError(t, err)
	}
	_, err = appr.DecideWith(ctx, "r", "a", core.Approve, client.DecideOptions{Reason: "fine: a"})
	require.NoError(t, err)
	var state []byte
	g.Node.Inspect(func(c *core.Gate) { state, _ = c.MarshalBinary() })
	require.NoError(t, l.Snapshot(g.Node.LastLSN(), state), "a snapshot, then records after it")
	_, err = op.Open(ctx, "s", 0)
	require.NoError(t, err)
	clock.Set(10_500)
	_, err = agent.Admit(ctx, "s", "d", 1, client.AdmitOptions{Gated: true, Description: "after the snapshot"})
	require.NoError(t, err)
	_, err = appr.DecideWith(ctx, "s", "d", core.Reject, client.DecideOptions{Reason: "no: d"})
	require.NoError(t, err)
	pendingBefore, err := appr.Pending(ctx, client.PendingOptions{})
	require.NoError(t, err)
	statusOf := func(c *client.Client, run, key string) proto.EffectResult {
		st, err := c.Status(ctx, run, key)
		require.NoError(t, err)
		return *st.Effect
	}
	want := map[string]proto.EffectResult{}
	for _, e := range [][2]string{{"r", "a"}, {"r", "b"}, {"r", "c"}, {"s", "d"}} {
		want[e[0]+"/"+e[1]] = statusOf(appr, e[0], e[1])
	}
	require.Equal(t, "fine: a", want["r/a"].Reason)
	require.Equal(t, "no: d", want["s/d"].Reason)
	require.Equal(t, core.Time(10_500), want["s/d"].SinceMs)
	require.NoError(t, g.Close())
	require.NoError(t, l.Close())

	g, l = start()
	defer func() { require.NoError(t, g.Close()); require.NoError(t, l.Close()) }()
	appr = g.Dial(t, servertest.ApproverToken)
	for k, e := range want {
		run, key, _ := strings.Cut(k, "/")
		require.Equal(t, e, statusOf(appr, run, key), "after the restart: %s", k)
	}
	pendingAfter, err := appr.Pending(ctx, client.PendingOptions{})
	require.NoError(t, err)
	require.Equal(t, pendingBefore, pendingAfter)
	require.Equal(t, []string{"r/b", "r/c"}, listed(pendingAfter))
	require.Equal(t, int64(10_500-10_100), pendingAfter.Approvals[0].AgeMs)
}
