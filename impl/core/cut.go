package core

import "fmt"

// Cut is a consistent copy of the gate's state taken while the gate keeps stepping,
// for a snapshot that must not stop the gate for the time it takes to encode it.
// BeginCut fixes the state in O(1); Take copies the next few runs under the caller's
// lock; a Step that changes a run the cut has not taken yet first saves what it
// changes: the run's header once, and each key it changes, once. Take copies a run
// with its saved keys in place of the live ones, so the cut is the state at BeginCut
// whatever steps follow, and AppendTaken encodes each piece, a budget at a time, with
// no lock held. Take copies the runs that changed first, so that what they save stays
// small.
//
// A run with more effects than a Take's budget is copied a slice at a time across
// Takes, so that the lock is held for about the budget: when its slices begin the cut
// lists the run's keys (one step linear in them, so that each slice can resume where
// the last stopped), and while it is copied the run saves what changes as an untaken
// run does.
//
// A step during a cut thus costs a copy of what it changes, not of its run, and no
// step costs anything while no cut is taken (one nil test). Take copies into buffers
// the cut reuses from piece to piece (and from run to run, for the list of keys of a
// run copied in slices), so that it soon allocates nothing while the caller holds its
// lock.
//
// A Cut is not safe for concurrent use: BeginCut, Take, End and every Step must be
// called under the same lock; AppendHeader and AppendTaken need none, but must not
// run at the same time as Take.
type Cut struct {
	g       *Gate
	gen     uint64
	runs    int    // the runs at BeginCut: g.order[:runs]
	next    int    // the index in g.order of the next run nextRun looks at
	touched []*Run // the runs that saved state for this cut
	hot     int    // the index in touched of the next run nextRun looks at
	entries int    // runs and effects taken so far
	ended   bool
	taken   []frozenRun    // the piece Take copied last
	buf     []frozenEffect // the effects of its runs
	enc     int            // the index in taken of the run AppendTaken encodes next
	encAt   int            // its next entry: its head (unless a later slice), then its effects
	part    *partRun       // the run Take copies a slice at a time, if any
	keys    []Key          // the list of keys of the runs copied in slices, reused
	retired *retiredCursor // the retired ids at BeginCut (blocks never change)
}

// partRun is a run Take copies in slices: the keys it had when its slices began,
// then the saved keys that were deleted before that, copied in that order.
type partRun struct {
	run    *Run
	keys   []Key
	next   int  // the index in keys of the next key to copy
	begun  bool // its head is taken
	copied int  // effects copied so far
}

// savedRun is what a cut keeps of a run that changed before the cut took it: the
// run's header and each changed key as they were when the cut began.
type savedRun struct {
	status   RunStatus
	epoch    uint64
	deadline Time
	effects  int // how many the run had
	keys     map[Key]savedEffect
}

type savedEffect struct {
	effect  Effect
	present bool // false: the key was absent
	pending bool
}

// BeginCut starts a cut of the state as it is now. One cut at a time: End the last
// one first.
func (g *Gate) BeginCut() *Cut {
	if g.cut != nil {
		panic("soundgate/core: BeginCut during a cut")
	}
	g.cuts++
	g.cut = &Cut{g: g, gen: g.cuts, runs: len(g.order), retired: newRetiredCursor(g.retired.frozen(), g.upto)}
	return g.cut
}

// touch prepares run, which a Step is about to change, to save its state for the
// cut: runs made after the cut began are not in it, and a run the cut took or
// touched already needs nothing more.
func (c *Cut) touch(run *Run) {
	if run.index >= c.runs || run.cutGen == c.gen {
		return
	}
	run.saved = &savedRun{status: run.Status, epoch: run.Epoch, deadline: run.Deadline,
		effects: len(run.effects), keys: map[Key]savedEffect{}}
	run.cutGen = c.gen
	c.touched = append(c.touched, run)
}

// save keeps k's state for the cut that touched run, before its first change.
func (run *Run) save(k Key) {
	s := run.saved
	if s == nil {
		return
	}
	if _, done := s.keys[k]; done {
		return
	}
	e, present := run.effects[k]
	_, pending := run.pending[k]
	s.keys[k] = savedEffect{effect: e, present: present, pending: pending}
}

// Take copies the next runs of the cut, about budget runs and effects in all, for
// AppendTaken; false once every run is taken or the cut ended. Runs that fit what is
// left of the budget are copied whole; a larger one is copied from the next Take on,
// alone, a slice of the budget at a time. Every Take copies at least one entry but
// the one that finds a run's slices done at a budget's end.
func (c *Cut) Take(budget int) bool {
	c.taken, c.buf, c.enc, c.encAt = c.taken[:0], c.buf[:0], 0, 0
	budget = max(budget, 1)
	for n := 0; !c.ended && c.part == nil && n < budget; {
		run := c.nextRun()
		if run == nil {
			break
		}
		size := 1 + len(run.effects)
		if run.saved != nil {
			size = 1 + run.saved.effects
		}
		if size > budget-n {
			c.beginSlices(run)
			break
		}
		var fr frozenRun
		fr, c.buf = run.freeze(c.buf, run.saved)
		run.saved, run.cutGen = nil, c.gen
		c.taken = append(c.taken, fr)
		n += size
		c.entries += size
	}
	if !c.ended && c.part != nil && len(c.taken) == 0 {
		c.takeSlice(budget)
	}
	return len(c.taken) > 0
}

// beginSlices makes run the one Take copies in slices: from now on it saves what
// changes, and its slices copy the keys it has now (each as saved, if it changed,
// and none that the cut did not know), then those deleted since the cut began.
func (c *Cut) beginSlices(run *Run) {
	c.touch(run)
	keys := c.keys[:0]
	for k := range run.effects {
		keys = append(keys, k)
	}
	for k, se := range run.saved.keys {
		if _, live := run.effects[k]; se.present && !live {
			keys = append(keys, k)
		}
	}
	c.keys = keys
	c.part = &partRun{run: run, keys: keys}
}

// takeSlice copies the next slice of the run copied in slices: budget entries (its
// head counts as one), or what is left of it.
func (c *Cut) takeSlice(budget int) {
	p, s := c.part, c.part.run.saved
	fr := frozenRun{id: p.run.ID, status: s.status, epoch: s.epoch, deadline: s.deadline, count: s.effects, cont: p.begun}
	n, start := 0, len(c.buf)
	if !p.begun {
		n, p.begun = 1, true
	}
	for ; n < budget && p.next < len(p.keys); p.next++ {
		k := p.keys[p.next]
		se, changed := s.keys[k]
		if !changed {
			_, pending := p.run.pending[k]
			se = savedEffect{effect: p.run.effects[k], present: true, pending: pending}
		}
		if se.present {
			c.buf = append(c.buf, frozenEffect{key: k, effect: se.effect, pending: se.pending})
			n++
		}
	}
	fr.effects = c.buf[start:len(c.buf):len(c.buf)]
	p.copied += len(fr.effects)
	c.taken = append(c.taken, fr)
	c.entries += n
	if p.next == len(p.keys) {
		if p.copied != s.effects {
			panic(fmt.Sprintf("soundgate/core: a cut copied %d of the %d effects of run %q", p.copied, s.effects, p.run.ID))
		}
		c.part = nil
		p.run.saved, p.run.cutGen = nil, c.gen
	}
}

// nextRun returns the next run to take: first the runs that changed since the cut
// began (each step on them saves more until they are taken), then the others in
// order; nil once every run is taken.
func (c *Cut) nextRun() *Run {
	for ; c.hot < len(c.touched); c.hot++ {
		if run := c.touched[c.hot]; run.saved != nil {
			return run
		}
	}
	for ; c.next < c.runs; c.next++ {
		if run := c.g.order[c.next]; run.cutGen != c.gen {
			return run
		}
	}
	return nil
}

// Entries returns the runs and effects taken so far: once Take returned false, those
// of the whole cut (Gate.Entries at BeginCut).
func (c *Cut) Entries() int { return c.entries }

// AppendHeader appends the snapshot's header, which AppendRetired until it reports
// none left, and then AppendTaken of every piece of the cut, complete into what
// Gate.UnmarshalBinary reads.
func (c *Cut) AppendHeader(buf []byte) []byte {
	return appendSnapshotHeader(buf, c.runs, c.retired)
}

// AppendRetired appends up to budget of the retired ids at BeginCut (at least one, if
// any is left) and reports whether any is left. Like AppendTaken it needs no lock.
func (c *Cut) AppendRetired(buf []byte, budget int) ([]byte, bool) {
	return c.retired.appendNext(buf, budget)
}

// AppendTaken appends budget runs and effects (at least one) of the piece Take copied
// last, from where the last call stopped, and reports whether any of the piece is left:
// the caller can yield between calls, so that no run, however large, keeps a core
// from the goroutines that serve while it is encoded.
func (c *Cut) AppendTaken(buf []byte, budget int) ([]byte, bool) {
	for n := 0; c.enc < len(c.taken); c.enc, c.encAt = c.enc+1, 0 {
		fr := c.taken[c.enc]
		head := 1
		if fr.cont {
			head = 0
		}
		for ; c.encAt < head+len(fr.effects); c.encAt, n = c.encAt+1, n+1 {
			if n > 0 && n >= budget {
				return buf, true
			}
			if c.encAt < head {
				buf = appendRunHead(buf, fr)
			} else {
				buf = appendEffect(buf, fr.effects[c.encAt-head])
			}
		}
	}
	return buf, false
}

// End ends the cut, taken in full or not: Step saves nothing more, and the gate can
// begin another.
func (c *Cut) End() {
	if c.ended {
		return
	}
	for _, run := range c.touched {
		run.saved = nil
	}
	c.ended, c.touched, c.taken, c.buf, c.part, c.keys = true, nil, nil, nil, nil, nil
	if c.g.cut == c {
		c.g.cut = nil
		for _, run := range c.g.unlinked {
			c.g.unlink(run)
		}
		c.g.unlinked = nil
	}
}
