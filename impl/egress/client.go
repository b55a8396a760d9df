package egress

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// clientAskWait is how long one ask of a ClientAdmitter waits on the gate for a held
// effect before it asks again (until the proxy's context ends: Proxy.HeldWaitMax).
const clientAskWait = 5 * time.Second

// Conn is an agent's connection to a gate server, as a ClientAdmitter uses it; the Go
// client (*client.Client) implements it.
type Conn interface {
	Status(ctx context.Context, run, key string) (proto.StatusResult, error)
	AdmitWait(ctx context.Context, run, key string, epoch uint64, gated bool, waitStep time.Duration) (proto.AdmitResult, error)
	Complete(ctx context.Context, run, key string, o core.Outcome, result string) (proto.CompleteResult, error)
}

// ClientAdmitter is an Admitter over a connection to a gate server, with an agent's
// credential. Each run's epoch is learnt once, on its first request, and then kept:
// the sandboxed agent is one attempt, and a Fence of its run must deny its later
// requests (stale_epoch) rather than quietly move it to the new epoch.
type ClientAdmitter struct {
	C Conn

	mu     sync.Mutex
	epochs map[core.RunID]uint64
}

// Epoch returns the epoch the admitter asks at for run r, learning it on first use.
func (a *ClientAdmitter) Epoch(ctx context.Context, r core.RunID) (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.epochs[r]; ok {
		return e, nil
	}
	st, err := a.C.Status(ctx, string(r), "")
	if err != nil {
		return 0, err
	}
	if a.epochs == nil {
		a.epochs = map[core.RunID]uint64{}
	}
	a.epochs[r] = st.Epoch
	return st.Epoch, nil
}

// Admit implements Admitter: it asks until the answer is not held or ctx ends,
// waiting on the gate between asks.
func (a *ClientAdmitter) Admit(ctx context.Context, r core.RunID, k core.Key) (Verdict, error) {
	e, err := a.Epoch(ctx, r)
	if err != nil {
		return Verdict{}, fmt.Errorf("soundgate/egress: the epoch of run %s: %w", r, err)
	}
	res, err := a.C.AdmitWait(ctx, string(r), string(k), e, false, clientAskWait)
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Answer: res.Answer, Reason: res.Reason}, nil
}

// Complete implements Admitter.
func (a *ClientAdmitter) Complete(ctx context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	_, err := a.C.Complete(ctx, string(r), string(k), o, result)
	return err
}
