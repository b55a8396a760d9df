package mcpproxy

import (
	"context"
	"time"

	"github.com/soundgate/soundgate/impl/attempt"
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

// gate is the proxy's side of the gate: an attempt (impl/attempt) of its runs, one
// connection redialled when the gate closed it and each run's epoch learnt once. The
// proxy is one attempt of its runs: a Fence must deny its later calls (stale_epoch).
type gate struct{ at *attempt.Attempt[Conn] }

func (g *gate) epoch(ctx context.Context, run string) (uint64, error) { return g.at.Epoch(ctx, run) }

func (g *gate) admit(ctx context.Context, t Target, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error) {
	return attempt.Do(ctx, g.at, func(c Conn) (proto.AdmitResult, error) {
		return c.Admit(ctx, t.Run, t.Key, epoch, gated, wait)
	})
}

func (g *gate) complete(ctx context.Context, t Target, o core.Outcome, result string) error {
	_, err := attempt.Do(ctx, g.at, func(c Conn) (proto.CompleteResult, error) {
		return c.Complete(ctx, t.Run, t.Key, o, result)
	})
	return err
}

func (g *gate) close() { g.at.Close() }
