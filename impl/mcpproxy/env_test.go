package mcpproxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/stretchr/testify/require"
)

// clientConn adapts the Go client to Conn (as soundgate mcp-proxy does).
type clientConn struct{ *client.Client }

func (c clientConn) Admit(ctx context.Context, run, key string, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error) {
	return c.Client.Admit(ctx, run, key, epoch, client.AdmitOptions{Gated: gated, Wait: wait})
}

// world is the upstream's event log: what the tools did. An entry is one effect.
type world struct {
	mu     sync.Mutex
	events []string
}

func (w *world) add(e string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, e)
	return len(w.events)
}

func (w *world) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.events...)
}

// count is how many times e happened.
func (w *world) count(e string) int {
	n := 0
	for _, x := range w.list() {
		if x == e {
			n++
		}
	}
	return n
}

type textArgs struct {
	Text string `json:"text"`
}

// upstreamServer is the MCP server behind the proxy: append and note act on the world,
// read only reads it, fail reports a tool error, big returns a result past the gate's
// limit, crash ends the upstream's connection with the call in flight.
func upstreamServer(w *world, crash func()) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "world", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "append", Description: "append text to the log"},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			n := w.add("append:" + a.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("appended %q as event %d", a.Text, n)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "note", Description: "note text in the log"},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			n := w.add("note:" + a.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("noted %d", n)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(w.list(), ",")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			w.add("fail:" + a.Text)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big"},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			w.add("big:" + a.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("b", 2*proto.ResultBytesMax)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash"},
		func(_ context.Context, _ *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
			w.add("crash:" + a.Text)
			crash() // the connection is gone: this answer goes nowhere
			return &mcp.CallToolResult{}, nil, nil
		})
	return s
}

// testPolicy gates append (by default: the policy does not name it) and ungates the rest.
const testPolicy = `{"servers": {"world": {"tools": {"note": "ungated", "read": "ungated", "fail": "ungated", "big": "ungated", "crash": "ungated"}}}}`

const run = "run-1"

// env is a real gate, an upstream server, the proxy between them and a host.
type env struct {
	t                  testing.TB
	gate               *servertest.Gate
	op, approver       *client.Client
	agent              *client.Client
	world              *world
	host               *mcp.ClientSession
	proxyDone          chan struct{} // closed when the proxy's Run returned
	proxyErr           error
	up                 *mcp.Server
	listChanged        chan struct{}
	hostConn           *dyingTransport // die: the host's pipe breaks, as when its process exits
	rawIn              *io.PipeWriter
	rawOut             *bufio.Reader
	cancel             context.CancelFunc
	hostCancel         context.CancelFunc
	progress           chan *mcp.ProgressNotificationParams
	upstreamConn       chan struct{}
	upstreamConnCancel context.CancelFunc
}

type envOptions struct {
	deferred      bool
	maxHold       time.Duration
	progressEvery time.Duration
	policy        string
	rawHost       bool                     // the host is lines written to rawIn and read from rawOut (HostTransport)
	unordered     bool                     // with rawHost: a HostTransport that does not number tools/calls
	admitDelay    map[string]time.Duration // the first admit of a key waits this long at the gate
}

// slowConn delays the first admit of some keys, as a gate round trip that happens to
// be slow.
type slowConn struct {
	Conn
	mu    sync.Mutex
	delay map[string]time.Duration
}

func (s *slowConn) Admit(ctx context.Context, run, key string, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error) {
	s.mu.Lock()
	d := s.delay[key]
	delete(s.delay, key)
	s.mu.Unlock()
	time.Sleep(d)
	return s.Conn.Admit(ctx, run, key, epoch, gated, wait)
}

// startGate gives e a real gate, an operator, an approver and an agent on it, and the
// open run.
func (e *env) startGate(t testing.TB) {
	t.Helper()
	e.gate = servertest.Start(t, servertest.Options{})
	e.op = e.gate.Dial(t, servertest.OperatorToken)
	e.approver = e.gate.Dial(t, servertest.ApproverToken)
	e.agent = e.gate.Dial(t, servertest.AgentToken)
	_, err := e.op.Open(context.Background(), run, 0)
	require.NoError(t, err)
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	e := &env{t: t, world: &world{}, progress: make(chan *mcp.ProgressNotificationParams, 64), listChanged: make(chan struct{}, 8)}
	e.startGate(t)

	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	upCtx, upCancel := context.WithCancel(ctx)
	e.upstreamConnCancel = upCancel
	upServerT, upClientT := mcp.NewInMemoryTransports()
	dying := &dyingTransport{Transport: upServerT}
	up := upstreamServer(e.world, dying.die)
	e.up = up
	e.upstreamConn = make(chan struct{})
	go func() { up.Run(upCtx, dying); close(e.upstreamConn) }()

	if o.policy == "" {
		o.policy = testPolicy
	}
	pol, err := ParsePolicy("test", []byte(o.policy))
	require.NoError(t, err)
	if o.progressEvery == 0 {
		o.progressEvery = 100 * time.Millisecond
	}
	var gateConn Conn = clientConn{e.agent}
	if o.admitDelay != nil {
		gateConn = &slowConn{Conn: gateConn, delay: o.admitDelay}
	}
	p, err := New(Config{Server: "world", Run: run, Policy: pol, Gate: gateConn,
		MaxHold: o.maxHold, ProgressEvery: o.progressEvery, Deferred: o.deferred})
	require.NoError(t, err)
	hostT, proxyT := mcp.NewInMemoryTransports()
	var proxyHost mcp.Transport = proxyT
	if o.rawHost {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		e.rawIn, e.rawOut = inW, bufio.NewReader(outR)
		proxyHost = p.HostTransport(inR, outW)
		if o.unordered {
			proxyHost = &HostTransport{In: inR, Out: outW}
		}
	}
	e.proxyDone = make(chan struct{})
	go func() { e.proxyErr = p.Run(ctx, proxyHost, upClientT); close(e.proxyDone) }()
	if o.rawHost {
		t.Cleanup(func() {
			e.rawIn.Close()
			cancel()
			select {
			case <-e.proxyDone:
			case <-time.After(10 * time.Second):
				t.Errorf("the proxy did not stop")
			}
		})
		return e
	}

	hctx, hcancel := context.WithCancel(ctx)
	e.hostCancel = hcancel
	hc := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case e.listChanged <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case e.progress <- r.Params:
			default:
			}
		}})
	e.hostConn = &dyingTransport{Transport: hostT}
	e.host, err = hc.Connect(hctx, e.hostConn, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		e.hostConn.die() // not host.Close: that waits for the calls in flight
		cancel()
		select {
		case <-e.proxyDone:
		case <-time.After(10 * time.Second):
			t.Errorf("the proxy did not stop")
		}
	})
	return e
}

// call calls tool through the proxy.
func (e *env) call(ctx context.Context, tool string, args any, meta mcp.Meta) (*mcp.CallToolResult, error) {
	return e.host.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
}

// callAsync calls in the background.
func (e *env) callAsync(ctx context.Context, tool string, args any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := e.call(ctx, tool, args, nil)
		ch <- callResult{res, err}
	}()
	return ch
}

type callResult struct {
	res *mcp.CallToolResult
	err error
}

// key is the gate key the proxy derives for a call.
func key(tool string, args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	c, err := CanonicalJSON(b)
	if err != nil {
		panic(err)
	}
	return DigestKey("world", tool, c)
}

// effect is the gate's view of one key of the run.
func (e *env) effect(k string) core.EffectStatus {
	st, err := e.agent.Status(context.Background(), run, k)
	require.NoError(e.t, err)
	if st.Effect == nil {
		return core.EffectAbsent
	}
	return st.Effect.Status
}

// waitHeld waits until the gate holds each key.
func (e *env) waitHeld(keys ...string) {
	e.t.Helper()
	for _, k := range keys {
		require.Eventually(e.t, func() bool { return e.effect(k) == core.EffectHeld }, 10*time.Second, 5*time.Millisecond, "key %s held", k)
	}
}

func (e *env) decide(k string, d core.Decision) {
	e.t.Helper()
	_, err := e.approver.Decide(context.Background(), run, k, d)
	require.NoError(e.t, err)
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// requireNotExecuted checks an answer is a tool error saying the call did not run.
func requireNotExecuted(t *testing.T, r callResult, words ...string) {
	t.Helper()
	require.NoError(t, r.err)
	require.True(t, r.res.IsError, "want a tool error, got %q", text(r.res))
	require.Contains(t, text(r.res), "NOT executed")
	for _, w := range words {
		require.Contains(t, text(r.res), w)
	}
}

func recv(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no answer to the call")
	}
	return callResult{}
}

// requireOpen checks that no answer has come yet.
func requireOpen(t *testing.T, chs ...<-chan callResult) {
	t.Helper()
	for _, ch := range chs {
		select {
		case r := <-ch:
			t.Fatalf("answered while held: %+v", r)
		default:
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// dyingTransport is a transport whose connection die closes, as an upstream process
// that exits closes its pipes.
type dyingTransport struct {
	mcp.Transport
	mu   sync.Mutex
	conn mcp.Connection
}

func (d *dyingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.Transport.Connect(ctx)
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return c, err
}

func (d *dyingTransport) die() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conn.Close()
}
