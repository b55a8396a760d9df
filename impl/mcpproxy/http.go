package mcpproxy

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where RunHTTP serves the MCP endpoint.
const HTTPPath = "/mcp"

// HTTPTokenBytesMin is the shortest bearer token RunHTTP accepts: anyone who has it
// acts with the proxy's agent credential.
const HTTPTokenBytesMin = 16

// ErrHTTPConfig is wrapped by RunHTTP's refusals of its configuration.
var ErrHTTPConfig = errors.New("soundgate/mcpproxy: http")

// CheckHTTPAddr refuses a listen address that is not a loopback IP: the endpoint acts
// with the proxy's agent credential, and a host that needs it from elsewhere should
// run its own proxy next to it rather than have the credential reachable on a network.
func CheckHTTPAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: listen address %q: %v", ErrHTTPConfig, addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: listen address %q is not a loopback IP (127.0.0.1, [::1]): the endpoint acts with the agent's credential, so it is not served on a network", ErrHTTPConfig, addr)
	}
	return nil
}

// RunHTTP is Run with the host over Streamable HTTP: the MCP endpoint at HTTPPath on
// ln, every request carrying "Authorization: Bearer <token>", until ctx ends. Requests
// from a browser page of another origin, and requests on a loopback address that name
// another host (DNS rebinding), are refused. Calls of different HTTP requests have no
// order between them: arrival numbering (HostTransport) is for stdio only.
func (p *Proxy) RunHTTP(ctx context.Context, ln net.Listener, token string, upstream mcp.Transport) error {
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
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		stop := context.AfterFunc(ctx, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			hs.Close() // held calls keep their streams open: end them
		})
		defer stop()
		return hs.Serve(ln)
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
