package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/model"
)

// Impl is an implementation under test: it answers model operations and exposes its
// state through the abstraction function.
type Impl interface {
	Do(op model.Op) model.Answer
	Abstract(c model.Config) model.State
}

// CoreImpl drives impl/core in process.
type CoreImpl struct{ G *core.Gate }

// NewCoreImpl returns a CoreImpl over an empty core.
func NewCoreImpl() *CoreImpl { return &CoreImpl{G: core.New(core.DefaultLimits())} }

func identity(r string) core.RunID { return core.RunID(r) }

// Do implements Impl.
func (ci *CoreImpl) Do(op model.Op) model.Answer {
	return answerOf(op, ci.G.Step(command(op, core.RunID(op.Run))))
}

// Abstract implements Impl.
func (ci *CoreImpl) Abstract(c model.Config) model.State { return Abstract(c, ci.G, identity) }

// WireImpl drives a real server through the Go client, each operation on the
// connection of the role that may send it. Timeout, which has no verb on the wire (it
// is the gate's clock), goes through server.TimeoutRun: the server's own timeout path.
// Runs may be prefixed, so that several traces can share one server.
type WireImpl struct {
	Srv                       *server.Server
	Agent, Approver, Operator *client.Client
	Prefix                    string
}

func (w *WireImpl) run(r string) core.RunID { return core.RunID(w.Prefix + r) }

// Do implements Impl.
func (w *WireImpl) Do(op model.Op) model.Answer {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, key := string(w.run(op.Run)), op.Key
	var rep core.Reply
	switch op.Action {
	case model.ActOpen:
		r, err := w.Operator.Open(ctx, run, 0)
		rep.Err, rep.Open.Run = err, core.RunView{Status: r.Status, Epoch: r.Epoch}
	case model.ActAdmit:
		if op.Epoch < 1 { // the wire refuses epoch 0 before the gate sees it
			return model.Answer{Err: model.ErrInvalidArgument}
		}
		r, err := w.Agent.Admit(ctx, run, key, uint64(op.Epoch), client.AdmitOptions{Gated: op.Gated})
		rep.Err, rep.Admit = err, core.AdmitResult{Answer: r.Answer, Reason: r.Reason, Outcome: r.Outcome}
	case model.ActDecide:
		d, _ := core.ParseDecision(op.Decision)
		r, err := w.Approver.Decide(ctx, run, key, d)
		rep.Err, rep.Decide = err, core.DecideResult{Repeat: r.Repeat}
	case model.ActComplete:
		o, _ := core.ParseOutcome(op.Outcome)
		r, err := w.Agent.Complete(ctx, run, key, o, "")
		rep.Err, rep.Complete = err, core.CompleteResult{Repeat: r.Repeat}
	case model.ActCancel:
		r, err := w.Operator.Cancel(ctx, run)
		rep.Err, rep.Run = err, core.RunView{Status: r.Status, Epoch: r.Epoch}
	case model.ActFence:
		r, err := w.Operator.Fence(ctx, run)
		rep.Err, rep.Run = err, core.RunView{Status: core.RunActive, Epoch: r.Epoch}
	case model.ActTimeout:
		_, err := w.Srv.TimeoutRun(w.run(op.Run))
		rep.Err = err
		if err == nil {
			st, err := w.Agent.Status(ctx, run, "")
			rep.Err, rep.Run = err, core.RunView{Status: st.Status, Epoch: st.Epoch}
		}
	default:
		panic(fmt.Sprintf("conformance: unknown action %q", op.Action))
	}
	return answerOf(op, rep)
}

// Abstract implements Impl: the server's state, read through a snapshot.
func (w *WireImpl) Abstract(c model.Config) model.State {
	_, state, err := w.Srv.Snapshot()
	if err != nil {
		panic(err)
	}
	g := core.New(core.DefaultLimits())
	if err := g.UnmarshalBinary(state); err != nil {
		panic(err)
	}
	return Abstract(c, g, func(r string) core.RunID { return w.run(r) })
}
