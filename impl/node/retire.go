package node

import (
	"time"

	"github.com/soundgate/soundgate/impl/core"
)

// The gate's own retirement: a run that is finished (core.Gate.Finished) and has not
// changed for Config.Retention is retired, each retirement logged as the spec's
// Retire. The clock of a run restarts with each change to it, and with a restart of
// the node: a recovered node retires no run before a whole period has passed, so a
// run is kept at least Retention, never less.

// retireBatch bounds the runs one pass retires under the lock, so that requests
// interleave with a long backlog.
const retireBatch = 1024

// retireEntry is one run to look at when its retention period ends.
type retireEntry struct {
	at  core.Time
	run core.RunID
}

// retirer is the node's queue of runs that may retire. Retention is the same for
// every run, so entries are queued in time order: a FIFO, not a heap. A run queued
// more than once is due at its latest entry only (latest).
type retirer struct {
	retention core.Time
	queue     []retireEntry
	latest    map[core.RunID]core.Time
	stop      chan struct{}
	done      chan struct{}
}

// noteLocked queues run r, just changed, if the change left it finished.
func (n *Node) noteLocked(r core.RunID) {
	rt := n.ret
	if rt == nil || !n.gate.Finished(r) {
		return
	}
	at := n.now() + rt.retention
	rt.queue = append(rt.queue, retireEntry{at: at, run: r})
	rt.latest[r] = at
}

// RetireDue is the gate's clock acting: the spec's Retire of every run whose retention
// period has passed, each logged. It returns how many it retired. The node calls it
// from its own ticker; tests with a clock of their own call it directly.
func (n *Node) RetireDue() int {
	retired := 0
	for more := true; more; {
		var k int
		k, more = n.retireSome()
		retired += k
	}
	return retired
}

// retireSome retires up to retireBatch due runs, under the lock it takes; more
// reports a backlog.
func (n *Node) retireSome() (retired int, more bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rt := n.ret
	if rt == nil {
		return 0, false
	}
	now := n.now()
	for len(rt.queue) > 0 && rt.queue[0].at <= now && n.refusalLocked() == nil {
		if retired == retireBatch {
			return retired, true
		}
		e := rt.queue[0]
		rt.queue[0] = retireEntry{}
		rt.queue = rt.queue[1:]
		if rt.latest[e.run] != e.at {
			continue // changed since: a later entry stands for it
		}
		delete(rt.latest, e.run)
		if !n.gate.Finished(e.run) {
			continue
		}
		rep, err := n.applyLocked(core.Command{Op: core.OpRetire, Run: e.run, Now: now, Upto: n.cfg.OrderedIDs})
		if err != nil {
			return retired, false
		}
		if rep.Err != nil {
			n.log.Warn("a run was not retired", "run", e.run, "err", rep.Err)
			continue
		}
		retired++
	}
	if len(rt.queue) == 0 {
		rt.queue = nil // let the backing array go
	}
	return retired, false
}

// startRetirer queues every finished run of the gate for a whole period from now and
// starts the ticker that retires what is due.
func startRetirer(n *Node, retention, every time.Duration) {
	rt := &retirer{retention: core.Time(retention.Milliseconds()), latest: map[core.RunID]core.Time{},
		stop: make(chan struct{}), done: make(chan struct{})}
	n.mu.Lock()
	n.ret = rt
	for _, r := range n.gate.RunIDs() {
		n.noteLocked(r)
	}
	n.mu.Unlock()
	go func() {
		defer close(rt.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-rt.stop:
				return
			case <-t.C:
				n.RetireDue()
			}
		}
	}()
}

// stopRetirer stops the ticker and waits for a pass in progress.
func (n *Node) stopRetirer() {
	n.mu.Lock()
	rt := n.ret
	n.mu.Unlock()
	if rt == nil {
		return
	}
	select {
	case <-rt.stop:
	default:
		close(rt.stop)
	}
	<-rt.done
}
