package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/model"
)

// Impl is an implementation under test: it answers model operations and exposes its
// state through the abstraction function.
type Impl interface {
	Do(op model.Op) model.Answer
	Abstract(c model.Config) model.State
}

// NodeImpl drives the core in process, through its one door (impl/node), with no
// log and no network.
type NodeImpl struct{ N *node.Node }

// NewNodeImpl returns a NodeImpl over an empty gate.
func NewNodeImpl() *NodeImpl { return &NodeImpl{N: node.New(node.Config{Now: zeroClock})} }

// zeroClock is the clock of the in-process modes: the model has no deadlines.
func zeroClock() core.Time { return 0 }

func identity(r string) core.RunID { return core.RunID(r) }

// Do implements Impl.
func (ni *NodeImpl) Do(op model.Op) model.Answer { return apply(ni.N, op, core.RunID(op.Run)) }

// apply applies op to n over the given run name and returns the model's form of the answer.
func apply(n *node.Node, op model.Op, run core.RunID) model.Answer {
	a := n.Apply(node.Request{Cmd: command(op, run)})
	rep := a.Reply
	rep.Err = a.Err
	return answerOf(op, rep)
}

// Abstract implements Impl.
func (ni *NodeImpl) Abstract(c model.Config) model.State { return abstractNode(c, ni.N, identity) }

// abstractNode is Abstract over the gate a node holds.
func abstractNode(c model.Config, n *node.Node, runName func(string) core.RunID) model.State {
	var s model.State
	n.Inspect(func(g *core.Gate) { s = Abstract(c, g, runName) })
	return s
}

// WireImpl drives a real server through the Go client, each operation on the
// connection of the role that may send it. Timeout and Retire, which have no verb on
// the wire (they are the gate's clock), are applied to the server's node: the path
// its clock takes.
// Runs may be prefixed, so that several traces can share one server.
type WireImpl struct {
	Node                      *node.Node // the server's
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
		description, digest, _ := note(op)
		r, err := w.Agent.Admit(ctx, run, key, uint64(op.Epoch), client.AdmitOptions{Gated: op.Gated, Description: description, ArgsDigest: digest})
		rep.Err, rep.Admit = err, core.AdmitResult{Answer: r.Answer, Reason: r.Reason, Outcome: r.Outcome}
	case model.ActDecide:
		d, _ := core.ParseDecision(op.Decision)
		_, _, reason := note(op)
		r, err := w.Approver.DecideWith(ctx, run, key, d, client.DecideOptions{Reason: reason})
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
	case model.ActTimeout, model.ActRetire:
		a := w.Node.Apply(node.Request{Cmd: command(op, w.run(op.Run))})
		rep.Err = a.Err
		if a.Err == nil {
			st, err := w.Agent.Status(ctx, run, "")
			rep.Err, rep.Run = err, core.RunView{Status: st.Status, Epoch: st.Epoch}
		}
	default:
		panic(fmt.Sprintf("conformance: unknown action %q", op.Action))
	}
	return answerOf(op, rep)
}

// Abstract implements Impl: the state of the server's node.
func (w *WireImpl) Abstract(c model.Config) model.State { return abstractNode(c, w.Node, w.run) }
