// Package attempt is an agent's side of one attempt of its runs on a remote gate: the
// connection, redialled when the gate closed it (it closes an idle agent's), and each
// run's epoch, learnt once and then kept. An attempt's later requests must be denied
// (stale_epoch) after a Fence of its run, never quietly moved to the new epoch.
//
// soundgate run's egress proxy (impl/egress) and soundgate mcp-proxy (impl/mcpproxy)
// are such attempts; each names the requests it makes in its own Conn interface.
package attempt

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/soundgate/soundgate/impl/proto"
)

// Conn is what an attempt needs of a connection: a status read, to learn an epoch.
// It is comparable so that a redial replaces only the connection that failed.
type Conn interface {
	comparable
	Status(ctx context.Context, run, key string) (proto.StatusResult, error)
}

// Attempt holds the connection and the epochs. Its methods are safe for concurrent use.
type Attempt[C Conn] struct {
	redial  func(ctx context.Context) (C, error)
	closed  func(error) bool
	maxRuns int

	mu     sync.Mutex
	c      C
	epochs map[string]uint64
}

// New returns an attempt on connection c. redial, if not nil, makes a new connection
// when closed(err) says c was closed: the request is then asked once more on it, safe
// because every request of an attempt is idempotent (an admit by its key, a complete by
// its outcome, a status read). maxRuns bounds the runs whose epoch it keeps (0: no
// bound); past it, a new run is refused rather than an epoch forgotten.
func New[C Conn](c C, redial func(ctx context.Context) (C, error), closed func(error) bool, maxRuns int) *Attempt[C] {
	return &Attempt[C]{c: c, redial: redial, closed: closed, maxRuns: maxRuns}
}

// Conn returns the connection to ask on now.
func (a *Attempt[C]) Conn() C {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.c
}

// Do asks f on the connection and, if the gate had closed it and a redial is possible,
// once more on a new one.
func Do[C Conn, T any](ctx context.Context, a *Attempt[C], f func(C) (T, error)) (T, error) {
	c := a.Conn()
	v, err := f(c)
	if err == nil || a.redial == nil || a.closed == nil || !a.closed(err) {
		return v, err
	}
	a.mu.Lock()
	if a.c == c {
		nc, rerr := a.redial(ctx)
		if rerr != nil {
			a.mu.Unlock()
			return v, fmt.Errorf("%w (redial: %v)", err, rerr)
		}
		if cl, ok := any(c).(io.Closer); ok {
			cl.Close() // the gate closed it; this frees what is left of it here
		}
		a.c = nc
	}
	c = a.c
	a.mu.Unlock()
	return f(c)
}

// Epoch returns the epoch the attempt asks at for run, learning it on first use.
func (a *Attempt[C]) Epoch(ctx context.Context, run string) (uint64, error) {
	a.mu.Lock()
	e, ok := a.epochs[run]
	full := a.maxRuns > 0 && len(a.epochs) >= a.maxRuns
	a.mu.Unlock()
	if ok {
		return e, nil
	}
	if full {
		return 0, fmt.Errorf("this attempt already serves %d runs, its limit", a.maxRuns)
	}
	st, err := Do(ctx, a, func(c C) (proto.StatusResult, error) { return c.Status(ctx, run, "") })
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.epochs[run]; ok { // another request learnt it first: keep one epoch
		return e, nil
	}
	if a.epochs == nil {
		a.epochs = map[string]uint64{}
	}
	a.epochs[run] = st.Epoch
	return st.Epoch, nil
}

// Close closes the connection the attempt asks on now, if it can be closed.
func (a *Attempt[C]) Close() error {
	if cl, ok := any(a.Conn()).(io.Closer); ok {
		return cl.Close()
	}
	return nil
}
