package core

// Cut is a consistent copy of the gate's state taken while the gate keeps stepping,
// for a snapshot that must not stop the gate for the time it takes to encode it.
// BeginCut fixes the state in O(1); Take copies the next few runs under the caller's
// lock; a Step that changes a run the cut has not taken yet first saves what it
// changes: the run's header once, and each key it changes, once. Take copies a run
// with its saved keys in place of the live ones, so the cut is the state at BeginCut
// whatever steps follow, and AppendTaken encodes each piece with no lock held. Take
// copies the runs that changed first, so that what they save stays small.
//
// A step during a cut thus costs a copy of what it changes, not of its run, and no
// step costs anything while no cut is taken (one nil test). Take copies into buffers
// the cut reuses from piece to piece, so that it soon allocates nothing while the
// caller holds its lock.
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
}

// savedRun is what a cut keeps of a run that changed before the cut took it: the
// run's header and each changed key as they were when the cut began.
type savedRun struct {
	status   RunStatus
	epoch    uint64
	deadline Time
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
	g.cut = &Cut{g: g, gen: g.cuts, runs: len(g.order)}
	return g.cut
}

// touch prepares run, which a Step is about to change, to save its state for the
// cut: runs made after the cut began are not in it, and a run the cut took or
// touched already needs nothing more.
func (c *Cut) touch(run *Run) {
	if run.index >= c.runs || run.cutGen == c.gen {
		return
	}
	run.saved = &savedRun{status: run.Status, epoch: run.Epoch, deadline: run.Deadline, keys: map[Key]savedEffect{}}
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

// Take copies the next runs of the cut, at least one and about budget runs and
// effects in all, for AppendTaken; false once every run is taken or the cut ended.
// The longest it takes is one run's copy, when that run holds more than budget.
func (c *Cut) Take(budget int) bool {
	c.taken, c.buf = c.taken[:0], c.buf[:0]
	for n := 0; !c.ended && (len(c.taken) == 0 || n < budget); {
		run := c.nextRun()
		if run == nil {
			break
		}
		var fr frozenRun
		fr, c.buf = run.freeze(c.buf, run.saved)
		run.saved, run.cutGen = nil, c.gen
		c.taken = append(c.taken, fr)
		n += 1 + len(fr.effects)
		c.entries += 1 + len(fr.effects)
	}
	return len(c.taken) > 0
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

// AppendHeader appends the snapshot's header, which AppendTaken of every piece of the
// cut completes into what Gate.UnmarshalBinary reads.
func (c *Cut) AppendHeader(buf []byte) []byte { return appendSnapshotHeader(buf, c.runs) }

// AppendTaken appends the runs of the piece Take copied last.
func (c *Cut) AppendTaken(buf []byte) []byte {
	for _, fr := range c.taken {
		buf = appendRun(buf, fr)
	}
	return buf
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
	c.ended, c.touched, c.taken, c.buf = true, nil, nil, nil
	if c.g.cut == c {
		c.g.cut = nil
	}
}
