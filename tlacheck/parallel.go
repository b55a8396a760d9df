package tlacheck

import (
	"fmt"
	"sync"
	"time"
)

// Workers (Options.Workers > 1, fingerprint mode): the search goes level by level.
// The states of one depth are taken off the queue in batches, in order; the workers
// expand the batches at once, each with its own evaluator, and claim new states in
// the shared fingerprint set; the batches' new states are then appended to the queue
// in batch order, and the next level starts only when this one is done. So every
// state is found at its least depth, and the figures of a complete run (generated,
// distinct, depth) are those of one worker. Which of two parents of a state on the
// same level names it, and so which counterexample of the least length is printed,
// can differ from run to run; a run that stops (a violation, a deadlock, a limit)
// stops at the end of a batch, so its figures can differ too.

// parallelBatch is how many states a worker takes at a time.
const parallelBatch = 256

// batch is a run of consecutive states of one level, and what expanding them found.
type batch struct {
	first int      // the index of the first state
	recs  [][]byte // the states, as the queue keeps them (dropped once expanded)
	size  int      // how many
	depth uint16   // theirs
	done  chan struct{}

	generated int64
	found     []found // the new states, in the order found
	deadlock  int     // the index of a state with no successor, or -1
	err       error
}

// found is a new state: its record for the queue, its parent, its fingerprint and
// the invariant it violates, if any.
type found struct {
	rec      []byte
	parent   uint32
	fp       uint64
	violates string
}

// worker is one worker's evaluator: an explorer that shares the spec, the options
// and the fingerprint set, and keeps its own contexts and buffers.
func (e *explorer) worker() *explorer {
	w := &explorer{s: e.s, opts: e.opts, fp: e.fp, symm: e.symm, perms: e.perms, rc: e.rc, prod: e.prod}
	w.c = &ctx{vars: e.s.vars, root: e.s.next}
	return w
}

// expandBatch expands every state of b; it only reads the spec and writes b and the
// fingerprint set.
func (w *explorer) expandBatch(b *batch, checkDeadlock bool) {
	b.deadlock = -1
	for j, rec := range b.recs {
		cur, d, err := decodeRecord(rec, len(w.s.vars))
		if err != nil {
			b.err = err
			return
		}
		b.depth = d
		w.setParent(cur)
		n := 0
		err = w.successors(cur, func(next []Value) {
			if b.err != nil {
				return
			}
			n++
			b.generated++
			if len(w.s.constraints) > 0 {
				ok, err := w.inModel(next)
				if err != nil || !ok {
					b.err = err
					return
				}
			}
			fp, isNew, err := w.insert(next)
			if err != nil {
				b.err = err
				return
			}
			if !isNew {
				return
			}
			f := found{rec: appendRecord(nil, next, d+1), parent: uint32(b.first + j), fp: fp}
			if f.violates, err = w.violated(next); err != nil {
				b.err = err
			}
			b.found = append(b.found, f)
		})
		if err != nil && b.err == nil {
			b.err = fmt.Errorf("computing successors of state\n%s: %w", w.s.formatState(cur), err)
		}
		if b.err != nil {
			return
		}
		if n == 0 && checkDeadlock && b.deadlock < 0 {
			b.deadlock = b.first + j
		}
	}
}

// exploreParallel is explore with n workers, level by level, at most 2n batches in
// flight, merged in order, from state from (a level's first: 0, or a checkpoint's);
// at the end of a level it saves a checkpoint when one is due.
func (r *search) exploreParallel(n int, from int) (*Result, error) {
	e := r.e
	checkDeadlock := e.s.Config.CheckDeadlock && !e.opts.NoDeadlock
	jobs := make(chan *batch, 2*n)
	var wg sync.WaitGroup
	for range n {
		w := e.worker()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				w.expandBatch(b, checkDeadlock)
				b.recs = nil
				close(b.done)
			}
		}()
	}
	defer func() { close(jobs); wg.Wait() }()
	var inflight []*batch
	drain := func() {
		for _, b := range inflight {
			<-b.done
		}
	}
	for head := from; head < e.count(); {
		end := e.count() // the queue holds exactly this level's states
		for next := head; next < end || len(inflight) > 0; {
			for next < end && len(inflight) < 2*n {
				b := &batch{first: next, done: make(chan struct{})}
				for ; next < min(b.first+parallelBatch, end); next++ {
					rec, ok, err := e.queue.popRecord()
					if err == nil && !ok {
						err = fmt.Errorf("the queue is empty at state %d of %d", next, end)
					}
					if err != nil {
						drain()
						return nil, err
					}
					b.recs = append(b.recs, append([]byte(nil), rec...))
				}
				b.size = len(b.recs)
				jobs <- b
				inflight = append(inflight, b)
			}
			b := inflight[0]
			inflight = inflight[1:]
			<-b.done
			expanded := b.first + b.size
			if stop, err := r.merge(b); stop || err != nil {
				drain()
				if err != nil {
					return nil, err
				}
				return r.stop(b, expanded)
			}
			if e.opts.MaxStates > 0 && e.count() > e.opts.MaxStates {
				drain()
				return r.finish(expanded), errAt(ErrLimit, Pos{}, "more than %d distinct states", e.opts.MaxStates)
			}
			r.progressLine(expanded-1, b.depth)
		}
		head = end
		if head < e.count() && r.checkpointDue() {
			if err := r.saveCheckpoint(head); err != nil {
				return r.finish(head), err
			}
			r.lastSaved = time.Now()
		}
	}
	return r.finish(e.count()), nil
}

// checkpointDue reports whether a checkpoint should be saved at this level's end.
func (r *search) checkpointDue() bool {
	every := r.e.opts.CheckpointEvery
	switch {
	case r.e.opts.Checkpoint == "":
		return false
	case every < 0:
		return true
	case every == 0:
		every = DefaultCheckpointEvery
	}
	return time.Since(r.lastSaved) >= every
}

// merge appends the new states of b, expanded, to the queue, in the order found, and
// reports whether the run stops there: an error, a violation or a deadlock.
func (r *search) merge(b *batch) (bool, error) {
	e := r.e
	e.generat += b.generated
	if b.err != nil {
		return true, b.err
	}
	for _, f := range b.found {
		i := e.count()
		if err := e.queue.pushRecord(f.rec); err != nil {
			return true, err
		}
		if err := e.tr.add(f.parent, f.fp); err != nil {
			return true, err
		}
		e.maxDepth = max(e.maxDepth, b.depth+1)
		if f.violates != "" && r.bad < 0 {
			r.bad, r.badInv = i, f.violates
		}
	}
	return r.bad >= 0 || b.deadlock >= 0, nil
}

// stop ends a run that merge stopped at b, expanded states in: at the violation, else
// at the deadlock.
func (r *search) stop(b *batch, expanded int) (*Result, error) {
	if r.bad >= 0 {
		return r.violation(expanded)
	}
	r.res.Outcome = Deadlock
	trace, err := r.e.trace(b.deadlock)
	r.res.Trace = trace
	return r.finish(expanded), err
}
