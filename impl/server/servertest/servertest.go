// Package servertest starts real gates for tests, as net/http/httptest starts real
// HTTP servers: in process (Start: a node and a server on a Unix socket, shut down
// when the test ends) or as the real binary (Process: build, start, SIGKILL,
// restart). Every test and harness of the project uses its one roles fixture.
//
// SOUNDGATE_TEST_IO=goroutines makes every gate Start starts use the goroutine
// transport instead of the event loop, so that one suite checks both.
package servertest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/wal"
)

// The tokens of the roles fixture (roles.json, which the Node.js tests and the
// benchmark scripts read too).
const (
	AgentToken    = "agent-token-0123456789abcdefghij"  // an agent of every run
	ScopedToken   = "scoped-agent-token-0123456789abcd" // an agent of the runs team-a-*
	ApproverToken = "approver-token-0123456789abcdefgh"
	OperatorToken = "operator-token-0123456789abcdefgh"
)

// RolesJSON is the roles fixture, as a roles file holds it.
//
//go:embed roles.json
var RolesJSON string

// Roles returns the parsed roles fixture.
func Roles() *server.Roles {
	rs, err := server.ParseRoles([]byte(RolesJSON), server.RolesOptions{})
	if err != nil {
		panic("servertest: the roles fixture does not parse: " + err.Error())
	}
	return rs
}

// WriteRoles writes the roles fixture to dir/roles.json (mode 0600) and returns its path.
func WriteRoles(dir string) (string, error) {
	p := filepath.Join(dir, "roles.json")
	return p, os.WriteFile(p, []byte(RolesJSON), 0o600)
}

// IOEnv names the environment variable that picks the transport of Start's gates.
const IOEnv = "SOUNDGATE_TEST_IO"

// Options configure Start. The zero value is a gate in memory, with the roles
// fixture, default limits and the wall clock.
type Options struct {
	Roles *server.Roles // nil: the fixture
	Node  node.Config   // the node's log, clock, limits
	// Recover, if set, rebuilds the node's state from this log (node.Recover) before
	// it serves; Node.Log, if set, is the log it appends to then.
	Recover *wal.Log
	Limits  server.Limits // the server's
	Logger  *slog.Logger  // the server's (nil: none)
	// Goroutines serves with the goroutine transport (also when IOEnv says so).
	Goroutines bool
	// TCP also listens on a loopback TCP port.
	TCP bool
	// Pipe serves on in-memory pipes (Gate.Pipe) instead of a socket: no file, no
	// port, for the fuzzers.
	Pipe bool
	// HTTP counts the server's metrics and serves its HTTP listener (ServeWeb) on a
	// loopback TCP port (Gate.HTTP). The log it reports is Node.Log, or Recover,
	// when that is a *wal.Log.
	HTTP bool
}

// Gate is a started in-process gate.
type Gate struct {
	Node   *node.Node
	Server *server.Server
	Unix   string // the Unix socket's path ("" with Options.Pipe)
	TCP    string // the TCP address, when Options.TCP
	HTTP   string // the HTTP listener's base URL (http://127.0.0.1:PORT), when Options.HTTP

	pipe   *pipeListener
	dir    string
	served chan error
	nls    int
}

// Start starts a gate for a test (New); it stops when the test ends, and the test
// fails if it does not stop cleanly.
func Start(t testing.TB, o Options) *Gate {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("servertest: %v", err)
		}
	})
	return g
}

// New starts a node and a server on a Unix socket (and TCP with Options.TCP). Close
// stops them.
func New(o Options) (*Gate, error) {
	if o.Roles == nil {
		o.Roles = Roles()
	}
	switch v := os.Getenv(IOEnv); v {
	case "", "loop":
	case "goroutines":
		o.Goroutines = true
	default:
		return nil, fmt.Errorf("%s=%q: want loop or goroutines", IOEnv, v)
	}
	g := &Gate{}
	var err error
	if o.Recover != nil {
		g.Node, err = node.Recover(o.Recover, o.Node)
	} else {
		g.Node = node.New(o.Node)
	}
	if err != nil {
		return nil, err
	}
	wlog, _ := o.Node.Log.(*wal.Log)
	if wlog == nil && o.Node.Log == nil {
		wlog = o.Recover
	}
	g.Server, err = server.New(server.Config{Roles: o.Roles, Node: g.Node, Limits: o.Limits, Version: "test",
		Goroutines: o.Goroutines, Logger: o.Logger, Metrics: o.HTTP, Log: wlog})
	if err != nil {
		g.Node.Close()
		return nil, err
	}
	ls, err := g.listen(o)
	if err != nil {
		g.Node.Close()
		return nil, err
	}
	var web net.Listener
	if o.HTTP {
		if web, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			for _, l := range ls {
				l.Close()
			}
			g.Node.Close()
			os.RemoveAll(g.dir)
			return nil, err
		}
		g.HTTP = "http://" + web.Addr().String()
	}
	g.served, g.nls = make(chan error, len(ls)+1), len(ls)
	for _, l := range ls {
		go func() { g.served <- g.Server.Serve(l) }()
	}
	if web != nil {
		g.nls++
		go func() { g.served <- g.Server.ServeWeb(web) }()
	}
	return g, nil
}

// listen makes the gate's listeners: a pipe listener, or a Unix socket in a new
// folder and, with o.TCP, a loopback TCP port.
func (g *Gate) listen(o Options) ([]net.Listener, error) {
	if o.Pipe {
		g.pipe = &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
		return []net.Listener{g.pipe}, nil
	}
	var err error
	if g.dir, err = os.MkdirTemp("", "sg"); err != nil { // short: a socket path has about 100 bytes
		return nil, err
	}
	g.Unix = filepath.Join(g.dir, "gate.sock")
	l, err := net.Listen("unix", g.Unix)
	if err != nil {
		os.RemoveAll(g.dir)
		return nil, err
	}
	ls := []net.Listener{l}
	if o.TCP {
		tl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			l.Close()
			os.RemoveAll(g.dir)
			return nil, err
		}
		g.TCP = tl.Addr().String()
		ls = append(ls, tl)
	}
	return ls, nil
}

// Pipe returns the client end of a new in-memory connection to a gate started with
// Options.Pipe.
func (g *Gate) Pipe() (net.Conn, error) {
	if g.pipe == nil {
		return nil, fmt.Errorf("servertest: the gate serves no pipe (Options.Pipe)")
	}
	cli, srv := net.Pipe()
	select {
	case g.pipe.conns <- srv:
		return cli, nil
	case <-g.pipe.done:
		return nil, net.ErrClosed
	}
}

// pipeListener hands net.Pipe connections to Serve.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// Close shuts the server down, stops the node and removes the socket. It returns the
// first error of the server's shutdown or of its Serve calls.
func (g *Gate) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := g.Server.Shutdown(ctx)
	if err != nil {
		err = fmt.Errorf("shutdown: %w", err)
	}
	for range g.nls {
		if serr := <-g.served; serr != nil && err == nil {
			err = fmt.Errorf("serve: %w", serr)
		}
	}
	g.nls = 0
	g.Node.Close()
	os.RemoveAll(g.dir)
	return err
}

// Connect connects a client with token to the gate's Unix socket.
func (g *Gate) Connect(token string) (*client.Client, error) {
	return client.Dial(context.Background(), g.Unix, token)
}

// Dial connects a client with token to the gate's Unix socket; it is closed when the
// test ends.
func (g *Gate) Dial(t testing.TB, token string) *client.Client {
	t.Helper()
	c, err := g.Connect(token)
	if err != nil {
		t.Fatalf("servertest: dial with token %s: %v", token, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// State returns the gate's state, encoded as a snapshot encodes it: equal bytes, equal
// states.
func (g *Gate) State(t testing.TB) []byte {
	t.Helper()
	var b []byte
	var err error
	g.Node.Inspect(func(c *core.Gate) { b, err = c.MarshalBinary() })
	if err != nil {
		t.Fatalf("servertest: encode the state: %v", err)
	}
	return b
}

// Raw is a connection that speaks lines itself, for tests of what the wire carries.
type Raw struct {
	Conn net.Conn
	r    *proto.Reader
}

// RawTimeout bounds how long Raw waits for an answer.
const RawTimeout = 5 * time.Second

// Raw connects to the gate's Unix socket without the client library; the
// connection is closed when the test ends.
func (g *Gate) Raw(t testing.TB) *Raw {
	t.Helper()
	nc, err := net.Dial("unix", g.Unix)
	if err != nil {
		t.Fatalf("servertest: dial %s: %v", g.Unix, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Raw{Conn: nc, r: proto.NewReader(nc)}
}

// Write writes s as it is (add the newline yourself).
func (r *Raw) Write(t testing.TB, s string) {
	t.Helper()
	if _, err := r.Conn.Write([]byte(s)); err != nil {
		t.Fatalf("servertest: write: %v", err)
	}
}

// Send writes one request line and returns the next answer.
func (r *Raw) Send(t testing.TB, line string) proto.Response {
	t.Helper()
	r.Write(t, line+"\n")
	return r.Recv(t)
}

// Recv reads the next answer, waiting at most RawTimeout.
func (r *Raw) Recv(t testing.TB) proto.Response {
	t.Helper()
	r.Conn.SetReadDeadline(time.Now().Add(RawTimeout))
	line, err := r.r.ReadLine()
	if err != nil {
		t.Fatalf("servertest: read an answer: %v", err)
	}
	resp, err := proto.DecodeResponse(line)
	if err != nil {
		t.Fatalf("servertest: decode %q: %v", line, err)
	}
	return resp
}

// WaitClosed waits at most RawTimeout for the server to close the connection and
// returns the read's error: nil if an answer came instead, os.ErrDeadlineExceeded if
// the connection stayed open.
func (r *Raw) WaitClosed() error {
	if r.r.Buffered() > 0 {
		return nil
	}
	r.Conn.SetReadDeadline(time.Now().Add(RawTimeout))
	_, err := r.Conn.Read(make([]byte, 1))
	return err
}

// Admitted is the answer to an admit made in the background (AdmitAsync).
type Admitted struct {
	Res proto.AdmitResult
	Err error
}

// AdmitAsync admits in the background, so that a test can act while the admit waits.
func AdmitAsync(c *client.Client, run, key string, epoch uint64, o client.AdmitOptions) <-chan Admitted {
	ch := make(chan Admitted, 1)
	go func() {
		res, err := c.Admit(context.Background(), run, key, epoch, o)
		ch <- Admitted{res, err}
	}()
	return ch
}

// Clock is a gate clock that a test sets: pass its Now as node.Config.Now.
type Clock struct{ ms atomic.Int64 }

// Now returns the clock's time.
func (c *Clock) Now() core.Time { return core.Time(c.ms.Load()) }

// Set sets the clock.
func (c *Clock) Set(t core.Time) { c.ms.Store(int64(t)) }

// SyncBuffer is a bytes.Buffer that several goroutines may write and read: the log
// of a gate, or the output of a process, read while it runs.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
