package conformance

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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
	s := *seed
	if s == 0 {
		s = time.Now().UnixNano()
	}
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

// TestRandomWire: random traces through a real server over a Unix socket and the Go
// client. Each trace uses its own run names on one shared server.
func TestRandomWire(t *testing.T) {
	roles, err := server.ParseRoles([]byte(`{"tokens":[
	 {"token":"agent-token-0123456789","role":"agent","runs":["*"]},
	 {"token":"approver-token-012345","role":"approver"},
	 {"token":"operator-token-012345","role":"operator"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Roles: roles})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "gate.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	dial := func(token string) *client.Client {
		c, err := client.Dial(context.Background(), sock, token)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	agent, approver, operator := dial("agent-token-0123456789"), dial("approver-token-012345"), dial("operator-token-012345")
	defer agent.Close()
	defer approver.Close()
	defer operator.Close()
	var traces atomic.Int64
	def := int64(3_000)
	if *deep {
		def = 100_000
	}
	runRandom(t, "random-wire", def, func() Impl {
		return &WireImpl{Srv: srv, Agent: agent, Approver: approver, Operator: operator, Prefix: fmt.Sprintf("t%d-", traces.Add(1))}
	})
}
