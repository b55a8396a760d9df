package model

// This file transcribes the actions of spec/tla/SoundGate.tla. Each function checks
// the spec's conditions in the spec's order and returns the contract's answer for any
// input, with the successor state. An answer that is an error returns s unchanged; so
// does an answer that changes nothing (a stuttering step of the spec). The returned
// state never aliases s when it differs from it.

// AdmitAnswer is the spec's AdmitAnswer(r, k, e, g): contract steps 1-10 in order
// (step 2, the deadline, is a Timeout of its own in the spec). An epoch below 1 is
// outside the spec; it answers invalid_argument, as impl/core does.
func AdmitAnswer(s State, r, k, e int, g bool) Answer {
	run := s.Runs[r]
	switch {
	case e < 1:
		return errAnswer(ErrInvalidArgument)
	case run.Status == RunNone:
		return errAnswer(ErrUnknownRun)
	case run.Status == RunRetired:
		return denied(ReasonRetired)
	case run.Status == RunCancelled:
		return denied(ReasonCancelled)
	case run.Status == RunTimedOut:
		return denied(ReasonTimedOut)
	case e < run.Epoch:
		return denied(ReasonStaleEpoch)
	case e > run.Epoch:
		return errAnswer(ErrBadEpoch)
	}
	eff := run.Effects[k]
	switch {
	case eff.Status == EffAdmitted || eff.Status == EffCompleted:
		a := admitAnswer(AnsDuplicate)
		if eff.Status == EffCompleted {
			a.Outcome = eff.Outcome
		}
		return a
	case eff.Status == EffRejected:
		return denied(ReasonRejected)
	case eff.Status == EffHeld:
		return admitAnswer(AnsHeld)
	case eff.Status == EffAbsent && g:
		return admitAnswer(AnsHeld)
	case anyTrue(run.Pending):
		return admitAnswer(AnsHeld)
	default:
		return admitAnswer(AnsAdmit)
	}
}

// ctxOf is the spec's Ctx(r, k, e), evaluated in s.
func ctxOf(s State, r, k, e int) Ctx {
	run := s.Runs[r]
	return Ctx{
		Status:  run.Status,
		Pending: append([]bool(nil), run.Pending...),
		Current: e == run.Epoch,
		Doomed:  run.Doomed[k],
	}
}

// Admit is the spec's Admit(r, k, e, g).
//
//spec:action Admit pin=55c6e2ccbe67
func Admit(s State, r, k, e int, g bool) (Answer, State) {
	a := AdmitAnswer(s, r, k, e, g)
	if a.IsError() {
		return a, s
	}
	switch {
	case a.Admit == AnsAdmit:
		// step 10: k (absent, or released) becomes admitted
		t := s.Clone()
		eff := &t.Runs[r].Effects[k]
		eff.Status = EffAdmitted
		eff.Epoch = 0
		eff.Gated = false
		eff.Admits = min(eff.Admits+1, admitsMax)
		eff.AdmitCtx = addCtx(eff.AdmitCtx, ctxOf(s, r, k, e))
		return a, t
	case a.Admit == AnsHeld && s.Runs[r].Effects[k].Status == EffAbsent:
		// steps 8 and 9: an absent k becomes held at epoch e; if gated, its approval opens
		t := s.Clone()
		eff := &t.Runs[r].Effects[k]
		eff.Status = EffHeld
		eff.Epoch = e
		eff.Gated = g
		if g {
			t.Runs[r].Pending[k] = true
		}
		return a, t
	default:
		// duplicate, denied, held with no change (k held, or released while pending)
		return a, s
	}
}

// DecideAnswer is the spec's DecideAnswer(r, k, d): an error, a repeat, or the
// zero Answer for a decided pending approval. A d other than "approve"/"reject" is
// outside the spec: invalid_argument.
func DecideAnswer(s State, r, k int, d string) Answer {
	run := s.Runs[r]
	switch {
	case d != Approve && d != Reject:
		return errAnswer(ErrInvalidArgument)
	case run.Status == RunNone:
		return errAnswer(ErrUnknownRun)
	case run.Status == RunRetired:
		return errAnswer(ErrRunRetired)
	case !run.Pending[k]:
		if (d == Approve && run.Effects[k].Approved) || (d == Reject && run.Effects[k].Status == EffRejected) {
			return Answer{Repeat: true}
		}
		return errAnswer(ErrNotPending)
	default:
		return Answer{}
	}
}

// Decide is the spec's Decide(r, k, d).
//
//spec:action Decide pin=772e5a6a612d
func Decide(s State, r, k int, d string) (Answer, State) {
	a := DecideAnswer(s, r, k, d)
	if a.IsError() || a.Repeat {
		return a, s
	}
	run := s.Runs[r]
	n := len(run.Effects)
	// step 3: reject rejects every held effect that is not (gated and approved)
	rej := make([]bool, n)
	if d == Reject {
		for j, eff := range run.Effects {
			rej[j] = eff.Status == EffHeld && !(eff.Gated && eff.Approved)
		}
	}
	pend := make([]bool, n)
	if d == Approve {
		copy(pend, run.Pending)
		pend[k] = false
	}
	st3 := make([]EffectStatus, n)
	for j, eff := range run.Effects {
		st3[j] = eff.Status
		if rej[j] {
			st3[j] = EffRejected
		}
	}
	// step 4: with no pending approval left, every held effect is released
	st4 := st3
	if !anyTrue(pend) {
		st4 = make([]EffectStatus, n)
		for j := range st3 {
			st4[j] = st3[j]
			if st3[j] == EffHeld {
				st4[j] = EffReleased
			}
		}
	}
	t := s.Clone()
	tr := &t.Runs[r]
	tr.Pending = pend
	for j := range tr.Effects {
		eff := &tr.Effects[j]
		eff.Status = st4[j]
		if rej[j] {
			eff.Epoch = 0
			eff.Gated = false
		}
		if d == Approve && j == k {
			eff.Approved = true
		}
	}
	// history: what P2 protects, restated from s rather than taken from rej, so that a
	// slip in rej cannot hide in the history too
	if d == Reject {
		tr.Doomed[k] = true
		for j, eff := range run.Effects {
			if eff.Status == EffHeld && !(eff.Gated && eff.Approved) {
				tr.Doomed[j] = true
			}
		}
	}
	return a, t
}

// CompleteAnswer is the spec's CompleteAnswer(r, k, o): an error, a repeat, or the
// zero Answer when k becomes completed. An o other than "ok"/"failed" is outside the
// spec: invalid_argument.
func CompleteAnswer(s State, r, k int, o string) Answer {
	run := s.Runs[r]
	switch {
	case o != OK && o != Failed:
		return errAnswer(ErrInvalidArgument)
	case run.Status == RunNone:
		return errAnswer(ErrUnknownRun)
	case run.Status == RunRetired:
		return errAnswer(ErrRunRetired)
	case run.Effects[k].Status == EffAdmitted:
		return Answer{}
	case run.Effects[k].Status == EffCompleted:
		if run.Effects[k].Outcome == o {
			return Answer{Repeat: true}
		}
		return errAnswer(ErrConflict)
	default:
		return errAnswer(ErrNotAdmitted)
	}
}

// Complete is the spec's Complete(r, k, o).
//
//spec:action Complete pin=414566d8b3de
func Complete(s State, r, k int, o string) (Answer, State) {
	a := CompleteAnswer(s, r, k, o)
	if a.IsError() || a.Repeat {
		return a, s
	}
	t := s.Clone()
	t.Runs[r].Effects[k].Status = EffCompleted
	t.Runs[r].Effects[k].Outcome = o
	return a, t
}

// runAnswer reports a run's status and epoch.
func runAnswer(s State, r int) Answer {
	return Answer{Status: s.Runs[r].Status, Epoch: s.Runs[r].Epoch}
}

// Open is the spec's Open(r): a new run is active at epoch 1; a retired id is
// refused; otherwise nothing changes. The answer reports the run.
//
//spec:action Open pin=ef344887505b
func Open(s State, r int) (Answer, State) {
	if s.Runs[r].Status == RunRetired {
		return errAnswer(ErrRunRetired), s
	}
	if s.Runs[r].Status != RunNone {
		return runAnswer(s, r), s
	}
	t := s.Clone()
	t.Runs[r].Status = RunActive
	t.Runs[r].Epoch = 1
	return runAnswer(t, r), t
}

// drop is the spec's DropStatus/DropEpoch/DropGated/DropApproved on run r of t (a
// clone): held and released effects drop back to absent with their flags cleared.
func drop(t State, r int) {
	for j := range t.Runs[r].Effects {
		eff := &t.Runs[r].Effects[j]
		wasLive := live(eff.Status)
		if wasLive {
			eff.Status = EffAbsent
		}
		eff.Epoch = 0
		eff.Gated = false
		if wasLive {
			eff.Approved = false
		}
	}
}

// nextEpoch moves run r of t (a clone) to its next epoch, as Cancel, Fence and
// Timeout of an active run do: no pending approval left, live effects dropped.
func nextEpoch(t State, r int) {
	t.Runs[r].Epoch++
	t.Runs[r].Pending = make([]bool, len(t.Runs[r].Pending))
	drop(t, r)
}

// Cancel is the spec's Cancel(r): a tombstone for an unknown run, a final run for an
// active one, nothing for a final one. The answer reports the run.
//
//spec:action Cancel pin=220fb20c4993
func Cancel(s State, r int) (Answer, State) {
	switch s.Runs[r].Status {
	case RunNone:
		t := s.Clone()
		t.Runs[r].Status = RunCancelled
		t.Runs[r].Epoch = 2
		return runAnswer(t, r), t
	case RunActive:
		t := s.Clone()
		t.Runs[r].Status = RunCancelled
		nextEpoch(t, r)
		return runAnswer(t, r), t
	default:
		return runAnswer(s, r), s
	}
}

// FenceAnswer is the spec's FenceAnswer(r): an error, or the zero Answer.
func FenceAnswer(s State, r int) Answer {
	switch {
	case s.Runs[r].Status == RunNone:
		return errAnswer(ErrUnknownRun)
	case s.Runs[r].Status == RunRetired:
		return errAnswer(ErrRunRetired)
	case s.Runs[r].Status.Final():
		return errAnswer(ErrRunFinal)
	default:
		return Answer{}
	}
}

// Fence is the spec's Fence(r) without the model-checking bound on epochs (Step
// applies that bound): a new epoch of an active run. The answer reports the run.
//
//spec:action Fence pin=2a59d2f562f4
func Fence(s State, r int) (Answer, State) {
	if a := FenceAnswer(s, r); a.IsError() {
		return a, s
	}
	t := s.Clone()
	nextEpoch(t, r)
	return runAnswer(t, r), t
}

// Timeout is the spec's Timeout(r): an active run's deadline passed; as Cancel, with
// timed_out. The spec has this step for active runs only; for the other statuses the
// contract says nothing, and the model answers as Cancel does for a final run (no
// change, the run reported) and unknown_run for a run never seen.
//
//spec:action Timeout pin=428e70e28f49
func Timeout(s State, r int) (Answer, State) {
	switch s.Runs[r].Status {
	case RunNone:
		return errAnswer(ErrUnknownRun), s
	case RunActive:
		t := s.Clone()
		t.Runs[r].Status = RunTimedOut
		nextEpoch(t, r)
		return runAnswer(t, r), t
	default:
		return runAnswer(s, r), s
	}
}

// Finished is the spec's Finished(r): r is final, or active with every effect
// absent, completed or rejected.
func Finished(s State, r int) bool {
	run := s.Runs[r]
	if run.Status.Final() {
		return true
	}
	if run.Status != RunActive {
		return false
	}
	for _, eff := range run.Effects {
		if eff.Status != EffAbsent && eff.Status != EffCompleted && eff.Status != EffRejected {
			return false
		}
	}
	return true
}

// Retire is the spec's Retire(r): a finished run keeps its id, and its history, and
// nothing else; an id never opened is taken for good. The spec has this step for
// those only; for the others the model answers the run with no change (already
// retired) or not_finished.
//
//spec:action Retire pin=9afca77de832
func Retire(s State, r int) (Answer, State) {
	switch {
	case s.Runs[r].Status == RunRetired:
		return runAnswer(s, r), s
	case s.Runs[r].Status != RunNone && !Finished(s, r):
		return errAnswer(ErrNotFinished), s
	}
	t := s.Clone()
	tr := &t.Runs[r]
	tr.Status, tr.Epoch = RunRetired, 0
	tr.Pending = make([]bool, len(tr.Pending))
	for j := range tr.Effects {
		eff := &tr.Effects[j]
		eff.Status, eff.Epoch, eff.Gated, eff.Approved, eff.Outcome = EffAbsent, 0, false, false, NoOutcome
	}
	return runAnswer(t, r), t
}

// RetireUpto is what the core's Retire with a watermark (core.Command.Upto) does, as
// the spec's steps: if Retire(r) is a step, Retire(x) of every run x never opened
// whose name is below r's (in byte order, as the core orders ids), then Retire(r);
// otherwise Retire(r)'s answer, with no step.
func RetireUpto(c Config, s State, r int) (Answer, State) {
	a, t := Retire(s, r)
	if a.IsError() || s.Runs[r].Status == RunRetired {
		return a, t
	}
	for x, name := range c.Runs {
		if name < c.Runs[r] && t.Runs[x].Status == RunNone {
			_, t = Retire(t, x)
		}
	}
	return a, t
}
