package mcpproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where RunHTTP serves the MCP endpoint.
const HTTPPath = "/mcp"

// HTTPTokenBytesMin is the shortest bearer token RunHTTP accepts: anyone who has it
// acts with the proxy's agent credential.
const HTTPTokenBytesMin = 16

// ErrHTTPConfig is wrapped by the refusals of an HTTP configuration.
var ErrHTTPConfig = errors.New("soundgate/mcpproxy: http")

// Serve serves an HTTP handler until ctx ends, then returns http.ErrServerClosed. The
// caller owns the listener (the proxy opens no socket: docs/architecture.md), so
// soundgate mcp-proxy and the tests give their own.
type Serve func(ctx context.Context, h http.Handler) error

// RunHTTP is Run with the host over Streamable HTTP: the MCP endpoint at HTTPPath,
// served by serve, every request carrying "Authorization: Bearer <token>", until ctx
// ends. Requests from a browser page of another origin, and requests on a loopback
// address that name another host (DNS rebinding), are refused. Calls of different HTTP
// requests have no order between them: arrival numbering (HostTransport) is for stdio
// only.
func (p *Proxy) RunHTTP(ctx context.Context, serve Serve, token string, upstream mcp.Transport) error {
	if len(token) < HTTPTokenBytesMin {
		return fmt.Errorf("%w: the bearer token is %d bytes, fewer than %d", ErrHTTPConfig, len(token), HTTPTokenBytesMin)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return fmt.Errorf("%w: the bearer token holds white space", ErrHTTPConfig)
	}
	err := p.run(ctx, upstream, func(srv *mcp.Server) error {
		mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: HostLineBytesMax, Logger: p.log})
		mux := http.NewServeMux()
		mux.Handle(HTTPPath, http.NewCrossOriginProtection().Handler(bearer(token, mcpH)))
		return serve(ctx, mux)
	})
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// bearer lets through the requests whose Authorization header is "Bearer " and token.
func bearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="soundgate-mcp-proxy"`)
			http.Error(w, "soundgate mcp-proxy: missing or wrong bearer token (the proxy's --http-token-file)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
