package conformance

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/server"
)

// traceLenMax is the longest generated trace; the average is about half.
const traceLenMax = 60

// runRandom checks the conformance property on traces until about ops operations were
// compared, with one seed for all the randomness (printed).
func runRandom(t *testing.T, mode string, defaultOps int64, newImpl func() Impl) *Stats {
	t.Helper()
	ops := defaultOps
	if *opsFlag > 0 {
		ops = *opsFlag
	}
	s := defaultSeed()
	t.Logf("seed %d (%s)", s, Describe(s, t.Name()))
	stats := NewStats()
	params := gopter.DefaultTestParametersWithSeed(s)
	params.MaxSize = traceLenMax
	params.MinSuccessfulTests = int(max(1, ops/(traceLenMax/2)))
	params.Workers = 1
	props := gopter.NewProperties(params)
	props.Property(mode, commands.Prop(Commands(RandomConfig, newImpl, stats)))
	ok := props.Run(gopter.NewFormatedReporter(true, 160, &testWriter{t}))
	total.Add(stats)
	t.Log("\n" + stats.Report(mode))
	if !ok {
		t.Fatalf("conformance %s failed (seed %d); shrunk:\n%v%s", mode, s, stats.Smallest, Describe(s, t.Name()))
	}
	if m := stats.Missing(); len(m) > 0 {
		t.Fatalf("conformance %s never reached: %v (seed %d)", mode, m, s)
	}
	return stats
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// TestRandomCore: random traces on the core in process.
func TestRandomCore(t *testing.T) {
	def := int64(30_000)
	if *deep {
		def = 2_000_000
	}
	runRandom(t, "random-core", def, func() Impl { return NewCoreImpl() })
}

// wireRoles are the credentials of the servers the wire mode starts.
const wireRoles = `{"tokens":[
 {"token":"agent-token-0123456789","role":"agent","runs":["*"]},
 {"token":"approver-token-012345","role":"approver"},
 {"token":"operator-token-012345","role":"operator"}]}`

// newWireImpl starts a real in-memory server on a Unix socket in dir and connects one
// client per role. The returned function stops them.
func newWireImpl(dir string) (*WireImpl, func(), error) {
	roles, err := server.ParseRoles([]byte(wireRoles))
	if err != nil {
		return nil, nil, err
	}
	srv, err := server.New(server.Config{Roles: roles})
	if err != nil {
		return nil, nil, err
	}
	return serveWire(srv, dir)
}

// serveWire serves srv on a Unix socket in dir and connects one client per role of
// wireRoles. The returned function closes the clients and shuts the server down.
func serveWire(srv *server.Server, dir string) (*WireImpl, func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	sock := filepath.Join(dir, "gate.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, nil, err
	}
	go srv.Serve(l)
	w := &WireImpl{Srv: srv}
	var clients []*client.Client
	stop := func() {
		for _, c := range clients {
			c.Close()
		}
		srv.Shutdown(context.Background())
	}
	for _, p := range []struct {
		token string
		dst   **client.Client
	}{{"agent-token-0123456789", &w.Agent}, {"approver-token-012345", &w.Approver}, {"operator-token-012345", &w.Operator}} {
		c, err := client.Dial(context.Background(), sock, p.token)
		if err != nil {
			stop()
			return nil, nil, err
		}
		clients = append(clients, c)
		*p.dst = c
	}
	return w, stop, nil
}

// TestRandomWire: random traces through a real server over a Unix socket and the Go
// client, a fresh server per trace.
func TestRandomWire(t *testing.T) {
	base := t.TempDir()
	var traces atomic.Int64
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	def := int64(8_000)
	if *deep {
		def = 100_000
	}
	runRandom(t, "random-wire", def, func() Impl {
		for _, stop := range stops { // the previous trace is finished
			stop()
		}
		stops = stops[:0]
		w, stop, err := newWireImpl(filepath.Join(base, fmt.Sprint(traces.Add(1))))
		if err != nil {
			panic(err)
		}
		stops = append(stops, stop)
		return w
	})
}
