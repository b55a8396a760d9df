package egress

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
)

// clientAskWait is how long one Admit of a ClientAdmitter waits on the gate for a
// held effect (the proxy asks again until Proxy.HeldWaitMax).
const clientAskWait = 5 * time.Second

// ClientAdmitter is an Admitter over a connection to a gate server (package client),
// with an agent's credential. Each run's epoch is learnt once, on its first request,
// and then kept: the sandboxed agent is one attempt, and a Fence of its run must deny
// its later requests (stale_epoch) rather than quietly move it to the new epoch.
type ClientAdmitter struct {
	C *client.Client

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

// Admit implements Admitter.
func (a *ClientAdmitter) Admit(ctx context.Context, r core.RunID, k core.Key) (Verdict, error) {
	e, err := a.Epoch(ctx, r)
	if err != nil {
		return Verdict{}, fmt.Errorf("soundgate/egress: the epoch of run %s: %w", r, err)
	}
	wait := clientAskWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-50*time.Millisecond)
	}
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	res, err := a.C.Admit(ctx, string(r), string(k), e, client.AdmitOptions{Wait: wait})
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
