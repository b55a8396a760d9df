package model

import (
	"fmt"
	"strings"
)

// The error names of the contract (docs/contract.md), as the spec's answers carry them.
const (
	ErrUnknownRun  = "unknown_run"
	ErrBadEpoch    = "bad_epoch"
	ErrNotPending  = "not_pending"
	ErrNotAdmitted = "not_admitted"
	ErrConflict    = "conflict"
	ErrRunFinal    = "run_final"
	ErrRunRetired  = "run_retired"
	// ErrNotFinished: Retire of a run that is not finished (the spec has no such step).
	ErrNotFinished = "not_finished"
	// ErrInvalidArgument is outside the spec (epoch < 1); impl/core names it so.
	ErrInvalidArgument = "invalid_argument"
)

// The answers to Admit and the denial reasons.
const (
	AnsAdmit     = "admit"
	AnsHeld      = "held"
	AnsDuplicate = "duplicate"
	AnsDenied    = "denied"

	ReasonCancelled  = "cancelled"
	ReasonTimedOut   = "timed_out"
	ReasonStaleEpoch = "stale_epoch"
	ReasonRejected   = "rejected"
	ReasonRetired    = "retired"
)

// Answer is what the contract answers to one operation. Exactly one of Err and the
// other fields is meaningful: when Err is set the state did not change.
type Answer struct {
	// Err is the contract's error name ("unknown_run", "bad_epoch", ...), or "".
	Err string
	// Admit is the answer to Admit: "admit", "held", "duplicate" or "denied".
	Admit string
	// Reason is the denial reason of a "denied" Admit.
	Reason string
	// Outcome is the recorded outcome of a "duplicate" of a completed effect
	// ("ok"/"failed"), else "".
	Outcome string
	// Repeat marks a Decide or Complete that repeats what was already recorded.
	Repeat bool
	// Status and Epoch report the run after Open, Cancel, Fence and Timeout.
	Status RunStatus
	Epoch  int
}

// IsError reports whether a is an error (the operation changed nothing).
func (a Answer) IsError() bool { return a.Err != "" }

// String renders a compactly, e.g. "denied(stale_epoch)", "error(not_pending)",
// "repeat", "cancelled@2".
func (a Answer) String() string {
	var b strings.Builder
	switch {
	case a.Err != "":
		fmt.Fprintf(&b, "error(%s)", a.Err)
	case a.Admit == AnsDenied:
		fmt.Fprintf(&b, "denied(%s)", a.Reason)
	case a.Admit == AnsDuplicate && a.Outcome != "":
		fmt.Fprintf(&b, "duplicate(%s)", a.Outcome)
	case a.Admit != "":
		b.WriteString(a.Admit)
	case a.Repeat:
		b.WriteString("repeat")
	case a.Status != "":
		fmt.Fprintf(&b, "%s@%d", a.Status, a.Epoch)
	default:
		b.WriteString("ok")
	}
	return b.String()
}

func errAnswer(code string) Answer  { return Answer{Err: code} }
func denied(reason string) Answer   { return Answer{Admit: AnsDenied, Reason: reason} }
func admitAnswer(ans string) Answer { return Answer{Admit: ans} }
