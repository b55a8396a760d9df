package node

import (
	"fmt"
	"time"

	"github.com/soundgate/soundgate/impl/core"
)

// TimeoutDue is the gate's clock acting: the spec's Timeout of every active run whose
// deadline has passed on the node's clock, each logged, and the admits waiting on
// those runs answered. It returns the runs in the order it timed them out (earliest
// deadline first). The node calls it from its own timer; tests with a clock of their
// own call it directly.
func (n *Node) TimeoutDue() []core.RunID {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.timeoutDueLocked()
	n.wakeLocked()
	return out
}

func (n *Node) timeoutDueLocked() []core.RunID {
	now := n.now()
	var out []core.RunID
	for n.refusalLocked() == nil {
		at, r, ok := n.gate.NextDeadline()
		if !ok || at > now {
			break
		}
		rep, err := n.applyLocked(core.Command{Op: core.OpTimeout, Run: r, Now: now})
		if err != nil {
			break
		}
		if !rep.Persist || rep.Run.Status != core.RunTimedOut {
			// The core named a due run and did not time it out: asking again would spin.
			n.failLocked(fmt.Errorf("soundgate/node: run %s is past its deadline and did not time out", r))
			break
		}
		out = append(out, r)
	}
	return out
}

// armLocked sets the deadline timer for the earliest deadline, unless one is set for
// no later. The timer sleeps at most deadlineRecheck, so that a wall clock that
// jumps forward is noticed.
func (n *Node) armLocked() {
	at, _, ok := n.gate.NextDeadline()
	if !ok || n.stopped || (n.timerAt != 0 && n.timerAt <= at) {
		return
	}
	wait := min(time.Duration(at-n.now())*time.Millisecond, deadlineRecheck)
	n.stopTimerLocked()
	n.timerAt = at
	gen := n.timerGen
	n.timer = time.AfterFunc(max(wait, time.Millisecond), func() { n.onTimer(gen) })
}

// stopTimerLocked cancels the deadline timer; one already firing finds its
// generation stale.
func (n *Node) stopTimerLocked() {
	n.timerGen++
	n.timerAt = 0
	if n.timer != nil {
		n.timer.Stop()
		n.timer = nil
	}
}

// onTimer is the deadline timer firing; a timer replaced since it was set does nothing.
func (n *Node) onTimer(gen uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen != n.timerGen {
		return
	}
	n.timerAt, n.timer = 0, nil
	n.timeoutDueLocked()
	n.wakeLocked()
	n.armLocked()
}
