package egress

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/attempt"
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
// credential: an attempt (impl/attempt) of the sandboxed agent's runs, so each run's
// epoch is learnt once and then kept, and a Fence denies the agent's later requests.
type ClientAdmitter struct {
	C Conn
	// Redial, if set, makes a new connection when C was closed (the gate closes an
	// agent's idle connection): the request is then asked once more on it. Nil: a
	// closed C fails the request.
	Redial func(ctx context.Context) (Conn, error)
	// Closed reports whether an error means C is closed (client.ErrClosed).
	Closed func(error) bool

	once sync.Once
	at   *attempt.Attempt[Conn]
}

// attempt is the admitter's attempt, made from C, Redial and Closed on first use.
func (a *ClientAdmitter) attempt() *attempt.Attempt[Conn] {
	a.once.Do(func() { a.at = attempt.New(a.C, a.Redial, a.Closed, 0) })
	return a.at
}

// Close closes the connection the admitter asks on now, if it can be closed.
func (a *ClientAdmitter) Close() error { return a.attempt().Close() }

// Epoch returns the epoch the admitter asks at for run r, learning it on first use.
func (a *ClientAdmitter) Epoch(ctx context.Context, r core.RunID) (uint64, error) {
	return a.attempt().Epoch(ctx, string(r))
}

// Admit implements Admitter: it asks until the answer is not held or ctx ends,
// waiting on the gate between asks.
func (a *ClientAdmitter) Admit(ctx context.Context, r core.RunID, k core.Key) (Verdict, error) {
	e, err := a.Epoch(ctx, r)
	if err != nil {
		return Verdict{}, fmt.Errorf("soundgate/egress: the epoch of run %s: %w", r, err)
	}
	res, err := attempt.Do(ctx, a.attempt(), func(c Conn) (proto.AdmitResult, error) {
		return c.AdmitWait(ctx, string(r), string(k), e, false, clientAskWait)
	})
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Answer: res.Answer, Reason: res.Reason}, nil
}

// Complete implements Admitter.
func (a *ClientAdmitter) Complete(ctx context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	_, err := attempt.Do(ctx, a.attempt(), func(c Conn) (proto.CompleteResult, error) {
		return c.Complete(ctx, string(r), string(k), o, result)
	})
	return err
}
