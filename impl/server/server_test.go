package server_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/internal/scenario"
)

const (
	agentToken    = "agent-token-0123456789"
	scopedToken   = "scoped-agent-token-0123"
	approverToken = "approver-token-012345"
	operatorToken = "operator-token-012345"
)

const rolesJSON = `{"tokens":[
 {"name":"agent","token":"agent-token-0123456789","role":"agent","runs":["*"]},
 {"name":"scoped","token":"scoped-agent-token-0123","role":"agent","runs":["team-a-*"]},
 {"name":"alice","token":"approver-token-012345","role":"approver"},
 {"name":"ops","token":"operator-token-012345","role":"operator"}]}`

// gate is a running server on a Unix socket with a fake clock.
type gate struct {
	srv  *server.Server
	addr string
	now  atomic.Int64
}

func start(t *testing.T) *gate {
	t.Helper()
	roles, err := server.ParseRoles([]byte(rolesJSON))
	require.NoError(t, err)
	g := &gate{}
	g.srv, err = server.New(server.Config{Roles: roles, Now: func() core.Time { return core.Time(g.now.Load()) }, Version: "test"})
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "sg")
	require.NoError(t, err)
	g.addr = filepath.Join(dir, "gate.sock")
	l, err := net.Listen("unix", g.addr)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- g.srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, g.srv.Shutdown(ctx))
		require.NoError(t, <-served)
		os.RemoveAll(dir)
	})
	return g
}

func (g *gate) dial(t *testing.T, token string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), g.addr, token)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// serverDriver runs scenario commands through the real server: each command on the
// connection of the role that may send it, its wire answer turned back into a core.Reply.
type serverDriver struct {
	g                         *gate
	agent, approver, operator *client.Client
}

func (d *serverDriver) SetClock(now core.Time) { d.g.now.Store(int64(now)) }
func (d *serverDriver) Expire() []core.RunID   { return d.g.srv.Expire() }

func (d *serverDriver) Step(c core.Command) core.Reply {
	ctx := context.Background()
	var rep core.Reply
	switch c.Op {
	case core.OpOpen:
		timeout := time.Duration(0)
		if c.Deadline > 0 {
			timeout = time.Duration(c.Deadline-core.Time(d.g.now.Load())) * time.Millisecond
		}
		r, err := d.operator.Open(ctx, string(c.Run), timeout)
		rep.Err = err
		rep.Open = core.OpenResult{Run: core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch, Deadline: r.DeadlineMs}, Created: r.Created}
	case core.OpAdmit:
		r, err := d.agent.Admit(ctx, string(c.Run), string(c.Key), c.Epoch, client.AdmitOptions{Gated: c.Gated})
		rep.Err = err
		rep.Admit = core.AdmitResult{Answer: r.Answer, Reason: r.Reason, Outcome: r.Outcome, Result: r.Result, Epoch: r.Epoch}
	case core.OpDecide:
		r, err := d.approver.Decide(ctx, string(c.Run), string(c.Key), c.Decision)
		rep.Err = err
		rep.Decide = core.DecideResult{Decision: r.Decision, Repeat: r.Repeat}
	case core.OpComplete:
		r, err := d.agent.Complete(ctx, string(c.Run), string(c.Key), c.Outcome, c.Result)
		rep.Err = err
		rep.Complete = core.CompleteResult{Repeat: r.Repeat}
	case core.OpCancel:
		r, err := d.operator.Cancel(ctx, string(c.Run))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch}
	case core.OpFence:
		r, err := d.operator.Fence(ctx, string(c.Run))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: core.RunActive, Epoch: r.Epoch}
	case core.OpStatus:
		r, err := d.agent.Status(ctx, string(c.Run), string(c.Key))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch, Deadline: r.DeadlineMs, Pending: r.Pending}
		if e := r.Effect; e != nil {
			rep.Effect = core.EffectView{Key: e.Key, Effect: core.Effect{Status: e.Status, Epoch: e.Epoch, Gated: e.Gated,
				Approved: e.Approved, Outcome: e.Outcome, Result: e.Result}}
		}
	}
	return rep
}

// TestScenarios runs the contract's scenario files, unchanged, through the real server.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "../../"+scenario.Dir, func(t *testing.T) scenario.Driver {
		g := start(t)
		return &serverDriver{g: g, agent: g.dial(t, agentToken), approver: g.dial(t, approverToken), operator: g.dial(t, operatorToken)}
	})
}

// raw is a connection that speaks lines, for bad-input tests.
type raw struct {
	nc net.Conn
	r  *bufio.Reader
}

func (g *gate) raw(t *testing.T) *raw {
	nc, err := net.Dial("unix", g.addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &raw{nc: nc, r: bufio.NewReaderSize(nc, 1<<20)}
}

func (c *raw) send(t *testing.T, line string) proto.Response {
	t.Helper()
	_, err := c.nc.Write([]byte(line + "\n"))
	require.NoError(t, err)
	return c.recv(t)
}

func (c *raw) recv(t *testing.T) proto.Response {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := c.r.ReadBytes('\n')
	require.NoError(t, err)
	resp, err := proto.DecodeResponse(line)
	require.NoError(t, err, "answer %q", line)
	return resp
}

func hello(token string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":"` + token + `"}}`
}

// TestBadInput: every bad line gets its typed error, the connection survives where
// the protocol says so, and the gate's state does not change.
func TestBadInput(t *testing.T) {
	g := start(t)
	op := g.dial(t, operatorToken)
	ctx := context.Background()
	_, err := op.Open(ctx, "r1", 0)
	require.NoError(t, err)
	_, err = g.dial(t, agentToken).Admit(ctx, "r1", "k", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	_, state0, _ := g.srv.Snapshot()

	cases := []struct {
		name, token, line, wantType string
		closes                      bool
	}{
		{"garbage", agentToken, "\x00\x01garbage{{", "parse_error", false},
		{"not json object", agentToken, `[1,2,3]`, "invalid_request", false},
		{"10 MB line", agentToken, strings.Repeat("x", 10<<20), "line_too_long", false},
		{"unknown verb", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admitt","params":{}}`, "unknown_method", false},
		{"unknown field", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1,"force":true}}`, "unknown_field", false},
		{"epoch as string", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":"1"}}`, "wrong_type", false},
		{"epoch as float", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1.0}}`, "wrong_type", false},
		{"duplicate key", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","key":"k3","epoch":1}}`, "duplicate_key", false},
		{"agent decides", agentToken, `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r1","key":"k","decision":"approve"}}`, "forbidden", false},
		{"agent cancels", agentToken, `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r1"}}`, "forbidden", false},
		{"approver admits", approverToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1}}`, "forbidden", false},
		{"run out of scope", scopedToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1}}`, "forbidden", false},
		{"unknown run", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r9","key":"k2","epoch":1}}`, "unknown_run", false},
		{"future epoch", agentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":7}}`, "bad_epoch", false},
		{"hello twice", agentToken, hello(agentToken), "hello_repeated", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := g.raw(t)
			require.Nil(t, c.send(t, hello(tc.token)).Error)
			resp := c.send(t, tc.line)
			require.NotNil(t, resp.Error, "want an error answer")
			require.Equal(t, tc.wantType, resp.Error.Type, resp.Error.Message)
			// The connection survives: the next request is answered.
			run := "r1"
			if tc.token == scopedToken {
				run = "team-a-1" // in scope, never opened
			}
			next := c.send(t, `{"jsonrpc":"2.0","id":"after","method":"status","params":{"run":"`+run+`"}}`)
			require.Equal(t, proto.StringID("after"), next.ID)
			if tc.token == scopedToken {
				require.Equal(t, "unknown_run", next.Error.Type)
			} else {
				require.Nil(t, next.Error)
			}
			_, state, _ := g.srv.Snapshot()
			require.Equal(t, state0, state, "a refused request changed the gate's state")
		})
	}

	t.Run("stale epoch is a denial", func(t *testing.T) {
		_, err := op.Fence(ctx, "r1")
		require.NoError(t, err)
		res, err := g.dial(t, agentToken).Admit(ctx, "r1", "zombie", 1, client.AdmitOptions{})
		require.NoError(t, err)
		require.Equal(t, core.AnswerDenied, res.Answer)
		require.Equal(t, core.ReasonStaleEpoch, res.Reason)
	})
	t.Run("request before hello", func(t *testing.T) {
		c := g.raw(t)
		resp := c.send(t, `{"jsonrpc":"2.0","id":5,"method":"status","params":{"run":"r1"}}`)
		require.Equal(t, "hello_required", resp.Error.Type)
		require.Equal(t, proto.IntID(5), resp.ID)
	})
	t.Run("unknown token closes", func(t *testing.T) {
		c := g.raw(t)
		resp := c.send(t, hello("not-a-token-at-all-xx"))
		require.Equal(t, "unauthenticated", resp.Error.Type)
		c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.r.ReadBytes('\n')
		require.Error(t, err, "the connection must be closed after a failed hello")
	})
	t.Run("typed errors through the client", func(t *testing.T) {
		_, err := g.dial(t, agentToken).Admit(ctx, "nope", "k", 1, client.AdmitOptions{})
		require.ErrorIs(t, err, core.ErrUnknownRun)
		_, err = g.dial(t, agentToken).Decide(ctx, "r1", "k", core.Approve)
		require.ErrorIs(t, err, proto.ErrForbidden)
	})
}

// TestHeldIsAnsweredAfterDecision: a parked admit is answered right after the decision
// that releases or denies it, and held when its wait runs out.
func TestHeldIsAnsweredAfterDecision(t *testing.T) {
	g := start(t)
	ctx := context.Background()
	op, agent, approver := g.dial(t, operatorToken), g.dial(t, agentToken), g.dial(t, approverToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	res, err := agent.Admit(ctx, "r", "gated", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)

	type out struct {
		res proto.AdmitResult
		err error
	}
	sibling, gated := make(chan out, 1), make(chan out, 1)
	go func() {
		r, err := agent.Admit(ctx, "r", "sibling", 1, client.AdmitOptions{Wait: time.Minute})
		sibling <- out{r, err}
	}()
	go func() {
		r, err := agent.Admit(ctx, "r", "gated", 1, client.AdmitOptions{Wait: time.Minute})
		gated <- out{r, err}
	}()
	require.Eventually(t, func() bool {
		st, _ := agent.Status(ctx, "r", "sibling")
		return st.Effect != nil && st.Effect.Status == core.EffectHeld
	}, 5*time.Second, time.Millisecond)
	select {
	case o := <-sibling:
		t.Fatalf("the sibling was answered during the pause: %+v", o)
	case <-time.After(50 * time.Millisecond):
	}
	_, err = approver.Decide(ctx, "r", "gated", core.Approve)
	require.NoError(t, err)
	for _, ch := range []chan out{sibling, gated} {
		o := <-ch
		require.NoError(t, o.err)
		require.Equal(t, core.AnswerAdmit, o.res.Answer)
	}

	// A rejection answers the parked sibling with denied(rejected).
	_, err = agent.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	go func() {
		r, err := agent.Admit(ctx, "r", "s2", 1, client.AdmitOptions{Wait: time.Minute})
		sibling <- out{r, err}
	}()
	require.Eventually(t, func() bool {
		st, _ := agent.Status(ctx, "r", "s2")
		return st.Effect != nil && st.Effect.Status == core.EffectHeld
	}, 5*time.Second, time.Millisecond)
	_, err = approver.Decide(ctx, "r", "g2", core.Reject)
	require.NoError(t, err)
	o := <-sibling
	require.NoError(t, o.err)
	require.Equal(t, core.AnswerDenied, o.res.Answer)
	require.Equal(t, core.ReasonRejected, o.res.Reason)

	// The wait runs out: held.
	_, err = agent.Admit(ctx, "r", "g3", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	start := time.Now()
	res, err = agent.Admit(ctx, "r", "g3", 1, client.AdmitOptions{Wait: 30 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	// Cancel answers a parked admit with denied(cancelled).
	go func() {
		r, err := agent.Admit(ctx, "r", "g3", 1, client.AdmitOptions{Wait: time.Minute})
		gated <- out{r, err}
	}()
	time.Sleep(20 * time.Millisecond)
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	o = <-gated
	require.NoError(t, o.err)
	require.Equal(t, core.ReasonCancelled, o.res.Reason)
}

// TestShutdownAnswersEveryRequest: requests in flight at shutdown are answered or
// refused, never left hanging.
func TestShutdownAnswersEveryRequest(t *testing.T) {
	roles, _ := server.ParseRoles([]byte(rolesJSON))
	srv, err := server.New(server.Config{Roles: roles})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(l)
	ctx := context.Background()
	op, err := client.Dial(ctx, l.Addr().String(), operatorToken)
	require.NoError(t, err)
	agent, err := client.Dial(ctx, l.Addr().String(), agentToken)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Wait: time.Minute})
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(sctx))
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, proto.ErrShuttingDown, "every parked admit is answered shutting_down")
	}
	_, err = client.Dial(ctx, l.Addr().String(), agentToken)
	require.Error(t, err, "a stopped server accepts no connection")
}

func TestRolesFileErrors(t *testing.T) {
	for _, bad := range []string{
		`{}`, `not json`,
		`{"tokens":[{"token":"short","role":"agent","runs":["*"]}]}`,
		`{"tokens":[{"token":"long-enough-token-1","role":"admin"}]}`,
		`{"tokens":[{"token":"long-enough-token-1","role":"agent"}]}`,
		`{"tokens":[{"token":"long-enough-token-1","role":"operator"},{"token":"long-enough-token-1","role":"approver"}]}`,
	} {
		_, err := server.ParseRoles([]byte(bad))
		require.ErrorIs(t, err, server.ErrRolesFile, bad)
	}
	_, err := server.New(server.Config{})
	require.ErrorIs(t, err, server.ErrNoRoles)
}
