package egress

import (
	"context"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
)

// localAdmitWait is how long LocalGate.Admit waits for a held effect to change
// before answering held (the proxy then asks again).
const localAdmitWait = 250 * time.Millisecond

// LocalGate is an Admitter over a node with no log (impl/node), in process, with no
// network: the gate of tests, of the escape matrix and of demos. It asks at the run's
// current epoch, and a held effect waits at the node up to localAdmitWait.
type LocalGate struct {
	n *node.Node
}

// NewLocalGate returns a LocalGate with the core's default limits.
func NewLocalGate() *LocalGate {
	return &LocalGate{n: node.New(node.Config{})}
}

// apply applies one command and returns the core's reply, or the refusal.
func (l *LocalGate) apply(c core.Command) (core.Reply, error) {
	a := l.n.Apply(node.Request{Cmd: c})
	return a.Reply, a.Err
}

// Open opens run r (no deadline).
func (l *LocalGate) Open(r core.RunID) error {
	_, err := l.apply(core.Command{Op: core.OpOpen, Run: r})
	return err
}

// epoch returns the current epoch of run r.
func (l *LocalGate) epoch(r core.RunID) (uint64, error) {
	rep, err := l.apply(core.Command{Op: core.OpStatus, Run: r})
	return rep.Run.Epoch, err
}

// Pause asks for a gated effect k of run r, so that the run has a pending approval
// and every other effect of r is held until Decide.
func (l *LocalGate) Pause(r core.RunID, k core.Key) (core.Answer, error) {
	e, err := l.epoch(r)
	if err != nil {
		return 0, err
	}
	rep, err := l.apply(core.Command{Op: core.OpAdmit, Run: r, Key: k, Epoch: e, Gated: true})
	return rep.Admit.Answer, err
}

// Decide takes an approver's decision on k.
func (l *LocalGate) Decide(r core.RunID, k core.Key, d core.Decision) error {
	_, err := l.apply(core.Command{Op: core.OpDecide, Run: r, Key: k, Decision: d})
	return err
}

// Cancel cancels run r.
func (l *LocalGate) Cancel(r core.RunID) error {
	_, err := l.apply(core.Command{Op: core.OpCancel, Run: r})
	return err
}

// Effect returns the status of effect k of run r.
func (l *LocalGate) Effect(r core.RunID, k core.Key) (core.EffectView, error) {
	rep, err := l.apply(core.Command{Op: core.OpStatus, Run: r, Key: k})
	return rep.Effect, err
}

// Admit implements Admitter: a held effect waits at the node for its run to change,
// up to localAdmitWait, and is then answered as it stands.
func (l *LocalGate) Admit(ctx context.Context, r core.RunID, k core.Key) (Verdict, error) {
	e, err := l.epoch(r)
	if err != nil {
		return Verdict{}, err
	}
	party := l.n.Join()
	defer l.n.Leave(party)
	done := make(chan node.Answer, 1)
	a := l.n.Apply(node.Request{Cmd: core.Command{Op: core.OpAdmit, Run: r, Key: k, Epoch: e},
		Wait: localAdmitWait, Party: party, Done: func(a node.Answer) { done <- a }})
	if a.Parked {
		select {
		case a = <-done:
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
	}
	return Verdict{Answer: a.Reply.Admit.Answer, Reason: a.Reply.Admit.Reason}, a.Err
}

// Complete implements Admitter.
func (l *LocalGate) Complete(_ context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	_, err := l.apply(core.Command{Op: core.OpComplete, Run: r, Key: k, Outcome: o, Result: result})
	return err
}
