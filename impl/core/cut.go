package core

import "maps"

// Cut is a consistent copy of the gate's state taken while the gate keeps stepping,
// for a snapshot that must not stop the gate for the time it takes to encode it.
// BeginCut fixes the state in O(1); Take copies a few runs at a time under the
// caller's lock; a Step that is about to change a run the cut has not copied yet
// copies it first (copy on write). The cut is therefore the state at BeginCut
// whatever steps follow, and its copies are encoded with no lock held. The cost falls
// on the cut alone: while no cut is taken, Step pays one nil test.
//
// A Cut is not safe for concurrent use: BeginCut, Take, End and every Step must be
// called under the same lock; AppendHeader and AppendRuns need none.
type Cut struct {
	g       *Gate
	gen     uint64
	runs    int          // the runs at BeginCut: g.order[:runs]
	next    int          // the index of the next run Take copies
	frozen  map[int]*Run // copies of runs that a Step changed before Take reached them
	entries int          // runs and effects taken so far
	ended   bool
	keys    []Key // AppendRuns' scratch space
}

// BeginCut starts a cut of the state as it is now. One cut at a time: End the last
// one first.
func (g *Gate) BeginCut() *Cut {
	if g.cut != nil {
		panic("soundgate/core: BeginCut during a cut")
	}
	g.cuts++
	g.cut = &Cut{g: g, gen: g.cuts, runs: len(g.order), frozen: map[int]*Run{}}
	return g.cut
}

// freeze keeps run's state for the cut before a Step changes it: runs made after the
// cut began are not in it, and a run the cut has copied already needs no copy.
func (c *Cut) freeze(run *Run) {
	if run.index >= c.runs || run.cutGen == c.gen {
		return
	}
	c.frozen[run.index] = run.clone()
	run.cutGen = c.gen
}

// Take copies the next runs of the cut, at least one and about budget runs and
// effects in all, and returns them for AppendRuns; nil once every run is taken or the
// cut ended.
func (c *Cut) Take(budget int) []*Run {
	var taken []*Run
	for n := 0; !c.ended && c.next < c.runs && (len(taken) == 0 || n < budget); c.next++ {
		run, ok := c.frozen[c.next]
		if ok {
			delete(c.frozen, c.next)
		} else {
			live := c.g.order[c.next]
			run, live.cutGen = live.clone(), c.gen
		}
		taken = append(taken, run)
		n += 1 + len(run.effects)
		c.entries += 1 + len(run.effects)
	}
	return taken
}

// Entries returns the runs and effects taken so far: once Take returned nil, those of
// the whole cut (Gate.Entries at BeginCut).
func (c *Cut) Entries() int { return c.entries }

// AppendHeader appends the snapshot's header, which AppendRuns of every run of the
// cut completes into what Gate.UnmarshalBinary reads.
func (c *Cut) AppendHeader(buf []byte) []byte { return appendSnapshotHeader(buf, c.runs) }

// AppendRuns appends runs, taken from c, to a snapshot.
func (c *Cut) AppendRuns(buf []byte, runs []*Run) []byte {
	for _, run := range runs {
		buf, c.keys = appendRun(buf, run, c.keys)
	}
	return buf
}

// End ends the cut, taken in full or not: Step copies nothing more, and the gate can
// begin another.
func (c *Cut) End() {
	c.ended, c.frozen = true, nil
	if c.g.cut == c {
		c.g.cut = nil
	}
}

// clone returns a copy of run that no later change of run reaches.
func (run *Run) clone() *Run {
	cp := *run
	cp.effects, cp.pending, cp.open = maps.Clone(run.effects), maps.Clone(run.pending), maps.Clone(run.open)
	return &cp
}
