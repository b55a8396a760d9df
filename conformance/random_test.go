package conformance

import (
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/server/servertest"
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
	t.Parallel() // with TestExhaustive
	def := int64(30_000)
	if *deep {
		def = 2_000_000
	}
	runRandom(t, "random-core", def, func() Impl { return NewNodeImpl() })
}

// newWireImpl starts a real in-memory gate on a Unix socket and connects one client
// per role. The returned function stops them.
func newWireImpl() (*WireImpl, func(), error) {
	return serveWire(servertest.Options{})
}

// serveWire starts a gate with o and connects one client per role of the roles
// fixture. The returned function closes the clients and stops the gate.
func serveWire(o servertest.Options) (*WireImpl, func(), error) {
	g, err := servertest.New(o)
	if err != nil {
		return nil, nil, err
	}
	w := &WireImpl{Node: g.Node}
	var clients []*client.Client
	stop := func() {
		for _, c := range clients {
			c.Close()
		}
		g.Close()
	}
	for _, p := range []struct {
		token string
		dst   **client.Client
	}{{servertest.AgentToken, &w.Agent}, {servertest.ApproverToken, &w.Approver}, {servertest.OperatorToken, &w.Operator}} {
		c, err := g.Connect(p.token)
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
		w, stop, err := newWireImpl()
		if err != nil {
			panic(err)
		}
		stops = append(stops, stop)
		return w
	})
}
