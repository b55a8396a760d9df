package tlacheck

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// Outcome is how a model-checking run ended.
type Outcome int

// The outcomes of a run.
const (
	// OK: every reachable state was explored and no invariant was violated.
	OK Outcome = iota
	// Deadlock: a reachable state has no successor (and CHECK_DEADLOCK is on).
	Deadlock
	// InvariantViolated: a reachable state violates an invariant.
	InvariantViolated
)

// Options tune a run. The zero value is a plain exhaustive check.
type Options struct {
	// MaxStates stops the search with ErrLimit after this many distinct states (0: no limit).
	MaxStates int
	// Progress receives TLC-style progress lines (nil: none).
	Progress io.Writer
	// ProgressEvery is the interval between progress lines (default 10 s).
	ProgressEvery time.Duration
	// NoSymmetry ignores the config's SYMMETRY.
	NoSymmetry bool
	// SymmetryByEnumeration keys a state under SYMMETRY by the least encoding of its
	// images under every permutation of the group, even when the group is a product
	// of full permutation groups of more than two permutations, which signatures key
	// faster (symsig.go). The figures are the same; the keys, and so the
	// fingerprints, are not.
	SymmetryByEnumeration bool
	// NoRawCache keys every successor in the fingerprint mode with symmetry, without
	// first asking the raw cache (rawcache.go) whether it was keyed already.
	NoRawCache bool
	// NoDeadlock disables deadlock checking whatever the config says.
	NoDeadlock bool
	// FingerprintBytes > 0 keeps the seen states as 64-bit fingerprints in a set of
	// this many bytes (fpset.go) instead of whole, and each state only while it waits
	// on the queue; a full set stops the run (ErrLimit). 0: exact, every state kept.
	FingerprintBytes int64
	// QueueBytes bounds the compressed states of the fingerprint mode's queue kept in
	// memory; beyond it they go to a file in QueueDir (default os.TempDir()), read back
	// in order. 0: DefaultQueueBytes.
	QueueBytes int64
	QueueDir   string
	// Workers > 1 expands that many states at once, level by level (parallel.go); the
	// fingerprint mode only: the exact mode has one worker.
	Workers int
	// Checkpoint, in the fingerprint mode, is a folder to save the search to at the end
	// of a level, at most every CheckpointEvery (0: DefaultCheckpointEvery; negative:
	// every level), so that Recover can go on from it (checkpoint.go). Recover is such a
	// folder to go on from instead of the initial states; later checkpoints go to it.
	// CheckpointKey names what the run is of (the spec, the config and the options that
	// change the state graph): Recover refuses a checkpoint with another key.
	Checkpoint      string
	CheckpointEvery time.Duration
	Recover         string
	CheckpointKey   string
}

// DefaultQueueBytes is the fingerprint mode's default memory for its queue.
const DefaultQueueBytes = 256 << 20

// Step is one state of a trace and the action that led to it.
type Step struct {
	// Action is the label of the action ("Initial predicate" for the first state).
	Action string
	// State is the state as a record [var |-> value].
	State Value
	// Text is the state printed TLC-style (/\ var = value lines).
	Text string
}

// Result holds TLC's figures for a run and, when it failed, the shortest trace.
type Result struct {
	Outcome   Outcome
	Invariant string // the violated invariant
	Trace     []Step
	Generated int64 // initial states plus every successor produced, duplicates included
	Distinct  int64
	Depth     int
	Queue     int // states left on the queue
	Duration  time.Duration
	// Fingerprints reports the fingerprint mode; Collision is then TLC's optimistic
	// estimate of the chance that two distinct states shared a fingerprint, and
	// FingerprintSlots the set's size.
	Fingerprints     bool
	Collision        float64
	FingerprintSlots int
	QueueSpilled     int64 // bytes of compressed states the queue wrote to its file
	// RawCacheHits is how many successors the raw cache (rawcache.go) found keyed
	// already, in RawCacheBytes; 0, 0 without it.
	RawCacheHits  int64
	RawCacheBytes int64
	// Recovered is the distinct states of the checkpoint the run went on from (0: none);
	// Duration then includes the time before the checkpoint. Checkpoints counts those
	// this run wrote.
	Recovered   int
	Checkpoints int
}

// explorer is the breadth-first search state. In the exact mode it keeps every
// state: states[i], depth[i] and parent[i] are state i's. In the fingerprint mode (fp
// set) the states not yet expanded wait on queue, in index order, and state i's
// parent and fingerprint, from which trace finds it again, are in the trace file tr.
type explorer struct {
	s         *Spec
	opts      Options
	seen      map[string]uint32
	fp        *fpSet
	tr        *traceFile
	queue     *stateQueue
	maxDepth  uint16
	states    [][]Value
	parent    []uint32
	depth     []uint16
	buf       []byte
	tmp       []byte
	symm      []map[*modelV]*modelV
	perms     []perm    // symm as slices
	rc        *rawCache // nil: every successor is keyed
	rawBuf    []byte
	sym       symEncoder
	prod      *symProduct // nil: a state's key is the least over every image (symsig.go)
	images    []int32     // the images key compares: 0 the state, j > 0 its image under symm[j-1]
	sigVar    []uint64    // signature parts of the parent's values, per variable and symmetric value
	sigOK     []bool
	sigSum    []uint64
	sigNodes  []sigNode
	order     []int
	runs      [][2]int
	expanding []Value  // the state being expanded
	enc       [][]byte // encodings of parent's values, per image and variable
	encOK     []bool
	onEdge    func(from, to int, label string)
	c         *ctx
	ic        ctx // for invariants and constraints
	generat   int64
}

const noParent = ^uint32(0)

// Check explores every reachable state breadth first and checks the invariants.
func (s *Spec) Check(opts Options) (res *Result, err error) {
	e := s.newExplorer(opts)
	return e.run()
}

func (s *Spec) newExplorer(opts Options) *explorer {
	e := &explorer{s: s, opts: opts, seen: map[string]uint32{}}
	if opts.FingerprintBytes > 0 {
		e.seen, e.fp = nil, newFPSet(opts.FingerprintBytes)
		budget := opts.QueueBytes
		if budget <= 0 {
			budget = DefaultQueueBytes
		}
		e.queue = newStateQueue(len(s.vars), budget, opts.QueueDir)
	}
	if !opts.NoSymmetry {
		e.symm = s.symmetry
		for _, m := range e.symm {
			e.perms = append(e.perms, permOf(m))
		}
		if e.fp != nil && len(e.symm) > 0 && !opts.NoRawCache {
			e.rc = newRawCache(opts.FingerprintBytes)
		}
		if !opts.SymmetryByEnumeration && len(s.symmetry)+1 >= symSignaturesMin {
			e.prod = s.symProduct
		}
	}
	e.c = &ctx{vars: s.vars, root: s.next}
	return e
}

// canon names how the explorer keys a state: "" without symmetry, "signatures" or
// "enumeration" (symsig.go). The two give different keys to the same state.
func (e *explorer) canon() string {
	switch {
	case len(e.symm) == 0:
		return ""
	case e.prod != nil:
		return "signatures"
	}
	return "enumeration"
}

// key returns the canonical encoding of st: the least encoding of its images, over
// the whole SYMMETRY set or, when it is a product of full permutation groups, over
// the images its signatures allow (symsig.go).
// The encodings of the values st shares with the state being expanded (same
// pointer: an unchanged variable) are taken from a cache. An image is compared with
// the least so far variable by variable and given up as soon as it is greater: the
// result is the one a whole comparison of every image gives.
func (e *explorer) key(st []Value) []byte {
	images := e.images
	if e.prod != nil {
		images = e.allowed(st)
	} else if len(images) != 1+len(e.symm) {
		images = images[:0]
		for j := 0; j <= len(e.symm); j++ {
			images = append(images, int32(j))
		}
		e.images = images
	}
	var best []byte
	for ij, j32 := range images {
		j := int(j32)
		buf := e.tmp[:0]
		equal := ij > 0 // buf is, so far, a prefix of best
		done := 0       // bytes of buf known equal to best's
		greater := false
		for i := range st {
			buf = e.appendImage(buf, st, i, j)
			if !equal {
				continue
			}
			m := min(len(buf), len(best))
			switch c := bytes.Compare(buf[done:m], best[done:m]); {
			case c > 0 || c == 0 && len(buf) > len(best):
				greater = true
			case c < 0:
				equal = false // less: the rest need not be compared
			default:
				done = m
			}
			if greater {
				break
			}
		}
		// a whole image equal to best, or a prefix of it (shorter: less), or less
		less := !greater && (!equal || len(buf) < len(best))
		if ij == 0 || less {
			e.tmp, e.buf = e.buf, buf
			best = buf
		} else {
			e.tmp = buf
		}
	}
	return best
}

// appendImage appends the encoding of image j of st[i]; a value st shares with the
// state being expanded (same pointer: an unchanged variable) is encoded once per image.
func (e *explorer) appendImage(buf []byte, st []Value, i, j int) []byte {
	v := st[i]
	if e.expanding == nil || v != e.expanding[i] {
		return e.encodeImage(buf, v, j)
	}
	k := j*len(st) + i
	if !e.encOK[k] {
		e.enc[k] = e.encodeImage(e.enc[k][:0], v, j)
		e.encOK[k] = true
	}
	return append(buf, e.enc[k]...)
}

// encodeImage encodes image j of v: j = 0 is v itself, j > 0 its image under e.symm[j-1].
func (e *explorer) encodeImage(buf []byte, v Value, j int) []byte {
	if len(e.symm) == 0 {
		return encode(buf, v)
	}
	var m perm
	if j > 0 {
		m = e.perms[j-1]
	}
	return e.sym.encode(buf, v, m, 0)
}

// setParent declares the state whose successors are being keyed next.
func (e *explorer) setParent(st []Value) {
	e.expanding = st
	k := (1 + len(e.symm)) * len(e.s.vars)
	if len(e.enc) < k {
		e.enc = make([][]byte, k)
		e.encOK = make([]bool, k)
	}
	clear(e.encOK)
	if e.prod != nil {
		nv := len(e.prod.vals)
		if len(e.sigOK) < len(e.s.vars) {
			e.sigVar = make([]uint64, nv*len(e.s.vars))
			e.sigOK = make([]bool, len(e.s.vars))
		}
		clear(e.sigOK)
	}
}

// permute applies a model-value permutation to v.
func permute(v Value, m map[*modelV]*modelV) Value {
	switch x := v.(type) {
	case *modelV:
		if y, ok := m[x]; ok {
			return y
		}
		return x
	case *setV:
		out := make([]Value, len(x.elems))
		changed := false
		for i, el := range x.elems {
			out[i] = permute(el, m)
			changed = changed || out[i] != el
		}
		if !changed {
			return x
		}
		return mkSet(out)
	case *funcV:
		keys := make([]Value, len(x.keys))
		vals := make([]Value, len(x.vals))
		changed := false
		for i := range x.keys {
			keys[i] = permute(x.keys[i], m)
			vals[i] = permute(x.vals[i], m)
			changed = changed || keys[i] != x.keys[i] || vals[i] != x.vals[i]
		}
		if !changed {
			return x
		}
		return mkFunc(keys, vals)
	}
	return v
}

// initStates enumerates the initial predicate.
func (e *explorer) initStates(fn func(st []Value)) (err error) {
	defer catch(&err)
	c := e.c
	c.initMode = true
	c.cur = make([]Value, len(e.s.vars))
	c.next = nil
	c.frame = make([]Value, e.s.init.frameSize)
	enum(c, e.s.init.body, func() {
		for i, v := range c.cur {
			if v == nil {
				throw(e.s.init.pos, "the initial predicate %s does not give variable %s a value", e.s.init.name, e.s.vars[i])
			}
		}
		fn(append([]Value(nil), c.cur...))
	})
	c.initMode = false
	return nil
}

// successors enumerates the next-state action from st.
func (e *explorer) successors(st []Value, fn func(next []Value)) (err error) {
	defer catch(&err)
	c := e.c
	c.cur = st
	c.next = make([]Value, len(st))
	c.frame = make([]Value, e.s.next.frameSize)
	c.labelDef, c.labelArgs = nil, nil
	enum(c, e.s.next.body, func() {
		for i, v := range c.next {
			if v == nil {
				throw(e.s.next.pos, "action %s does not give %s' a value", e.label(), e.s.vars[i])
			}
		}
		fn(c.next) // fn must copy what it keeps
	})
	return nil
}

// label names the action being taken: Name(arg, ...) or Name.
func (e *explorer) label() string {
	c := e.c
	if c.labelDef == nil {
		return e.s.next.name
	}
	if len(c.labelArgs) == 0 {
		return c.labelDef.name
	}
	var b strings.Builder
	b.WriteString(c.labelDef.name)
	b.WriteByte('(')
	for i, a := range c.labelArgs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteByte(')')
	return b.String()
}

func (e *explorer) holds(d *opDef, st []Value) (ok bool, err error) {
	defer catch(&err)
	c := &e.ic
	c.cur, c.next, c.vars = st, nil, e.s.vars
	frame, stack, sp := c.push(d.frameSize)
	c.frame = frame
	ok = asBool(d.body.eval(c), d.pos, d.name)
	c.pop(frame, stack, sp)
	return ok, nil
}

func (e *explorer) violated(st []Value) (string, error) {
	for _, d := range e.s.invariants {
		ok, err := e.holds(d, st)
		if err != nil {
			return "", fmt.Errorf("evaluating invariant %s in state\n%s: %w", d.name, e.s.formatState(st), err)
		}
		if !ok {
			return d.name, nil
		}
	}
	return "", nil
}

func (e *explorer) inModel(st []Value) (bool, error) {
	for _, d := range e.s.constraints {
		ok, err := e.holds(d, st)
		if err != nil {
			return false, fmt.Errorf("evaluating constraint %s: %w", d.name, err)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// add stores st if it is new and returns its index and whether it was new; in the
// fingerprint mode the index of a state seen before is unknown (0), and a full set
// is an error.
func (e *explorer) add(st []Value, parent uint32, depth uint16) (uint32, bool, error) {
	i := uint32(e.count())
	if e.fp != nil {
		fp, isNew, err := e.insert(st)
		if err != nil || !isNew {
			return 0, false, err
		}
		if err := e.queue.push(st, depth); err != nil {
			return 0, false, err
		}
		if err := e.tr.add(parent, fp); err != nil {
			return 0, false, err
		}
	} else {
		k := e.key(st)
		if j, ok := e.seen[string(k)]; ok {
			return j, false, nil
		}
		e.seen[string(k)] = i
		e.states = append(e.states, append([]Value(nil), st...))
		e.depth = append(e.depth, depth)
		e.parent = append(e.parent, parent)
	}
	e.maxDepth = max(e.maxDepth, depth)
	return i, true, nil
}

// insert adds st's canonical fingerprint to the set and reports it and whether it was
// new; a successor the raw cache knows is not new, and is not keyed.
func (e *explorer) insert(st []Value) (fp uint64, isNew bool, err error) {
	var h1, h2 uint64
	if e.rc != nil {
		if h1, h2 = e.rawHash(st); e.rc.seen(h1, h2) {
			return 0, false, nil
		}
	}
	fp = fingerprint(e.key(st))
	isNew, full := e.fp.insert(fp)
	if full {
		return 0, false, e.fp.errFull()
	}
	if e.rc != nil {
		e.rc.put(h1, h2)
	}
	return fp, isNew, nil
}

// count is the number of distinct states found.
func (e *explorer) count() int {
	if e.tr != nil {
		return e.tr.n
	}
	return len(e.parent)
}

// parentOf returns the index of state i's parent (noParent for an initial state) and,
// in the fingerprint mode, state i's fingerprint.
func (e *explorer) parentOf(i uint32) (uint32, uint64, error) {
	if e.tr != nil {
		return e.tr.get(int(i))
	}
	return e.parent[i], 0, nil
}

// next returns state head, the next to expand, and its depth.
func (e *explorer) next(head int) ([]Value, uint16, error) {
	if e.queue == nil {
		return e.states[head], e.depth[head], nil
	}
	st, d, ok, err := e.queue.pop()
	if err == nil && !ok {
		err = fmt.Errorf("the queue is empty at state %d of %d", head, e.count())
	}
	return st, d, err
}

// search is one breadth-first run of an explorer: its clock, its result, and what
// stopped it inside a callback.
type search struct {
	e            *explorer
	res          *Result
	start        time.Time
	lastProgress time.Time
	every        time.Duration // between progress lines
	failErr      error         // an error met while enumerating
	bad          int           // the first state found violating an invariant, or -1
	badInv       string        // the invariant it violates
	before       time.Duration // the search's time before the checkpoint it was recovered from
	checkpoints  int           // checkpoints written
	lastSaved    time.Time     // when the last checkpoint was written (or the run began)
}

// elapsed is the search's time so far, the time before a recovered checkpoint included.
func (r *search) elapsed() time.Duration { return r.before + time.Since(r.start) }

func (e *explorer) run() (*Result, error) {
	r := &search{e: e, res: &Result{}, start: time.Now(), every: e.opts.ProgressEvery, bad: -1}
	if r.every <= 0 {
		r.every = 10 * time.Second
	}
	r.lastProgress, r.lastSaved = r.start, r.start
	if e.queue == nil && (e.opts.Checkpoint != "" || e.opts.Recover != "") {
		return nil, fmt.Errorf("%w: checkpoints are of the fingerprint mode's search", ErrCheckpoint)
	}
	if e.queue != nil {
		defer e.queue.close()
		defer func() { e.tr.close() }()
		var err error
		switch {
		case e.opts.Recover != "":
			head, err := r.recover()
			if err != nil {
				return nil, err
			}
			return r.exploreParallel(max(e.opts.Workers, 1), head)
		case e.opts.Checkpoint != "":
			e.tr, err = openCheckpointTrace(e.opts.Checkpoint)
		default:
			e.tr, err = newTraceFile(e.opts.QueueDir)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := r.initial(); err != nil {
		return nil, err
	}
	if r.bad >= 0 {
		res, err := r.violation(0)
		res.Queue--
		return res, err
	}
	if e.opts.Progress != nil {
		fmt.Fprintf(e.opts.Progress, "Finished computing initial states: %d distinct state%s generated.\n", e.count(), plural(e.count()))
	}
	if e.queue != nil && (e.opts.Workers > 1 || e.opts.Checkpoint != "") {
		return r.exploreParallel(max(e.opts.Workers, 1), 0)
	}
	return r.explore()
}

// stopped reports whether a callback met an error or a violation.
func (r *search) stopped() bool { return r.failErr != nil || r.bad >= 0 }

// initial stores the initial states and checks them.
func (r *search) initial() error {
	e := r.e
	err := e.initStates(func(st []Value) {
		if r.stopped() {
			return
		}
		e.generat++
		if !r.admits(st) {
			return // TLC keeps no state outside the CONSTRAINT
		}
		i, isNew, err := e.add(st, noParent, 0)
		if err != nil {
			r.failErr = err
		} else if isNew {
			r.check(st, i)
		}
	})
	if err != nil {
		return fmt.Errorf("computing initial states: %w", err)
	}
	return r.failErr
}

// explore expands the states breadth first until none is left or the run stops.
func (r *search) explore() (*Result, error) {
	e := r.e
	checkDeadlock := e.s.Config.CheckDeadlock && !e.opts.NoDeadlock
	for head := 0; head < e.count(); head++ {
		cur, d, err := e.next(head)
		if err != nil {
			return nil, err
		}
		n, err := r.expand(head, cur, d)
		if err != nil {
			return nil, err
		}
		if r.bad >= 0 {
			return r.violation(head + 1)
		}
		if n == 0 && checkDeadlock {
			r.res.Outcome = Deadlock
			r.res.Trace, err = e.trace(head)
			return r.finish(head + 1), err
		}
		if e.opts.MaxStates > 0 && e.count() > e.opts.MaxStates {
			return r.finish(head + 1), errAt(ErrLimit, Pos{}, "more than %d distinct states", e.opts.MaxStates)
		}
		r.progress(head, d)
	}
	return r.finish(e.count()), nil
}

// expand generates the successors of state head, stores the new ones and checks
// them; n counts the successors, duplicates and those outside the model included.
func (r *search) expand(head int, cur []Value, d uint16) (n int, err error) {
	e := r.e
	d++
	e.setParent(cur)
	err = e.successors(cur, func(next []Value) {
		if r.stopped() {
			return
		}
		n++
		e.generat++
		if !r.admits(next) {
			return // generated, but outside the model: not stored, not explored
		}
		i, isNew, err := e.add(next, uint32(head), d)
		if err != nil {
			r.failErr = err
			return
		}
		if e.onEdge != nil {
			e.onEdge(head, int(i), e.label())
		}
		if isNew {
			r.check(next, i)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("computing successors of state\n%s: %w", e.s.formatState(cur), err)
	}
	return n, r.failErr
}

// admits reports whether st satisfies the state constraints.
func (r *search) admits(st []Value) bool {
	if len(r.e.s.constraints) == 0 {
		return true
	}
	ok, err := r.e.inModel(st)
	if err != nil {
		r.failErr = err
		return false
	}
	return ok
}

// check evaluates the invariants on the new state st, stored at index i.
func (r *search) check(st []Value, i uint32) {
	if inv, err := r.e.violated(st); err != nil {
		r.failErr = err
	} else if inv != "" {
		r.bad, r.badInv = int(i), inv
	}
}

// violation ends the run at the violating state with its trace; head is how many
// states were expanded.
func (r *search) violation(head int) (*Result, error) {
	r.res.Outcome, r.res.Invariant = InvariantViolated, r.badInv
	trace, err := r.e.trace(r.bad)
	r.res.Trace = trace
	return r.finish(head), err
}

// progress prints TLC's progress line, at most once per r.every.
func (r *search) progress(head int, d uint16) {
	if head&15 == 0 {
		r.progressLine(head, d)
	}
}

// progressLine prints the progress line if it is due: head is the last state
// expanded, d its depth.
func (r *search) progressLine(head int, d uint16) {
	e := r.e
	if e.opts.Progress == nil || time.Since(r.lastProgress) < r.every {
		return
	}
	r.lastProgress = time.Now()
	el := r.elapsed().Seconds()
	fmt.Fprintf(e.opts.Progress, "Progress(%d) at %s: %d states generated (%.0f s/min), %d distinct states found (%.0f ds/min), %d states left on queue.\n",
		d+1, r.lastProgress.UTC().Format("2006-01-02 15:04:05"), e.generat, float64(e.generat)/el*60, e.count(), float64(e.count())/el*60, e.count()-head-1)
	if e.fp != nil {
		fmt.Fprintln(e.opts.Progress, e.fpProgress(float64(e.count())/el))
	}
}

// fpProgress says how full the fingerprint set is, when it would fill at the rate so
// far, and where the queue's states are.
func (e *explorer) fpProgress(perSecond float64) string {
	left := float64(e.fp.max - e.fp.len())
	fills := "never at this rate"
	if perSecond > 0 {
		fills = "in about " + time.Duration(left/perSecond*float64(time.Second)).Round(time.Second).String() + " at this rate"
	}
	return fmt.Sprintf("tlacheck: fingerprint set %d of %d states (%.0f%%), full %s; queue %d states, %d bytes compressed in memory, %d in its file%s",
		e.fp.len(), e.fp.max, 100*float64(e.fp.len())/float64(e.fp.max), fills, e.queue.len, e.queue.inMem, e.queue.fileEnd, residentNote(e.fp.len()))
}

// finish fills in the figures; head is how many states were expanded.
func (r *search) finish(head int) *Result {
	e, res := r.e, r.res
	res.Distinct = int64(e.count())
	res.Generated = e.generat
	res.Queue = e.count() - head
	if e.count() > 0 {
		res.Depth = int(e.maxDepth) + 1
	}
	if e.fp != nil {
		res.Fingerprints, res.FingerprintSlots = true, len(e.fp.slots)
		res.Collision = collisionChance(res.Distinct, res.Generated)
		if e.rc != nil {
			res.Collision += e.rc.collisionChance()
			res.RawCacheHits, res.RawCacheBytes = e.rc.hits.Load(), e.rc.bytes()
		}
		res.QueueSpilled = e.queue.spilled
	}
	res.Checkpoints = r.checkpoints
	res.Duration = r.elapsed()
	return res
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// trace rebuilds the shortest path to state i and names each action by re-running
// the next-state action from each predecessor.
func (e *explorer) trace(i int) ([]Step, error) {
	var path []int
	var fps []uint64
	for j := uint32(i); j != noParent; {
		p, fp, err := e.parentOf(j)
		if err != nil {
			return nil, err
		}
		path, fps = append(path, int(j)), append(fps, fp)
		j = p
	}
	if e.fp != nil {
		return e.traceByFingerprints(fps)
	}
	steps := make([]Step, len(path))
	for k := range path {
		idx := path[len(path)-1-k]
		st := e.states[idx]
		steps[k] = Step{Action: "Initial predicate", State: e.s.stateRecord(st), Text: e.s.formatState(st)}
		if k == 0 {
			continue
		}
		prev := e.states[path[len(path)-k]]
		e.setParent(nil)
		want := string(e.key(st))
		found := ""
		e.setParent(prev)
		err := e.successors(prev, func(next []Value) {
			if found == "" && string(e.key(next)) == want {
				found = e.label()
			}
		})
		if err != nil {
			return nil, err
		}
		steps[k].Action = found
	}
	return steps, nil
}

// traceByFingerprints rebuilds the states of a path from their fingerprints (last
// first), as TLC does from its trace file: the initial state with the first one, then
// each time the successor with the next, named by its action.
func (e *explorer) traceByFingerprints(fps []uint64) ([]Step, error) {
	steps := make([]Step, 0, len(fps))
	var prev []Value
	for k := len(fps) - 1; k >= 0; k-- {
		want := fps[k]
		var found []Value
		action := "Initial predicate"
		match := func(st []Value) {
			if found == nil && fingerprint(e.key(st)) == want {
				found = append([]Value(nil), st...)
				if prev != nil {
					action = e.label()
				}
			}
		}
		var err error
		e.setParent(prev)
		if prev == nil {
			err = e.initStates(match)
		} else {
			err = e.successors(prev, match)
		}
		if err != nil {
			return nil, err
		}
		if found == nil {
			return nil, fmt.Errorf("rebuilding the trace: no state of step %d has the fingerprint %#x", len(steps)+1, want)
		}
		steps = append(steps, Step{Action: action, State: e.s.stateRecord(found), Text: e.s.formatState(found)})
		prev = found
	}
	return steps, nil
}
