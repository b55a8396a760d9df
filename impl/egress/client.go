package egress

import (
	"context"
	"fmt"
	"io"
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
	// Redial, if set, makes a new connection when C was closed (the gate closes an
	// agent's idle connection): the request is then asked once more on it, which is
	// safe because every request of the admitter is idempotent (an admit by its key,
	// a complete by its outcome, a status read). Nil: a closed C fails the request.
	Redial func(ctx context.Context) (Conn, error)
	// Closed reports whether an error means C is closed (client.ErrClosed).
	Closed func(error) bool

	mu     sync.Mutex
	epochs map[core.RunID]uint64
}

// conn returns the connection to ask on.
func (a *ClientAdmitter) conn() Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.C
}

// retry asks f on the connection and, if the gate had closed it and Redial is set,
// once more on a new one.
func retry[T any](ctx context.Context, a *ClientAdmitter, f func(Conn) (T, error)) (T, error) {
	c := a.conn()
	v, err := f(c)
	if err == nil || a.Redial == nil || a.Closed == nil || !a.Closed(err) {
		return v, err
	}
	a.mu.Lock()
	if a.C == c {
		nc, rerr := a.Redial(ctx)
		if rerr != nil {
			a.mu.Unlock()
			return v, fmt.Errorf("%w (redial: %v)", err, rerr)
		}
		if cl, ok := c.(io.Closer); ok {
			cl.Close() // the gate closed it; this frees what is left of it here
		}
		a.C = nc
	}
	c = a.C
	a.mu.Unlock()
	return f(c)
}

// Close closes the connection the admitter asks on now, if it can be closed.
func (a *ClientAdmitter) Close() error {
	if cl, ok := a.conn().(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Epoch returns the epoch the admitter asks at for run r, learning it on first use.
func (a *ClientAdmitter) Epoch(ctx context.Context, r core.RunID) (uint64, error) {
	a.mu.Lock()
	e, ok := a.epochs[r]
	a.mu.Unlock()
	if ok {
		return e, nil
	}
	st, err := retry(ctx, a, func(c Conn) (proto.StatusResult, error) { return c.Status(ctx, string(r), "") })
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.epochs[r]; ok { // another request learnt it first: keep one epoch
		return e, nil
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
	res, err := retry(ctx, a, func(c Conn) (proto.AdmitResult, error) {
		return c.AdmitWait(ctx, string(r), string(k), e, false, clientAskWait)
	})
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Answer: res.Answer, Reason: res.Reason}, nil
}

// Complete implements Admitter.
func (a *ClientAdmitter) Complete(ctx context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	_, err := retry(ctx, a, func(c Conn) (proto.CompleteResult, error) {
		return c.Complete(ctx, string(r), string(k), o, result)
	})
	return err
}
