package core

import (
	"cmp"
	"container/heap"
	"errors"
	"slices"
)

// Effect is the gate's record of one effect (r, k) that is not absent.
type Effect struct {
	Status EffectStatus
	// Epoch is the epoch the effect was asked at; set while held or released.
	Epoch uint64
	// Gated: the effect asked for its own approval; set while held or released.
	Gated bool
	// Approved: the effect's own approval was granted. Kept once admitted or completed,
	// so that a retried approve is recognised as a repeat.
	Approved bool
	// Outcome and Result are set once completed.
	Outcome Outcome
	Result  string
	// Note is what the effect's approval says (note.go): set when a gated admit
	// opened it, kept until the effect is absent again; never changed in place.
	Note *Note
}

// Run is the state of one run. Runs are independent: no action on one run reads or
// writes another, which is what lets a shell partition runs across locks.
type Run struct {
	ID       RunID
	Status   RunStatus
	Epoch    uint64
	Deadline Time // 0: none

	effects map[Key]Effect   // every effect that is not absent
	pending map[Key]struct{} // keys whose approval is open
	open    map[Key]struct{} // keys that are held or released (cleared by Cancel and Fence)
	// admitted counts the effects admitted and not completed, so that finished is O(1)
	admitted int

	index  int       // its place in Gate.order
	cutGen uint64    // the last cut that saved or took this run (cut.go)
	saved  *savedRun // while a cut has not taken this run: its state when the cut began
}

func newRun(id RunID) *Run {
	return &Run{ID: id, effects: map[Key]Effect{}, pending: map[Key]struct{}{}, open: map[Key]struct{}{}}
}

// Gate is the admission core: every run the gate knows, and the limits that bound them.
// The zero value is not usable; call New.
type Gate struct {
	limits    Limits
	runs      map[RunID]*Run
	order     []*Run           // every run, in the order it was made (a retired one leaves it)
	retired   retiredSet       // the ids of retired runs, each listed
	upto      RunID            // every id up to it that no run holds is retired ("": none)
	unlinked  []*Run           // runs retired during a cut, left in order until it ends
	bytes     int64            // what the state's budget counts (budget.go)
	deadlines deadlineHeap     // active runs with a deadline, earliest first (lazily cleaned)
	cut       *Cut             // the cut being taken, if any (cut.go)
	cuts      uint64           // cuts begun so far
	history   invariantHistory // the invariant tier's record of admits (invariants_on.go)
	asking    map[RunID]*Run   // the runs with an approval pending, for Inbox (inbox.go)
}

// addRun makes run known to the gate.
func (g *Gate) addRun(run *Run) {
	run.index = len(g.order)
	g.order = append(g.order, run)
	g.runs[run.ID] = run
	g.bytes += run.bytes()
}

// New returns an empty gate with the given limits.
func New(l Limits) *Gate {
	return &Gate{limits: l, runs: map[RunID]*Run{}, asking: map[RunID]*Run{}}
}

// Limits returns the gate's limits.
func (g *Gate) Limits() Limits { return g.limits }

// Len returns the number of runs the gate knows, tombstones included, retired ones not.
func (g *Gate) Len() int { return len(g.runs) }

// Entries returns the runs and effects the gate holds: what a snapshot encodes, so
// that the server can space its snapshots by the state's size. It costs one step per
// run.
func (g *Gate) Entries() int {
	n := len(g.runs)
	for _, run := range g.runs {
		n += len(run.effects)
	}
	return n
}

// PendingOf returns how many approvals of run r are pending (0 for a run the gate
// does not hold). A command changes the approvals of its own run only, so a shell
// that wants the gate's total keeps it by the difference of PendingOf(c.Run)
// across each Step, after one Pending at its start.
func (g *Gate) PendingOf(r RunID) int {
	if run, ok := g.runs[r]; ok {
		return len(run.pending)
	}
	return 0
}

// Pending returns how many approvals are pending in every run. It costs one step
// per run.
func (g *Gate) Pending() int {
	n := 0
	for _, run := range g.runs {
		n += len(run.pending)
	}
	return n
}

func (g *Gate) checkRun(r RunID) error {
	if r == "" {
		return ErrInvalid
	}
	if len(r) > g.limits.RunBytesMax {
		return ErrRunTooLong
	}
	return nil
}

func (g *Gate) checkKey(r RunID, k Key) error {
	if err := g.checkRun(r); err != nil {
		return err
	}
	if k == "" {
		return ErrInvalid
	}
	if len(k) > g.limits.KeyBytesMax {
		return ErrKeyTooLong
	}
	return nil
}

// RunView is a read-only copy of a run's state, as Status and the wire report it.
type RunView struct {
	ID       RunID
	Status   RunStatus
	Epoch    uint64
	Deadline Time
	Pending  []Key // sorted
}

func (run *Run) view() RunView {
	v := RunView{ID: run.ID, Status: run.Status, Epoch: run.Epoch, Deadline: run.Deadline}
	for k := range run.pending {
		v.Pending = append(v.Pending, k)
	}
	slices.Sort(v.Pending)
	return v
}

// OpenResult answers Open.
type OpenResult struct {
	Run     RunView
	Created bool // false: the run existed (open is idempotent) and nothing changed
}

// open creates run r, active at epoch 1, with an optional deadline (0: none).
//
//spec:action Open pin=ef344887505b
func (g *Gate) open(r RunID, deadline Time) (OpenResult, error) {
	if err := g.checkRun(r); err != nil {
		return OpenResult{}, err
	}
	if deadline < 0 {
		return OpenResult{}, ErrInvalid
	}
	if run, ok := g.runs[r]; ok {
		return OpenResult{Run: run.view()}, nil
	}
	if g.isRetired(r) {
		return OpenResult{}, ErrRunRetired
	}
	if len(g.runs) >= g.limits.RunsMax {
		return OpenResult{}, ErrTooManyRuns
	}
	if !g.fits(runBytes(r)) {
		return OpenResult{}, ErrStateFull
	}
	run := newRun(r)
	run.Status, run.Epoch, run.Deadline = RunActive, 1, deadline
	g.addRun(run)
	if deadline > 0 {
		heap.Push(&g.deadlines, deadlineEntry{at: deadline, run: r})
	}
	return OpenResult{Run: run.view(), Created: true}, nil
}

// AdmitResult answers Admit.
type AdmitResult struct {
	Answer  Answer
	Reason  Reason  // set when Answer is AnswerDenied
	Outcome Outcome // set when Answer is AnswerDuplicate and the effect was completed
	Result  string  // the completed effect's result, with Outcome
	Epoch   uint64  // the run's epoch after the action
	// Changed reports that the state changed (the shell must persist before replying).
	Changed bool
}

// admitTarget checks the arguments of an admit and finds its run. Its errors come
// before the contract's step 2 (the deadline), so a refused admit changes nothing.
func (g *Gate) admitTarget(r RunID, k Key, e uint64) (*Run, error) {
	if err := g.checkKey(r, k); err != nil {
		return nil, err
	}
	if e < 1 {
		return nil, ErrInvalid
	}
	return g.known(r)
}

// known finds run r: ErrRunRetired if it was retired, ErrUnknownRun if never seen.
func (g *Gate) known(r RunID) (*Run, error) {
	if run, ok := g.runs[r]; ok {
		return run, nil
	}
	if g.isRetired(r) {
		return nil, ErrRunRetired
	}
	return nil, ErrUnknownRun
}

// isRetired reports whether r, which no run holds, is retired: up to the watermark
// (no watermark is "", below every id), or listed.
func (g *Gate) isRetired(r RunID) bool {
	return r <= g.upto || g.retired.has(r)
}

// admit asks to perform effect k of run now, at epoch e; gated asks for k's own
// approval first, and the approval it opens keeps note, what the admit said of the
// effect (no answer reads it). These are the contract's steps 3-10, in its order
// (docs/contract.md); step 2, the deadline, is the Timeout that Step takes first.
//
//spec:action Admit pin=55c6e2ccbe67
func (g *Gate) admit(run *Run, k Key, e uint64, gated bool, note *Note) (AdmitResult, error) {
	var res AdmitResult
	switch {
	case run.Status == RunCancelled:
		return res.deny(ReasonCancelled, run), nil
	case run.Status == RunTimedOut:
		return res.deny(ReasonTimedOut, run), nil
	case e < run.Epoch && !brokenP4:
		return res.deny(ReasonStaleEpoch, run), nil
	case e > run.Epoch:
		return AdmitResult{}, ErrBadEpoch
	}
	res.Epoch = run.Epoch
	eff, exists := run.effects[k]
	switch eff.Status {
	case EffectAdmitted, EffectCompleted:
		if brokenP3 && eff.Status == EffectCompleted {
			res.Answer, res.Changed = AnswerAdmit, true
			return res, nil
		}
		res.Answer, res.Outcome, res.Result = AnswerDuplicate, eff.Outcome, eff.Result
		return res, nil
	case EffectRejected:
		return res.deny(ReasonRejected, run), nil
	case EffectHeld:
		res.Answer = AnswerHeld
		return res, nil
	}
	// k is absent or released.
	run.save(k)
	if !exists && len(run.effects) >= g.limits.KeysPerRunMax {
		return AdmitResult{}, ErrTooManyKeys
	}
	grow := int64(0) // what a new effect adds to the state's budget
	if !exists {
		grow = effectBytes(k, Effect{})
		if gated {
			grow += note.bytes()
		}
	}
	if !g.fits(grow) {
		return AdmitResult{}, ErrStateFull
	}
	if !exists && gated {
		if len(run.pending) >= g.limits.PendingPerRunMax {
			return AdmitResult{}, ErrTooManyPending
		}
		g.bytes += grow
		kept := *note // a copy, made only here: an admit that opens nothing allocates nothing
		run.effects[k] = Effect{Status: EffectHeld, Epoch: e, Gated: true, Note: &kept}
		run.pending[k] = struct{}{}
		run.open[k] = struct{}{}
		res.Answer, res.Changed = AnswerHeld, true
		return res, nil
	}
	if len(run.pending) > 0 && !(brokenP1 && exists) {
		if !exists {
			g.bytes += grow
			run.effects[k] = Effect{Status: EffectHeld, Epoch: e}
			run.open[k] = struct{}{}
			res.Changed = true
		}
		res.Answer = AnswerHeld
		return res, nil
	}
	g.bytes += grow
	run.admitted++
	run.effects[k] = Effect{Status: EffectAdmitted, Approved: eff.Approved, Note: eff.Note}
	delete(run.open, k)
	res.Answer, res.Changed = AnswerAdmit, true
	return res, nil
}

func (res AdmitResult) deny(reason Reason, run *Run) AdmitResult {
	res.Answer, res.Reason, res.Epoch = AnswerDenied, reason, run.Epoch
	return res
}

// DecideResult answers Decide.
type DecideResult struct {
	Decision Decision
	// Repeat: the same decision had already been taken; nothing changed.
	Repeat bool
	// Released and Rejected list the keys whose status this decision changed, sorted.
	Released []Key
	Rejected []Key
}

// decide takes an approver's decision on k's pending approval. Reject covers the plan
// the run was paused over: every held effect of r that is not an approved gated effect
// becomes rejected. When no approval of r remains pending, its held effects are released.
// The reason, if any, is kept in k's note; it changes nothing else.
//
//spec:action Decide pin=772e5a6a612d
func (g *Gate) decide(r RunID, k Key, d Decision, reason string) (DecideResult, error) {
	if err := g.checkKey(r, k); err != nil {
		return DecideResult{}, err
	}
	if d != Approve && d != Reject {
		return DecideResult{}, ErrInvalid
	}
	run, err := g.known(r)
	if err != nil {
		return DecideResult{}, err
	}
	res := DecideResult{Decision: d}
	if _, ok := run.pending[k]; !ok {
		eff := run.effects[k]
		if (d == Approve && eff.Approved) || (d == Reject && eff.Status == EffectRejected) {
			res.Repeat = true
			return res, nil
		}
		return DecideResult{}, ErrNotPending
	}
	note := run.effects[k].Note
	decided := note.decided(reason)
	grow := decided.bytes() - note.bytes()
	if !g.fits(grow) {
		return DecideResult{}, ErrStateFull // a decision without a reason adds nothing
	}
	g.bytes += grow
	if d == Approve {
		run.save(k)
		delete(run.pending, k)
		eff := run.effects[k]
		eff.Approved, eff.Note = true, decided
		run.effects[k] = eff
	} else {
		for key := range run.open {
			eff := run.effects[key]
			if eff.Status == EffectHeld && !(eff.Gated && eff.Approved) && !(brokenP2 && !eff.Gated) {
				run.save(key)
				if key == k {
					eff.Note = decided
				}
				run.effects[key] = Effect{Status: EffectRejected, Note: eff.Note}
				delete(run.open, key)
				res.Rejected = append(res.Rejected, key)
			}
		}
		clear(run.pending) // every pending key was open and held, and is saved above
	}
	if len(run.pending) == 0 {
		for key := range run.open {
			eff := run.effects[key]
			if eff.Status == EffectHeld {
				eff.Status = EffectReleased
				run.save(key)
				run.effects[key] = eff
				res.Released = append(res.Released, key)
			}
		}
	}
	slices.Sort(res.Released)
	slices.Sort(res.Rejected)
	return res, nil
}

// CompleteResult answers Complete.
type CompleteResult struct {
	Repeat bool // the same outcome was already recorded; nothing changed
}

// complete records the outcome of an admitted effect, so that a replay of k gets it
// back with its duplicate answer. It is allowed on a final run: the effect happened.
//
//spec:action Complete pin=414566d8b3de
func (g *Gate) complete(r RunID, k Key, o Outcome, result string) (CompleteResult, error) {
	if err := g.checkKey(r, k); err != nil {
		return CompleteResult{}, err
	}
	if o != OutcomeOK && o != OutcomeFailed {
		return CompleteResult{}, ErrInvalid
	}
	if len(result) > g.limits.ResultBytesMax {
		return CompleteResult{}, ErrResultTooLong
	}
	run, err := g.known(r)
	if err != nil {
		return CompleteResult{}, err
	}
	eff := run.effects[k]
	switch eff.Status {
	case EffectAdmitted:
		if !g.fits(int64(len(result))) {
			return CompleteResult{}, ErrStateFull
		}
		g.bytes += int64(len(result))
		run.admitted--
		eff.Status, eff.Outcome, eff.Result = EffectCompleted, o, result
		run.save(k)
		run.effects[k] = eff
		return CompleteResult{}, nil
	case EffectCompleted:
		if eff.Outcome == o && eff.Result == result {
			return CompleteResult{Repeat: true}, nil
		}
		return CompleteResult{}, ErrConflict
	}
	return CompleteResult{}, ErrNotAdmitted
}

// CancelResult answers Cancel.
type CancelResult struct {
	Run     RunView
	Changed bool // false: the run was already final
}

// cancel makes r cancelled: its epoch moves on, its held and released effects drop
// back to absent and its approvals close. A cancel of an unknown run leaves a
// tombstone (cancelled, epoch 2) so that late work is fenced.
//
//spec:action Cancel pin=220fb20c4993
func (g *Gate) cancel(r RunID) (CancelResult, error) {
	if err := g.checkRun(r); err != nil {
		return CancelResult{}, err
	}
	run, ok := g.runs[r]
	if !ok && g.isRetired(r) {
		return CancelResult{Run: retiredView(r)}, nil
	}
	if !ok {
		if len(g.runs) >= g.limits.RunsMax {
			return CancelResult{}, ErrTooManyRuns
		}
		if !g.fits(runBytes(r)) {
			return CancelResult{}, ErrStateFull
		}
		run = newRun(r)
		run.Status, run.Epoch = RunCancelled, 2
		g.addRun(run)
		return CancelResult{Run: run.view(), Changed: true}, nil
	}
	if run.Status != RunActive {
		return CancelResult{Run: run.view()}, nil
	}
	run.Status = RunCancelled
	g.nextEpoch(run)
	return CancelResult{Run: run.view(), Changed: true}, nil
}

// fence moves r to a new epoch without cancelling it, for a retry after a timeout or
// a worker crash: held and released effects drop back to absent and their approvals
// close, so the new attempt must ask (and, if gated, be approved) again.
//
//spec:action Fence pin=2a59d2f562f4
func (g *Gate) fence(r RunID) (RunView, error) {
	if err := g.checkRun(r); err != nil {
		return RunView{}, err
	}
	run, err := g.known(r)
	if err != nil {
		return RunView{}, err
	}
	if run.Status != RunActive {
		return RunView{}, ErrRunFinal
	}
	g.nextEpoch(run)
	return run.view(), nil
}

// nextEpoch advances the epoch and drops every held and released effect to absent.
func (g *Gate) nextEpoch(run *Run) {
	run.Epoch++
	for k := range run.open {
		run.save(k)
		g.bytes -= effectBytes(k, run.effects[k])
		delete(run.effects, k)
	}
	clear(run.open)
	clear(run.pending) // pending keys are open: saved above
}

// timeout times out run r if it is active, as the shell asks once r's deadline has
// passed on its clock. It reports whether r changed.
func (g *Gate) timeout(r RunID) (bool, error) {
	if err := g.checkRun(r); err != nil {
		return false, err
	}
	run, err := g.known(r)
	if errors.Is(err, ErrRunRetired) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if run.Status != RunActive {
		return false, nil
	}
	g.timeOut(run)
	return true, nil
}

// due reports whether run is active and its deadline has passed at now: the
// contract's step 2 of Admit, which then times the run out first.
func (run *Run) due(now Time) bool {
	return run.Status == RunActive && run.Deadline > 0 && now >= run.Deadline
}

// timeOut makes an active run timed out, as Cancel makes it cancelled.
//
//spec:action Timeout pin=428e70e28f49
func (g *Gate) timeOut(run *Run) {
	run.Status = RunTimedOut
	g.nextEpoch(run)
}

// NextDeadline returns the active run with the earliest deadline, if any, so that the
// shell knows when to time it out (a Command with OpTimeout).
func (g *Gate) NextDeadline() (Time, RunID, bool) {
	for stale := g.deadlines.Len(); stale > 0; stale-- { // bounded: each pass pops one entry
		top := g.deadlines[0]
		if run, ok := g.runs[top.run]; ok && run.Status == RunActive && run.Deadline == top.at {
			return top.at, top.run, true
		}
		heap.Pop(&g.deadlines) // stale: the run is final
	}
	return 0, "", false
}

// retiredView is what Status and Cancel report of a retired run: its id, no epoch.
func retiredView(r RunID) RunView { return RunView{ID: r, Status: RunRetired} }

// finished reports whether nothing of run can still happen but replays, and the
// completion of what was admitted: it is final, or active with every effect
// completed or rejected (no approval pending, nothing held, released or admitted).
func (run *Run) finished() bool {
	return run.Status.Final() || run.Status == RunActive && len(run.open) == 0 && run.admitted == 0
}

// retire forgets a finished run but for its id, which stays taken: no key of it is
// admitted again (admits are denied, retired) and the id is never opened again. An id
// no run ever held is taken the same way. With upto, the id is not listed: the
// watermark moves up to it instead, and every id up to it that no run holds is retired
// with it (for ids ordered in time: docs/contract.md). It reports whether anything
// changed; a retired run is reported as it is.
//
//spec:action Retire pin=9afca77de832
func (g *Gate) retire(r RunID, upto bool) (RunView, bool, error) {
	if err := g.checkRun(r); err != nil {
		return RunView{}, false, err
	}
	run, err := g.known(r) // run is nil for an id never opened (ErrUnknownRun)
	switch {
	case errors.Is(err, ErrRunRetired):
		return retiredView(r), false, nil
	case err == nil && !run.finished():
		return RunView{}, false, ErrNotFinished
	}
	if !upto && g.retired.len() >= g.limits.RetiredMax {
		return RunView{}, false, ErrTooManyRetired
	}
	if run != nil {
		// run itself is left as it was: a cut that has not taken it copies it from there
		g.bytes -= run.bytes()
		delete(g.runs, r)
		g.unlink(run)
	}
	if upto {
		g.upto = max(g.upto, r)
	} else {
		g.retired.add(r)
	}
	return retiredView(r), true, nil
}

// unlink takes a retired run out of g.order, by moving the last run into its place;
// during a cut, whose runs are g.order[:Cut.runs], it waits for the cut's End.
func (g *Gate) unlink(run *Run) {
	if g.cut != nil {
		g.unlinked = append(g.unlinked, run)
		return
	}
	last := g.order[len(g.order)-1]
	g.order[run.index], last.index = last, run.index
	g.order[len(g.order)-1] = nil
	g.order = g.order[:len(g.order)-1]
}

// Finished reports whether run r is known and finished: what Retire takes.
func (g *Gate) Finished(r RunID) bool {
	run, ok := g.runs[r]
	return ok && run.finished()
}

// Retired returns how many runs are retired and listed, the bytes their ids take, and
// the watermark up to which every id no run holds is retired ("": none).
func (g *Gate) Retired() (runs, bytes int, upto RunID) {
	return g.retired.len(), g.retired.bytes(), g.upto
}

// EffectView is a read-only copy of one effect's state.
type EffectView struct {
	Key Key
	Effect
}

// Status returns run r and, if k is not empty, effect k (absent if the gate has no record).
func (g *Gate) Status(r RunID, k Key) (RunView, EffectView, error) {
	if err := g.checkRun(r); err != nil {
		return RunView{}, EffectView{}, err
	}
	if len(k) > g.limits.KeyBytesMax {
		return RunView{}, EffectView{}, ErrKeyTooLong
	}
	run, err := g.known(r)
	if errors.Is(err, ErrRunRetired) {
		return retiredView(r), EffectView{Key: k}, nil
	}
	if err != nil {
		return RunView{}, EffectView{}, err
	}
	return run.view(), EffectView{Key: k, Effect: run.effects[k]}, nil
}

// RunIDs returns the ids of every run the gate knows, sorted.
func (g *Gate) RunIDs() []RunID {
	ids := make([]RunID, 0, len(g.runs))
	for id := range g.runs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Effects returns every effect of run r that is not absent, sorted by key: the full
// state the conformance suite compares with the model.
func (g *Gate) Effects(r RunID) []EffectView {
	run, ok := g.runs[r]
	if !ok {
		return nil
	}
	out := make([]EffectView, 0, len(run.effects))
	for k, e := range run.effects {
		out = append(out, EffectView{Key: k, Effect: e})
	}
	slices.SortFunc(out, func(a, b EffectView) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

type deadlineEntry struct {
	at  Time
	run RunID
}

type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int { return len(h) }
func (h deadlineHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].run < h[j].run)
}
func (h deadlineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)   { *h = append(*h, x.(deadlineEntry)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
