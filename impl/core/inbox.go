package core

import (
	"cmp"
	"container/heap"
	"slices"
)

// The inbox: the pending approvals of every run, oldest first, as an approver lists
// them. It is read only and reads nothing a decision reads: it is not an action.

// InboxPos is a place in the inbox's order: by the time an approval became pending
// (Note.Since), then by run id, then by key, bytes compared. Every pending approval
// has its own place, so a page ends at one and the next begins after it.
type InboxPos struct {
	Since Time
	Run   RunID
	Key   Key
}

// Compare returns -1, 0 or +1 as p comes before, at or after q in the inbox's order.
func (p InboxPos) Compare(q InboxPos) int {
	if c := cmp.Compare(p.Since, q.Since); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Run, q.Run); c != 0 {
		return c
	}
	return cmp.Compare(p.Key, q.Key)
}

// Approval is one pending approval as the inbox lists it: its run, its key and its
// note (the reason is empty while it is pending).
type Approval struct {
	Run RunID
	Key Key
	Note
}

// Pos returns a's place in the inbox's order.
func (a Approval) Pos() InboxPos { return InboxPos{Since: a.Since, Run: a.Run, Key: a.Key} }

// InboxQuery says which pending approvals Inbox lists.
type InboxQuery struct {
	// Scope, if set, keeps the approvals of the runs it reports true for (a token's
	// runs). Nil: every run.
	Scope func(RunID) bool
	// After, if set, keeps the approvals after it in the inbox's order: the last one
	// of the page before.
	After *InboxPos
	// Limit is the most approvals one call lists (at least 1).
	Limit int
}

// Inbox lists the pending approvals q asks for, oldest first, at most q.Limit, and
// reports whether more follow the last one listed. It costs one step per pending
// approval of the runs in scope and allocates for q.Limit of them, whatever the
// number of runs.
func (g *Gate) Inbox(q InboxQuery) (list []Approval, more bool) {
	limit := max(q.Limit, 1)
	h := &inboxHeap{} // the limit+1 earliest found so far, the latest on top
	for id, run := range g.asking {
		if q.Scope != nil && !q.Scope(id) {
			continue
		}
		for k := range run.pending {
			a := approvalOf(id, run, k)
			if q.After != nil && a.Pos().Compare(*q.After) <= 0 {
				continue
			}
			if h.Len() <= limit {
				heap.Push(h, a)
			} else if a.Pos().Compare((*h)[0].Pos()) < 0 {
				(*h)[0] = a
				heap.Fix(h, 0)
			}
		}
	}
	list = []Approval(*h)
	slices.SortFunc(list, func(a, b Approval) int { return a.Pos().Compare(b.Pos()) })
	if len(list) > limit {
		return list[:limit], true
	}
	return list, false
}

// listPending keeps g.asking, the runs Inbox looks at, after a step on run r: r is
// listed while it has an approval pending.
func (g *Gate) listPending(r RunID) {
	if run := g.runs[r]; run != nil && len(run.pending) > 0 {
		g.asking[r] = run
	} else {
		delete(g.asking, r)
	}
}

// inboxHeap is a max-heap of approvals by place.
type inboxHeap []Approval

func (h inboxHeap) Len() int           { return len(h) }
func (h inboxHeap) Less(i, j int) bool { return h[i].Pos().Compare(h[j].Pos()) > 0 }
func (h inboxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *inboxHeap) Push(x any)        { *h = append(*h, x.(Approval)) }
func (h *inboxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// PendingIn lists the pending approvals of run r, in the inbox's order: what a
// step on r may close, read before it (node.Watch). It costs one step per pending
// approval of r, whatever the number of runs.
func (g *Gate) PendingIn(r RunID) []Approval {
	run := g.asking[r]
	if run == nil {
		return nil
	}
	list := make([]Approval, 0, len(run.pending))
	for k := range run.pending {
		list = append(list, approvalOf(r, run, k))
	}
	slices.SortFunc(list, func(a, b Approval) int { return a.Pos().Compare(b.Pos()) })
	return list
}

// approvalOf is the pending approval of key k of run (id), with its note.
func approvalOf(id RunID, run *Run, k Key) Approval {
	a := Approval{Run: id, Key: k}
	if n := run.effects[k].Note; n != nil {
		a.Note = *n
	}
	return a
}

// ApprovalOf returns the approval of key k of run r with its note (a decided one
// keeps its note, with the reason), and false when the gate holds no such effect:
// the one approval a step opened or approved, read after it (node.Watch).
func (g *Gate) ApprovalOf(r RunID, k Key) (Approval, bool) {
	run := g.runs[r]
	if run == nil {
		return Approval{}, false
	}
	if _, ok := run.effects[k]; !ok {
		return Approval{}, false
	}
	return approvalOf(r, run, k), true
}

// Due reports whether run r is active with a deadline that has passed at now: an
// admit at now times it out first (Admit, step 2).
func (g *Gate) Due(r RunID, now Time) bool {
	run := g.runs[r]
	return run != nil && run.due(now)
}
