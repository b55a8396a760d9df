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

// closesMany reports whether c, on a run with pending approvals, may close more
// than the one approval it names (a reject, a cancel, a fence, a timeout, an admit
// past the run's deadline): only then are the run's approvals listed before it.
func closesMany(g *core.Gate, c core.Command) bool {
	switch c.Op {
	case core.OpCancel, core.OpFence, core.OpTimeout:
		return true
	case core.OpDecide:
		return c.Decision == core.Reject
	case core.OpAdmit:
		return g.Due(c.Run, c.Now)
	}
	return false
}

// listBefore is what changeOf needs of the state before c: the run's pending
// approvals when c may close many of them (nil otherwise), and how many there are.
func listBefore(g *core.Gate, c core.Command) (before []core.Approval, pending int) {
	pending = g.PendingOf(c.Run)
	if pending > 0 && closesMany(g, c) {
		before = g.PendingIn(c.Run)
	}
	return before, pending
}

// tellLocked tells the watchers and the audit trail of the change c made, rep
// being its reply, before and pending what listBefore said before it.
func (n *Node) tellLocked(c core.Command, rep core.Reply, before []core.Approval, pending int) {
	ch := changeOf(n.gate, n.lastLSN, c, rep, before, pending)
	if n.cfg.Audit != nil {
		n.cfg.Audit.Record(ch, false)
	}
	for _, f := range n.watchers {
		f(ch)
	}
}

// changeOf is the change c made to g, logged at lsn, rep being its reply and
// before and pending what listBefore said before it. It costs one step per
// approval of the run only for a command that may close many; an admit or an
// approve costs a lookup.
func changeOf(g *core.Gate, lsn wal.LSN, c core.Command, rep core.Reply, before []core.Approval, pending int) Change {
	ch := Change{LSN: lsn, Cmd: c, TimedOut: c.Op == core.OpTimeout || (c.Op == core.OpAdmit && rep.Wake)}
	now := g.PendingOf(c.Run)
	switch {
	case before != nil:
		ch.Closed = missing(before, g.PendingIn(c.Run))
	case c.Op == core.OpAdmit && now > pending: // a gated admit opened its approval
		if a, ok := g.ApprovalOf(c.Run, c.Key); ok {
			ch.Opened = &a
		}
	case c.Op == core.OpDecide && now < pending: // an approve closed its own
		if a, ok := g.ApprovalOf(c.Run, c.Key); ok {
			ch.Closed = []core.Approval{a}
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
