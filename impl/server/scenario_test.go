package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/internal/scenario"
)

// TestScenarios runs the contract's scenario files, unchanged, through the real server.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "../../"+scenario.Dir, func(t *testing.T) scenario.Driver {
		clock := &servertest.Clock{}
		g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
		return &serverDriver{g: g, clock: clock, agent: g.Dial(t, servertest.AgentToken),
			approver: g.Dial(t, servertest.ApproverToken), operator: g.Dial(t, servertest.OperatorToken)}
	})
}

// serverDriver runs scenario commands through the real server: each command on the
// connection of the role that may send it, its wire answer turned back into a core.Reply.
type serverDriver struct {
	g                         *servertest.Gate
	clock                     *servertest.Clock
	agent, approver, operator *client.Client
}

func (d *serverDriver) SetClock(now core.Time)   { d.clock.Set(now) }
func (d *serverDriver) TimeoutDue() []core.RunID { return d.g.Node.TimeoutDue() }

// Retire has no verb on the wire: the server's node takes it, as its clock does.
func (d *serverDriver) Retire(c core.Command) core.Reply {
	a := d.g.Node.Apply(node.Request{Cmd: c})
	rep := a.Reply
	rep.Err = a.Err
	return rep
}

func (d *serverDriver) Step(c core.Command) core.Reply {
	ctx := context.Background()
	var rep core.Reply
	switch c.Op {
	case core.OpOpen:
		timeout := time.Duration(0)
		if c.Deadline > 0 {
			timeout = time.Duration(c.Deadline-d.clock.Now()) * time.Millisecond
		}
		r, err := d.operator.Open(ctx, string(c.Run), timeout)
		rep.Err = err
		rep.Open = core.OpenResult{Run: core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch, Deadline: r.DeadlineMs}, Created: r.Created}
	case core.OpAdmit:
		r, err := d.agent.Admit(ctx, string(c.Run), string(c.Key), c.Epoch, client.AdmitOptions{Gated: c.Gated})
		rep.Err = err
		rep.Admit = core.AdmitResult{Answer: r.Answer, Reason: r.Reason, Outcome: r.Outcome, Result: r.Result, Epoch: r.Epoch}
	case core.OpDecide:
		r, err := d.approver.Decide(ctx, string(c.Run), string(c.Key), c.Decision)
		rep.Err = err
		rep.Decide = core.DecideResult{Decision: r.Decision, Repeat: r.Repeat}
	case core.OpComplete:
		r, err := d.agent.Complete(ctx, string(c.Run), string(c.Key), c.Outcome, c.Result)
		rep.Err = err
		rep.Complete = core.CompleteResult{Repeat: r.Repeat}
	case core.OpCancel:
		r, err := d.operator.Cancel(ctx, string(c.Run))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch}
	case core.OpFence:
		r, err := d.operator.Fence(ctx, string(c.Run))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: core.RunActive, Epoch: r.Epoch}
	case core.OpStatus:
		r, err := d.agent.Status(ctx, string(c.Run), string(c.Key))
		rep.Err = err
		rep.Run = core.RunView{ID: r.Run, Status: r.Status, Epoch: r.Epoch, Deadline: r.DeadlineMs, Pending: r.Pending}
		if e := r.Effect; e != nil {
			rep.Effect = core.EffectView{Key: e.Key, Effect: core.Effect{Status: e.Status, Epoch: e.Epoch, Gated: e.Gated,
				Approved: e.Approved, Outcome: e.Outcome, Result: e.Result}}
		}
	}
	return rep
}
