package mcpproxy

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/stretchr/testify/require"
)

const httpToken = "host-token-0123456789abcdef"

// withHeader adds a header to every request, as a host configured with it does.
type withHeader struct {
	name, value string
	next        http.RoundTripper
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}

// httpEnv is a real gate, an upstream, and the proxy serving Streamable HTTP.
type httpEnv struct {
	*env
	url string
}

func newHTTPEnv(t *testing.T) *httpEnv {
	t.Helper()
	e := &env{t: t, world: &world{}}
	e.startGate(t)
	ctx, cancel := context.WithCancel(context.Background())
	upServerT, upClientT := mcp.NewInMemoryTransports()
	go upstreamServer(e.world, func() {}).Run(ctx, upServerT)
	pol, err := ParsePolicy("test", []byte(testPolicy))
	require.NoError(t, err)
	p, err := New(Config{Server: "world", Run: run, Policy: pol, Gate: clientConn{e.agent}, ProgressEvery: 100 * time.Millisecond})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- p.RunHTTP(ctx, serveOn(ln), httpToken, upClientT) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Errorf("the proxy did not stop")
		}
	})
	return &httpEnv{env: e, url: "http://" + ln.Addr().String() + HTTPPath}
}

// connect is a host's session over HTTP with the given Authorization header.
func (h *httpEnv) connect(t *testing.T, auth string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: withHeader{"Authorization", auth, http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "http-host", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

// TestHTTPSiblingsHeldThenApproved: over Streamable HTTP, as over stdio, a gated call
// and its siblings are held until the decision, each performed once after it, and a
// replay answered from the record.
func TestHTTPSiblingsHeldThenApproved(t *testing.T) {
	h := newHTTPEnv(t)
	s, err := h.connect(t, "Bearer "+httpToken)
	require.NoError(t, err)
	ctx := context.Background()
	call := func(tool string, a textArgs) <-chan callResult {
		ch := make(chan callResult, 1)
		go func() {
			r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
			ch <- callResult{r, err}
		}()
		return ch
	}
	wire, sib := textArgs{Text: "wire-money"}, textArgs{Text: "tell-ops"}
	gated := call("append", wire)
	h.waitHeld(key("append", wire))
	sibling := call("note", sib)
	h.waitHeld(key("note", sib))
	time.Sleep(150 * time.Millisecond)
	requireOpen(t, gated, sibling)
	require.Empty(t, h.world.list(), "B1")
	h.decide(key("append", wire), core.Approve)
	for _, ch := range []<-chan callResult{gated, sibling} {
		r := recv(t, ch)
		require.NoError(t, r.err)
		require.False(t, r.res.IsError, text(r.res))
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "append", Arguments: wire})
	require.NoError(t, err)
	require.Equal(t, "duplicate", r.Meta["soundgate/answer"])
	require.ElementsMatch(t, []string{"append:wire-money", "note:tell-ops"}, h.world.list(), "B3")
}

// TestHTTPRefuses: a request without the bearer token or with another one, from a
// page of another origin, or naming another host on loopback (DNS rebinding) is
// refused before the MCP handler, and nothing reaches the upstream.
func TestHTTPRefuses(t *testing.T) {
	h := newHTTPEnv(t)
	for _, auth := range []string{"", "Bearer", "Bearer " + httpToken[:len(httpToken)-1], "bearer " + httpToken, "Basic " + httpToken, "Bearer " + httpToken + "x"} {
		_, err := h.connect(t, auth)
		require.Error(t, err, "Authorization %q", auth)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(mod func(*http.Request)) *http.Response {
		req, err := http.NewRequest("POST", h.url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+httpToken)
		mod(req)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, http.StatusOK, post(func(*http.Request) {}).StatusCode, "the control: the same request, as the host sends it")
	require.Equal(t, http.StatusUnauthorized, post(func(r *http.Request) { r.Header.Del("Authorization") }).StatusCode)
	require.Equal(t, http.StatusForbidden, post(func(r *http.Request) {
		r.Header.Set("Origin", "https://evil.example")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
	}).StatusCode, "cross-origin")
	require.Equal(t, http.StatusForbidden, post(func(r *http.Request) { r.Host = "evil.example:80" }).StatusCode, "DNS rebinding")
	require.Empty(t, h.world.list())
}

// TestHTTPConfig: the endpoint needs a real token.
func TestHTTPConfig(t *testing.T) {
	p, err := New(Config{Server: "world", Gate: clientConn{}})
	require.NoError(t, err)
	for _, tok := range []string{"", "short", "0123456789abcde", "0123456789abcdef ghij"} {
		require.ErrorIs(t, p.RunHTTP(context.Background(), nil, tok, nil), ErrHTTPConfig, "%q", tok)
	}
}

// serveOn serves h on ln until ctx ends, as soundgate mcp-proxy does.
func serveOn(ln net.Listener) Serve {
	return func(ctx context.Context, h http.Handler) error {
		hs := &http.Server{Handler: h}
		stop := context.AfterFunc(ctx, func() { hs.Close() })
		defer stop()
		return hs.Serve(ln)
	}
}
