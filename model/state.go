package model

import (
	"fmt"
	"slices"
)

// RunStatus is a run's status, named as in the spec.
type RunStatus string

// The run statuses.
const (
	RunNone      RunStatus = "none"
	RunActive    RunStatus = "active"
	RunCancelled RunStatus = "cancelled"
	RunTimedOut  RunStatus = "timed_out"
	RunRetired   RunStatus = "retired"
)

// Final reports whether s is cancelled or timed out.
func (s RunStatus) Final() bool { return s == RunCancelled || s == RunTimedOut }

// EffectStatus is an effect's status, named as in the spec.
type EffectStatus string

// The effect statuses.
const (
	EffAbsent    EffectStatus = "absent"
	EffHeld      EffectStatus = "held"
	EffReleased  EffectStatus = "released"
	EffAdmitted  EffectStatus = "admitted"
	EffCompleted EffectStatus = "completed"
	EffRejected  EffectStatus = "rejected"
)

// live is the spec's Live(s): held or released.
func live(s EffectStatus) bool { return s == EffHeld || s == EffReleased }

// The decisions and outcomes, as in the spec.
const (
	Approve = "approve"
	Reject  = "reject"
	OK      = "ok"
	Failed  = "failed"
	// NoOutcome is the outcome of an effect that is not completed.
	NoOutcome = "none"
)

// Config holds the constants of the spec: run and key names (model values) and the
// epoch bound. Symmetry asks the explorer to keep one state per orbit of the
// permutations of runs and of keys, as SYMMETRY Symmetry does in a .cfg.
type Config struct {
	Runs     []string
	Keys     []string
	MaxEpoch int
	Symmetry bool
}

// maxNamesPerDomain bounds runs and keys: the explorer tries every permutation under
// symmetry, and a model is meant to be small.
const maxNamesPerDomain = 6

// Validate checks that c describes a model the explorer can run.
func (c Config) Validate() error {
	if len(c.Runs) == 0 || len(c.Keys) == 0 {
		return fmt.Errorf("%w: Runs and Keys must not be empty", ErrConfig)
	}
	if len(c.Runs) > maxNamesPerDomain || len(c.Keys) > maxNamesPerDomain {
		return fmt.Errorf("%w: at most %d runs and %d keys", ErrConfig, maxNamesPerDomain, maxNamesPerDomain)
	}
	if c.MaxEpoch < 1 {
		return fmt.Errorf("%w: MaxEpoch must be at least 1 (the spec ASSUMEs it)", ErrConfig)
	}
	for _, names := range [][]string{c.Runs, c.Keys} {
		if !slices.IsSorted(names) {
			return fmt.Errorf("%w: names must be sorted by bytes: %v", ErrConfig, names)
		}
		for i := 1; i < len(names); i++ {
			if names[i] == names[i-1] {
				return fmt.Errorf("%w: duplicate name %q", ErrConfig, names[i])
			}
		}
	}
	for _, r := range c.Runs {
		if slices.Contains(c.Keys, r) {
			return fmt.Errorf("%w: %q is both a run and a key", ErrConfig, r)
		}
	}
	return nil
}

// Ctx is the circumstance of one `admit` answer (the spec's Ctx(r, k, e)): the run's
// status and pending set at that moment, whether the request's epoch was the run's,
// and whether the key was doomed.
type Ctx struct {
	Status  RunStatus
	Pending []bool // indexed like Config.Keys
	Current bool
	Doomed  bool
}

// Effect is the state of one effect (r, k).
type Effect struct {
	Status   EffectStatus
	Epoch    int    // effEpoch: the epoch a held/released effect was asked at, else 0
	Gated    bool   // gated: a held/released effect is gated
	Approved bool   // approved: its own approval was granted
	Outcome  string // "ok"/"failed" once completed, else NoOutcome
	// History.
	Admits   int   // number of `admit` answers, saturating at admitsMax
	AdmitCtx []Ctx // the circumstances of those answers (a set: no two equal)
}

// admitsMax is where the history's admit counter saturates, as in the spec.
const admitsMax = 2

// Run is the state of one run.
type Run struct {
	Status  RunStatus
	Epoch   int
	Pending []bool   // indexed like Config.Keys
	Effects []Effect // indexed like Config.Keys
	Doomed  []bool   // history, indexed like Config.Keys
}

// State is one state of the spec: every run of the Config, indexed like Config.Runs.
type State struct {
	Runs []Run
}

// Init is the spec's Init: every run "none", every effect absent, no history.
func Init(c Config) State {
	s := State{Runs: make([]Run, len(c.Runs))}
	for i := range s.Runs {
		s.Runs[i] = Run{
			Status:  RunNone,
			Pending: make([]bool, len(c.Keys)),
			Effects: make([]Effect, len(c.Keys)),
			Doomed:  make([]bool, len(c.Keys)),
		}
		for k := range s.Runs[i].Effects {
			s.Runs[i].Effects[k] = Effect{Status: EffAbsent, Outcome: NoOutcome}
		}
	}
	return s
}

// Clone returns a deep copy of s.
func (s State) Clone() State {
	t := State{Runs: make([]Run, len(s.Runs))}
	for i, r := range s.Runs {
		t.Runs[i] = Run{
			Status:  r.Status,
			Epoch:   r.Epoch,
			Pending: slices.Clone(r.Pending),
			Effects: make([]Effect, len(r.Effects)),
			Doomed:  slices.Clone(r.Doomed),
		}
		for k, e := range r.Effects {
			e.AdmitCtx = slices.Clone(e.AdmitCtx)
			for j := range e.AdmitCtx {
				e.AdmitCtx[j].Pending = slices.Clone(e.AdmitCtx[j].Pending)
			}
			t.Runs[i].Effects[k] = e
		}
	}
	return t
}

func anyTrue(bs []bool) bool { return slices.Contains(bs, true) }

// RunNamed returns the state of the run called name in c, for callers that work with
// names (the conformance suite's abstraction of the implementation).
func (s State) RunNamed(c Config, name string) (Run, bool) {
	i := slices.Index(c.Runs, name)
	if i < 0 {
		return Run{}, false
	}
	return s.Runs[i], true
}

// EffectNamed returns the state of effect (run, key) by names in c.
func (s State) EffectNamed(c Config, run, key string) (Effect, bool) {
	r, ok := s.RunNamed(c, run)
	k := slices.Index(c.Keys, key)
	if !ok || k < 0 {
		return Effect{}, false
	}
	return r.Effects[k], true
}

// PendingNamed lists the keys of run whose approval is open, in name order.
func (s State) PendingNamed(c Config, run string) []string {
	r, ok := s.RunNamed(c, run)
	if !ok {
		return nil
	}
	var out []string
	for j, p := range r.Pending {
		if p {
			out = append(out, c.Keys[j])
		}
	}
	return out
}
