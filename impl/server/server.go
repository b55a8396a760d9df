package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// Config configures a Server.
type Config struct {
	Roles  *Roles       // required: who may connect and what each may do
	Node   *node.Node   // required: the gate's state; the server applies every request to it
	Limits Limits       // limits of the server
	Logger *slog.Logger // nil: discard
	// Version is reported in the hello answer ("soundgate <Version>").
	Version string
	// Goroutines serves each connection with a reader and a writer goroutine instead
	// of the event loop (Linux epoll, the default there). Other platforms always do.
	Goroutines bool
	// Metrics counts the answers the server sends, for the /metrics of ServeWeb
	// (an atomic add per admit answered; off, nothing is counted and ServeWeb
	// refuses to start).
	Metrics bool
	// Log is the node's write-ahead log, if it has one: /metrics reports its
	// counters and histograms, /healthz its failure. Nil: in memory.
	Log *wal.Log
}

// Server serves the gate's protocol. Create it with New, feed it listeners with Serve,
// stop it with Shutdown.
type Server struct {
	cfg   Config
	node  *node.Node
	log   *slog.Logger
	doneC chan struct{} // closed by Shutdown

	mu         sync.Mutex
	closing    bool
	listeners  map[net.Listener]struct{}
	sessions   map[*session]struct{}
	admins     int                       // of the sessions, those of ServeAdmin's listeners
	agents     int                       // authenticated agent sessions of Serve's listeners
	perToken   map[[sha256.Size]byte]int // authenticated sessions by token (its hash)
	roles      *Roles                    // the tokens a hello is checked against (SetRoles)
	loop       *loop                     // the event loop, started by the first Serve (nil: goroutines)
	loopFailed bool                      // it could not start: goroutines serve

	wg sync.WaitGroup // transport goroutines

	refused refusals

	waitersMu sync.Mutex                // guards waits only: Done calls in under the node's lock
	waiters   map[[sha256.Size]byte]int // admits waiting at the node, by token

	usage *usage // each token's runs and result bytes (quota.go)

	metrics *serverMetrics            // nil unless Config.Metrics (metrics.go)
	webs    map[*http.Server]struct{} // ServeWeb's, closed by Shutdown (under mu)

	hub     hub     // the inbox's subscriptions (watch.go)
	watches watches // the connections' watches of them (watcher.go)
}

// Errors of New.
var (
	// ErrNoRoles: a server needs a roles file; an open gate would fail open.
	ErrNoRoles = errors.New("soundgate/server: no roles configured")
	// ErrNoNode: a server needs a node to apply requests to.
	ErrNoNode = errors.New("soundgate/server: no node configured")
)

// New returns a server over cfg.Node.
func New(cfg Config) (*Server, error) {
	if cfg.Roles == nil || len(cfg.Roles.creds) == 0 {
		return nil, ErrNoRoles
	}
	if cfg.Node == nil {
		return nil, ErrNoNode
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if err := cfg.Limits.check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, node: cfg.Node, log: cfg.Logger, doneC: make(chan struct{}),
		listeners: map[net.Listener]struct{}{}, sessions: map[*session]struct{}{}, perToken: map[[sha256.Size]byte]int{}, roles: cfg.Roles,
		waiters: map[[sha256.Size]byte]int{}, usage: newUsage(), webs: map[*http.Server]struct{}{}}
	if cfg.Metrics {
		s.metrics = &serverMetrics{}
	}
	cfg.Node.OnRetire(s.usage.retired)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// Serve accepts connections on l until Shutdown. It returns nil after Shutdown.
func (s *Server) Serve(l net.Listener) error { return s.serve(l, false) }

// ServeAdmin is Serve for a listener of approvers and operators only (an agent's
// hello is refused), with its own Limits.AdminConnectionsMax: a flood of the other
// listeners, by agents or by peers with no token, never takes its connections. It
// keeps operators in reach of cancel only as far as the listener itself is out of
// the agents' reach (a Unix socket that their user cannot open; docs/server.md).
func (s *Server) ServeAdmin(l net.Listener) error { return s.serve(l, !weakened.admin) }

func (s *Server) serve(l net.Listener, admin bool) error {
	if !s.track(l) {
		l.Close()
		return nil
	}
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			if closing := s.untrack(l); closing {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("soundgate/server: accept: %w", err)
			}
			// Out of file descriptors, or another passing failure: back off and go on,
			// as net/http does, rather than stop the gate.
			s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			select {
			case <-time.After(backoff):
			case <-s.doneC:
			}
			backoff = min(2*backoff, time.Second)
			s.track(l)
			continue
		}
		backoff = 5 * time.Millisecond
		s.admit(nc, admin)
	}
}

// track and untrack keep the listeners Shutdown must close; track reports false
// once the server is closing.
func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) untrack(l net.Listener) (closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.listeners, l)
	return s.closing
}

// admit hands an accepted connection to a transport, or refuses it when the server
// is full or closing.
func (s *Server) admit(nc net.Conn, admin bool) {
	s.mu.Lock()
	full := len(s.sessions)-s.admins >= s.cfg.Limits.ConnectionsMax
	if admin {
		full = s.admins >= s.cfg.Limits.AdminConnectionsMax
	}
	if s.closing || full {
		refusal := proto.ErrOverloaded
		if s.closing {
			refusal = proto.ErrShuttingDown
		}
		s.mu.Unlock()
		s.refused.add(s.log, refusal.Type, "remote", nc.RemoteAddr().String())
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		nc.Write(proto.AppendError(nil, proto.ID{}, refusal))
		nc.Close()
		return
	}
	ss := newSession(s, nc.RemoteAddr().String())
	ss.admin = admin
	s.sessions[ss] = struct{}{}
	if admin {
		s.admins++
	}
	lp := s.loopLocked()
	s.wg.Add(1) // the transport's Done when it ends ss
	s.mu.Unlock()
	if lp != nil && lp.add(ss, nc) {
		return
	}
	serveGoroutines(ss, nc) // no loop, or the socket cannot be taken from nc
}

// loopLocked returns the server's event loop, starting it on first use; nil with
// Config.Goroutines, on a platform without one, or if it cannot start (then the
// goroutine transport serves, and the log says why).
func (s *Server) loopLocked() *loop {
	if s.cfg.Goroutines || !loopAvailable || s.loopFailed {
		return nil
	}
	if s.loop == nil {
		lp, err := newLoop(s)
		if err != nil {
			s.loopFailed = true
			s.log.Warn("event loop unavailable; serving a goroutine per connection", "err", err)
			return nil
		}
		s.loop = lp
	}
	return s.loop
}

// authenticate counts ss as cred's, or says why the server refuses it: a token at
// its ConnectionsPerTokenMax, an agent on an admin listener, or an agent where
// agents hold every connection but the reserved ones.
func (s *Server) authenticate(ss *session, cred *Credential) error {
	agent := cred.Role == proto.RoleAgent
	s.mu.Lock()
	defer s.mu.Unlock()
	switch lim := s.cfg.Limits; {
	case !s.roles.holds(cred):
		return fmt.Errorf("%w: the roles were reloaded without this token", proto.ErrUnauthenticated)
	case agent && ss.admin:
		return fmt.Errorf("%w: this listener takes approvers and operators only", proto.ErrForbidden)
	case weakened.reserve:
	case s.perToken[cred.hash] >= lim.ConnectionsPerTokenMax:
		return fmt.Errorf("%w: token %q holds %d connections, its most", proto.ErrOverloaded, cred.Name, lim.ConnectionsPerTokenMax)
	case agent && s.agents >= lim.ConnectionsMax-lim.ReservedConnections:
		return fmt.Errorf("%w: agents hold %d connections; the other %d are reserved for approvers and operators", proto.ErrOverloaded, s.agents, lim.ReservedConnections)
	}
	ss.cred = cred
	s.perToken[cred.hash]++
	if agent && !ss.admin {
		s.agents++
	}
	return nil
}

// reserveWaiter counts one more waiting admit of cred's token, or refuses it (quota).
func (s *Server) reserveWaiter(cred *Credential) error {
	s.waitersMu.Lock()
	defer s.waitersMu.Unlock()
	if n, max := s.waiters[cred.hash], s.cfg.Limits.WaitersPerTokenMax; n >= max && !weakened.quota {
		return fmt.Errorf("%w: token %q has %d admits waiting for a decision, its most", proto.ErrQuota, cred.Name, max)
	}
	s.waiters[cred.hash]++
	return nil
}

func (s *Server) releaseWaiters(cred *Credential, n int) {
	s.waitersMu.Lock()
	defer s.waitersMu.Unlock()
	if s.waiters[cred.hash] -= n; s.waiters[cred.hash] <= 0 {
		delete(s.waiters, cred.hash)
	}
}

// SetRoles replaces the tokens the server accepts (a roles file reloaded): hellos
// from now on are checked against rs, and every connection whose credential rs does
// not hold as it was (the same token, name, role and runs) is told so and closed; it
// is refused everything it sends meanwhile. It returns how many it closed.
func (s *Server) SetRoles(rs *Roles) (closed int, err error) {
	if rs == nil || len(rs.creds) == 0 {
		return 0, ErrNoRoles
	}
	var revoked []*session
	s.mu.Lock()
	s.roles = rs
	for ss := range s.sessions {
		if ss.cred != nil && !rs.holds(ss.cred) {
			ss.revoked.Store(true)
			revoked = append(revoked, ss)
		}
	}
	s.mu.Unlock()
	bye := proto.AppendError(nil, proto.ID{}, errRevoked)
	for _, ss := range revoked {
		ss.push(answer{line: bye, close: true})
	}
	return len(revoked), nil
}

// errRevoked is what a connection whose token a reload removed or changed is told.
var errRevoked = fmt.Errorf("%w: the roles were reloaded without this token as it was", proto.ErrUnauthenticated)

// lookup returns the credential of token in the current roles.
func (s *Server) lookup(token string) (*Credential, bool) {
	s.mu.Lock()
	rs := s.roles
	s.mu.Unlock()
	return rs.Lookup(token)
}

// Connections returns how many connections the server holds now.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// forget ends a session for the server once its transport has closed it: it is no
// longer counted, its waiting admits are dropped, and its watch ends.
func (s *Server) forget(ss *session) {
	s.node.Leave(ss.party)
	// Leave drops the session's waiting admits without answering them (it holds the
	// node's lock, as every Done does): what they held of the token's quota is free.
	if n := ss.waiting.Swap(0); n > 0 {
		s.releaseWaiters(ss.cred, int(n))
	}
	s.mu.Lock()
	delete(s.sessions, ss)
	if ss.admin {
		s.admins--
	}
	if ss.cred != nil {
		if s.perToken[ss.cred.hash]--; s.perToken[ss.cred.hash] == 0 {
			delete(s.perToken, ss.cred.hash)
		}
		if ss.cred.Role == proto.RoleAgent && !ss.admin {
			s.agents--
		}
	}
	s.mu.Unlock()
	s.endWatch(ss) // after the delete: startWatch subscribes only sessions still held
	s.wg.Done()
}
