package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/metrics"
)

// The gate's HTTP listener (ServeWeb, `soundgate serve --http`): /metrics and
// /healthz for operators and their tools, which change nothing and read without the
// admit path's locks but for a moment of each (docs/operations.md); and the
// approvers' page (web.go, docs/approvers.md), whose decisions go through the same
// sessions as the wire's.

// Limits of the HTTP listener.
const (
	webConnectionsMax    = 64 // open connections; one more waits in the kernel's backlog
	webHeaderBytesMax    = 16 << 10
	webReadHeaderTimeout = 5 * time.Second
	webReadTimeout       = 10 * time.Second
	webWriteTimeout      = 30 * time.Second
	webIdleTimeout       = 2 * time.Minute
)

// Errors of CheckHTTPAddr and ServeWeb.
var (
	// ErrHTTPAddr: an HTTP listen address that is not host:port, or that is not a
	// loopback IP when the configuration does not allow one.
	ErrHTTPAddr = errors.New("soundgate/server: http address")
	// ErrMetricsOff: ServeWeb on a server without Config.Metrics, whose /metrics
	// would report answers it did not count.
	ErrMetricsOff = errors.New("soundgate/server: ServeWeb needs Config.Metrics")
)

// CheckHTTPAddr refuses an HTTP listen address that is not host:port with a numeric
// port, and, unless allowNonLoopback, one whose host is not a loopback IP
// (127.0.0.1, [::1]): /metrics tells whoever reaches it how busy the gate is and
// what it refuses (the caller says why in its message; soundgate mcp-proxy uses it too). A host name is refused too, localhost included: what it resolves
// to is not the gate's to guess. An empty host listens on every interface: it needs
// allowNonLoopback.
func CheckHTTPAddr(addr string, allowNonLoopback bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: %q is not host:port: %v", ErrHTTPAddr, addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || strings.Trim(port, "0123456789") != "" {
		return fmt.Errorf("%w: %q: the port must be a number from 0 to 65535", ErrHTTPAddr, addr)
	}
	if allowNonLoopback {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: %q is not a loopback IP (127.0.0.1, [::1])", ErrHTTPAddr, addr)
	}
	return nil
}

// ServeWeb serves the gate's HTTP endpoints on l until Shutdown, and returns nil
// then: GET /metrics (the Prometheus text format), GET /healthz (200 while the
// gate serves, 503 while it is failed closed or shutting down), and the approvers'
// page at / with its API under /api/ (docs/approvers.md). On a loopback listener it
// answers only requests that name a loopback host, so that a web page of another
// site that rebinds its name to 127.0.0.1 reads nothing. It needs Config.Metrics.
func (s *Server) ServeWeb(l net.Listener) error {
	return s.serveWeb(l, newWeb(s, l, defaultWebTimeouts()))
}

// serveWeb is ServeWeb with the page's state wb (its clock and timeouts).
func (s *Server) serveWeb(l net.Listener, wb *web) error {
	if s.metrics == nil {
		l.Close()
		return ErrMetricsOff
	}
	loopback := false
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		loopback = a.IP.IsLoopback()
	}
	times := wb.times
	hs := &http.Server{Handler: s.webHandler(loopback, wb), ReadHeaderTimeout: times.readHeader,
		ReadTimeout: times.read, WriteTimeout: times.write, IdleTimeout: times.idle,
		MaxHeaderBytes: webHeaderBytesMax, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.webs[hs] = struct{}{}
	s.mu.Unlock()
	err := hs.Serve(newLimitListener(l, webConnectionsMax))
	s.mu.Lock()
	delete(s.webs, hs)
	s.mu.Unlock()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("soundgate/server: http: %w", err)
}

// closeWebs closes ServeWeb's servers (Shutdown).
func (s *Server) closeWebs() {
	s.mu.Lock()
	hss := make([]*http.Server, 0, len(s.webs))
	for hs := range s.webs {
		hss = append(hss, hs)
	}
	s.mu.Unlock()
	for _, hs := range hss {
		hs.Close()
	}
}

// endpoint is one path of the HTTP listener and the methods it takes.
type endpoint struct {
	path    string
	methods []string
	serve   http.HandlerFunc
}

// webHandler routes the HTTP listener's requests, with the security headers on
// every answer. Every refusal says what the listener serves instead.
func (s *Server) webHandler(loopback bool, wb *web) http.Handler {
	// The page's API reads are GET alone: a HEAD of the event stream would stream.
	get, apiGet, post := []string{http.MethodGet, http.MethodHead}, []string{http.MethodGet}, []string{http.MethodPost}
	endpoints := []endpoint{
		{"/metrics", get, s.serveMetrics},
		{"/healthz", get, s.serveHealth},
		{"/", get, serveAsset("index.html")},
		{"/app.js", get, serveAsset("app.js")},
		{"/app.css", get, serveAsset("app.css")},
		{"/api/signin", post, wb.serveSignIn},
		{"/api/signout", post, wb.serveSignOut},
		{"/api/session", apiGet, wb.serveSession},
		{"/api/events", apiGet, wb.serveEvents},
	}
	for _, m := range pageMethods {
		endpoints = append(endpoints, endpoint{"/api/" + m.String(), post, wb.serveCall(m)})
	}
	var paths []string
	for _, e := range endpoints {
		paths = append(paths, e.path)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for _, kv := range webSecurityHeaders {
			h.Set(kv[0], kv[1])
		}
		if loopback && !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("soundgate: this listener answers requests for a loopback host (127.0.0.1, [::1], localhost), not %q", r.Host), http.StatusForbidden)
			return
		}
		i := slices.IndexFunc(endpoints, func(e endpoint) bool { return e.path == r.URL.Path })
		if i < 0 {
			http.Error(w, fmt.Sprintf("soundgate: no endpoint %q; this listener serves %s", r.URL.Path, strings.Join(paths, ", ")), http.StatusNotFound)
			return
		}
		e := endpoints[i]
		if !slices.Contains(e.methods, r.Method) {
			h.Set("Allow", strings.Join(e.methods, ", "))
			http.Error(w, fmt.Sprintf("soundgate: %s takes %s, not %s", e.path, strings.Join(e.methods, " or "), r.Method), http.StatusMethodNotAllowed)
			return
		}
		e.serve(w, r)
	})
}

// loopbackHost reports whether a request's Host names a loopback host.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) serveMetrics(w http.ResponseWriter, _ *http.Request) {
	var mw metrics.Writer
	s.writeMetrics(&mw)
	w.Header().Set("Content-Type", metrics.ContentType)
	w.Write(mw.Bytes())
}

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	ok, why := s.health()
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(w, why)
}

// failure is why the gate refuses every request until restarted, or nil: the
// node failed closed, or its log failed (which the node learns at its next append).
func (s *Server) failure() error {
	if err := s.node.Failed(); err != nil {
		return err
	}
	if s.cfg.Log != nil {
		return s.cfg.Log.Err()
	}
	return nil
}

// health is what /healthz says: ok while the gate serves, else why not.
func (s *Server) health() (ok bool, why string) {
	if err := s.failure(); err != nil {
		return false, "failed closed: the gate refuses every request until restarted: " + err.Error()
	}
	if s.isClosing() {
		return false, "shutting down"
	}
	return true, "ok"
}

// limitListener holds at most max connections open; Accept waits for one to close.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(l net.Listener, max int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, max), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back once, when it closes.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
