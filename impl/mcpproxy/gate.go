package mcpproxy

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Conn is an agent's connection to a gate server as the proxy uses it. Admit is one
// admit request that waits on the gate up to wait while the answer is held (0: answered
// at once). soundgate mcp-proxy adapts the Go client (clients/go/client) to it.
type Conn interface {
	Status(ctx context.Context, run, key string) (proto.StatusResult, error)
	Admit(ctx context.Context, run, key string, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error)
	Complete(ctx context.Context, run, key string, o core.Outcome, result string) (proto.CompleteResult, error)
}

// epochsMax bounds the runs whose epoch the proxy remembers; past it, the proxy
// refuses calls of new runs rather than forget an epoch (forgetting would let a
// fenced run's calls move to the new epoch).
const epochsMax = 4096

// gate is the proxy's side of the gate: one connection, redialled when the gate closed
// it, and the epoch of each run, learnt once and then kept. The proxy is one attempt of
// its runs: a Fence must deny its later calls (stale_epoch), not move them on.
type gate struct {
	redial func(ctx context.Context) (Conn, error)
	closed func(error) bool

	mu     sync.Mutex
	c      Conn
	epochs map[string]uint64
}

func (g *gate) conn() Conn {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.c
}

// retry runs f and, if the gate had closed the connection and a redial is possible,
// once more on a new one: every request of the proxy is idempotent (an admit by its
// key, a complete by its record, a status read).
func gateRetry[T any](ctx context.Context, g *gate, f func(Conn) (T, error)) (T, error) {
	c := g.conn()
	v, err := f(c)
	if err == nil || g.redial == nil || g.closed == nil || !g.closed(err) {
		return v, err
	}
	g.mu.Lock()
	if g.c == c {
		nc, rerr := g.redial(ctx)
		if rerr != nil {
			g.mu.Unlock()
			return v, fmt.Errorf("%w (redial: %v)", err, rerr)
		}
		if cl, ok := c.(io.Closer); ok {
			cl.Close()
		}
		g.c = nc
	}
	c = g.c
	g.mu.Unlock()
	return f(c)
}

// epoch is the epoch the proxy asks at for run.
func (g *gate) epoch(ctx context.Context, run string) (uint64, error) {
	g.mu.Lock()
	e, ok := g.epochs[run]
	full := len(g.epochs) >= epochsMax
	g.mu.Unlock()
	if ok {
		return e, nil
	}
	if full {
		return 0, fmt.Errorf("the proxy already serves %d runs, its limit", epochsMax)
	}
	st, err := gateRetry(ctx, g, func(c Conn) (proto.StatusResult, error) { return c.Status(ctx, run, "") })
	if err != nil {
		return 0, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.epochs[run]; ok {
		return e, nil
	}
	if g.epochs == nil {
		g.epochs = map[string]uint64{}
	}
	g.epochs[run] = st.Epoch
	return st.Epoch, nil
}

func (g *gate) admit(ctx context.Context, t Target, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error) {
	return gateRetry(ctx, g, func(c Conn) (proto.AdmitResult, error) {
		return c.Admit(ctx, t.Run, t.Key, epoch, gated, wait)
	})
}

func (g *gate) complete(ctx context.Context, t Target, o core.Outcome, result string) error {
	_, err := gateRetry(ctx, g, func(c Conn) (proto.CompleteResult, error) {
		return c.Complete(ctx, t.Run, t.Key, o, result)
	})
	return err
}

func (g *gate) close() {
	if cl, ok := g.conn().(io.Closer); ok {
		cl.Close()
	}
}
