package node

import (
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// InboxAnswer is the node's answer to Inbox.
type InboxAnswer struct {
	Approvals []core.Approval // oldest first (core.Gate.Inbox)
	More      bool            // more approvals follow the last one listed
	Now       core.Time       // the node's clock when they were listed: their age is Now - Since
	// Err is the node's refusal (ErrUnavailable, ErrStopped); then nothing is listed.
	Err error
	// After is the log position the list rests on, as Answer.After: it may be sent
	// only once Durable(After) returned nil (an approval it lists may have been
	// opened by a record still on its way to the disk).
	After wal.LSN
}

// Inbox lists the pending approvals q asks for (core.Gate.Inbox) under the node's
// lock: a read, which steps nothing and logs nothing.
func (n *Node) Inbox(q core.InboxQuery) InboxAnswer {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.refusalLocked(); err != nil {
		return InboxAnswer{Err: err}
	}
	list, more := n.gate.Inbox(q)
	return InboxAnswer{Approvals: list, More: more, Now: n.now(), After: n.lastLSN}
}
