package egress

import (
	"context"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
)

// localAdmitWait is how long LocalGate.Admit waits for a held effect to change
// before answering held (the proxy then asks again).
const localAdmitWait = 250 * time.Millisecond

// LocalGate is an Admitter over an in-process admission core (impl/core), with no
// log and no network: the gate of tests, of the escape matrix and of demos. It asks
// at the run's current epoch, and waits up to localAdmitWait for a held effect.
type LocalGate struct {
	mu      sync.Mutex
	g       *core.Gate
	changed chan struct{} // closed (and replaced) on every change of state
}

// NewLocalGate returns a LocalGate with the core's default limits.
func NewLocalGate() *LocalGate {
	return &LocalGate{g: core.New(core.DefaultLimits()), changed: make(chan struct{})}
}

func now() core.Time { return core.Time(time.Now().UnixMilli()) }

func (l *LocalGate) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Open opens run r (no deadline).
//
//spec:action Open
func (l *LocalGate) Open(r core.RunID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.g.Open(r, 0)
	l.notify()
	return err
}

// Pause asks for a gated effect k of run r, so that the run has a pending approval
// and every other effect of r is held until Decide.
func (l *LocalGate) Pause(r core.RunID, k core.Key) (core.Answer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, _, err := l.g.Status(r, "")
	if err != nil {
		return 0, err
	}
	res, err := l.g.Admit(r, k, v.Epoch, true, now())
	l.notify()
	return res.Answer, err
}

// Decide takes an approver's decision on k.
//
//spec:action Decide
func (l *LocalGate) Decide(r core.RunID, k core.Key, d core.Decision) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.g.Decide(r, k, d)
	l.notify()
	return err
}

// Cancel cancels run r.
//
//spec:action Cancel
func (l *LocalGate) Cancel(r core.RunID) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.g.Cancel(r)
	l.notify()
	return err
}

// Effect returns the status of effect k of run r.
func (l *LocalGate) Effect(r core.RunID, k core.Key) (core.EffectView, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, e, err := l.g.Status(r, k)
	return e, err
}

// Admit implements Admitter.
//
//spec:action Admit
func (l *LocalGate) Admit(ctx context.Context, r core.RunID, k core.Key) (Verdict, error) {
	timer := time.NewTimer(localAdmitWait)
	defer timer.Stop()
	for {
		l.mu.Lock()
		v, _, err := l.g.Status(r, "")
		if err != nil {
			l.mu.Unlock()
			return Verdict{}, err
		}
		res, err := l.g.Admit(r, k, v.Epoch, false, now())
		if res.Changed {
			l.notify()
		}
		changed := l.changed
		l.mu.Unlock()
		if err != nil || res.Answer != core.AnswerHeld {
			return Verdict{Answer: res.Answer, Reason: res.Reason}, err
		}
		select {
		case <-changed:
		case <-timer.C:
			return Verdict{Answer: core.AnswerHeld}, nil
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
	}
}

// Complete implements Admitter.
//
//spec:action Complete
func (l *LocalGate) Complete(_ context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.g.Complete(r, k, o, result)
	l.notify()
	return err
}
