package node

import (
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// Change is one state change the node applied and logged, as its watchers see it:
// the inbox's subscribers and the audit trail. It is told under the node's lock, in
// the log's order, before the record is durable: a watcher that shows it to anyone
// waits for Durable(LSN) first, as every answer does.
type Change struct {
	LSN wal.LSN      // the change's record; 0 without a log
	Cmd core.Command // as applied, Now stamped
	// TimedOut: the run's deadline passed with this step (a Timeout, or an admit that
	// found the deadline passed and timed the run out first).
	TimedOut bool
	// Opened is the approval the step opened (a gated admit held), with its note.
	Opened *core.Approval
	// Closed are the approvals of Cmd.Run pending before the step and not after it
	// (decided, rejected with a sibling, cancelled, fenced, timed out), with their
	// notes as they were; Cmd says by what.
	Closed []core.Approval
}

// Watch has f told of every change the node logs from now on, with the node's lock
// held: f must not block nor call the node. It returns the function that stops it.
func (n *Node) Watch(f func(Change)) (stop func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.watchSeq++
	id := n.watchSeq
	if n.watchers == nil {
		n.watchers = map[uint64]func(Change){}
	}
	n.watchers[id] = f
	return func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.watchers, id)
	}
}

// mayChangeApprovals reports whether a command of op can open or close an approval:
// only then does applyLocked list the run's approvals for the watchers.
func mayChangeApprovals(op core.Op) bool {
	switch op {
	case core.OpAdmit, core.OpDecide, core.OpCancel, core.OpFence, core.OpTimeout:
		return true
	}
	return false
}

// tellLocked tells the watchers and the audit trail of the change c made, rep
// being its reply and before the run's pending approvals before it.
func (n *Node) tellLocked(c core.Command, rep core.Reply, before []core.Approval) {
	ch := changeOf(n.gate, n.lastLSN, c, rep, before)
	if n.cfg.Audit != nil {
		n.cfg.Audit.Record(ch, false)
	}
	for _, f := range n.watchers {
		f(ch)
	}
}

// changeOf is the change c made to g, logged at lsn, rep being its reply and before
// the run's pending approvals before it.
func changeOf(g *core.Gate, lsn wal.LSN, c core.Command, rep core.Reply, before []core.Approval) Change {
	ch := Change{LSN: lsn, Cmd: c, TimedOut: c.Op == core.OpTimeout || (c.Op == core.OpAdmit && rep.Wake)}
	if mayChangeApprovals(c.Op) {
		after := g.PendingIn(c.Run)
		ch.Closed = missing(before, after)
		if opened := missing(after, before); len(opened) == 1 {
			ch.Opened = &opened[0]
		}
	}
	return ch
}

// Audit is where the node records what the audit trail keeps (impl/audit): every
// change it logs, and, in Recover, every change it replays, in the log's order.
type Audit interface {
	// Record takes one change, with the node's lock held: it must not block.
	// replayed: the change was replayed from the log, not applied now.
	Record(ch Change, replayed bool)
	// Sync returns once every change recorded up to lsn is durable in the trail.
	// A snapshot calls it before the log may forget the records it covers, so
	// that no change is in neither.
	Sync(lsn wal.LSN) error
}

// missing returns the approvals of a whose keys b lacks; both are of one run, in the
// inbox's order.
func missing(a, b []core.Approval) []core.Approval {
	var out []core.Approval
	keys := make(map[core.Key]struct{}, len(b))
	for _, x := range b {
		keys[x.Key] = struct{}{}
	}
	for _, x := range a {
		if _, ok := keys[x.Key]; !ok {
			out = append(out, x)
		}
	}
	return out
}
