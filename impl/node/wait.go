package node

import (
	"time"

	"github.com/soundgate/soundgate/impl/core"
)

// Party is one party whose admits may wait at the node: a connection of the server,
// or one call of the egress proxy's local mode. Its fields belong to the node's lock.
type Party struct {
	parked int  // its admits waiting now
	gone   bool // it left: none of its admits waits, nor is answered, any more
}

// Join returns a new party.
func (n *Node) Join() *Party { return &Party{} }

// Leave ends p: its waiting admits are dropped unanswered, so that none of them is
// admitted later for nobody (the caller never learnt the request's outcome and will
// retry it with the same key), and its later admits do not wait.
func (n *Node) Leave(p *Party) {
	n.mu.Lock()
	defer n.mu.Unlock()
	p.gone = true
	for r, ws := range n.waiters {
		kept := ws[:0]
		for _, w := range ws {
			if w.party == p {
				n.dropLocked(w)
				continue
			}
			kept = append(kept, w)
		}
		n.setWaitersLocked(r, kept)
	}
}

// Parked returns how many admits of p wait now. An admit stops waiting and is
// answered (Done) in one hold of the node's lock, so once Parked says 0 every answer
// of p has been handed to Done.
func (n *Node) Parked(p *Party) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return p.parked
}

// Waiting returns how many admits wait now, across parties.
func (n *Node) Waiting() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nWaiters
}

// waiter is an admit that was answered held and waits. It is asked again, with the
// same arguments, after every decision, cancel, fence or timeout of its run, and
// answered as soon as the answer is not held; when its wait runs out it is asked once
// more and answered, held or not.
type waiter struct {
	party *Party
	cmd   core.Command
	done  func(Answer)
	timer *time.Timer
}

func (n *Node) parkLocked(c core.Command, req Request) {
	w := &waiter{party: req.Party, cmd: c, done: req.Done}
	n.waiters[c.Run] = append(n.waiters[c.Run], w)
	n.nWaiters++
	w.party.parked++
	w.timer = time.AfterFunc(req.Wait, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.unparkLocked(w) {
			n.reaskLocked(w)
			n.wakeLocked()
		}
	})
}

// unparkLocked removes w from the waiters; false if it was already answered.
func (n *Node) unparkLocked(w *waiter) bool {
	ws := n.waiters[w.cmd.Run]
	for i, x := range ws {
		if x == w {
			n.setWaitersLocked(w.cmd.Run, append(ws[:i], ws[i+1:]...))
			n.dropLocked(w)
			return true
		}
	}
	return false
}

// dropLocked ends w's wait; the caller has taken it out of n.waiters.
func (n *Node) dropLocked(w *waiter) {
	w.timer.Stop()
	n.nWaiters--
	w.party.parked--
}

func (n *Node) setWaitersLocked(r core.RunID, ws []*waiter) {
	if len(ws) == 0 {
		delete(n.waiters, r)
		return
	}
	n.waiters[r] = ws
}

// reaskLocked asks w's admit again now and answers it, held or not.
func (n *Node) reaskLocked(w *waiter) {
	cmd := w.cmd
	cmd.Now = n.now()
	rep, err := n.applyLocked(cmd)
	n.finishLocked(w, rep, err)
}

// finishLocked answers w with the reply of the step just taken.
func (n *Node) finishLocked(w *waiter, rep core.Reply, err error) {
	n.traceDeliverLocked(n.traceSeq, w.cmd.Op, rep, err)
	if err != nil {
		w.done(Answer{Err: err})
		return
	}
	w.done(n.answerLocked(rep))
}

// wakeLocked asks again, in the order they parked, the admits waiting on each run a
// command changed (n.wakes), and answers those whose answer is no longer held. A
// re-ask can itself change the run (it finds the deadline passed and times the run
// out); then the run is queued again and the admits still held are asked again,
// until a pass changes nothing.
func (n *Node) wakeLocked() {
	for len(n.wakes) > 0 {
		r := n.wakes[0]
		n.wakes = n.wakes[1:]
		ws := n.waiters[r]
		if len(ws) == 0 {
			continue
		}
		delete(n.waiters, r)
		var still []*waiter
		for _, w := range ws {
			cmd := w.cmd
			cmd.Now = n.now()
			rep, err := n.applyLocked(cmd)
			if err == nil && rep.Err == nil && rep.Admit.Answer == core.AnswerHeld && !rep.Persist {
				still = append(still, w)
				continue
			}
			n.dropLocked(w)
			if brokenWake && err == nil && rep.Err == nil && rep.Admit.Answer == core.AnswerDenied {
				rep.Admit.Answer = core.AnswerAdmit
			}
			n.finishLocked(w, rep, err)
		}
		if err := n.refusalLocked(); err != nil { // the log failed during this pass
			for _, w := range still {
				n.dropLocked(w)
				w.done(Answer{Err: err})
			}
			continue
		}
		if len(still) > 0 {
			n.waiters[r] = append(still, n.waiters[r]...)
		}
	}
	n.wakes = n.wakes[:0]
}

// releaseAllLocked answers every waiting admit with err (fail closed, Stop).
func (n *Node) releaseAllLocked(err error) {
	for r, ws := range n.waiters {
		for _, w := range ws {
			n.dropLocked(w)
			w.done(Answer{Err: err})
		}
		delete(n.waiters, r)
	}
}
