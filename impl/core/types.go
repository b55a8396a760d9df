package core

// RunID names one agent run. It is chosen by the caller (bounded by Limits.RunBytesMax).
type RunID string

// Key is the caller's idempotency key of one effect of a run, stable across retries
// and replays of the same logical effect (bounded by Limits.KeyBytesMax).
type Key string

// Time is a point on the gate's clock in milliseconds since the Unix epoch. The core
// never reads a clock: every action that depends on time is given one.
type Time int64

// RunStatus is the lifecycle of a run. Cancelled and TimedOut are final; a finished
// run may be retired, which keeps its id and nothing else.
type RunStatus uint8

// The run statuses, named as in the spec.
const (
	RunNone RunStatus = iota // never seen
	RunActive
	RunCancelled
	RunTimedOut
	RunRetired
)

var runStatusNames = [...]string{"none", "active", "cancelled", "timed_out", "retired"}

// String returns the contract's name of s ("active", "timed_out", ...).
func (s RunStatus) String() string { return enumName(runStatusNames[:], int(s)) }

// Final reports whether s is a final status (cancelled or timed out).
func (s RunStatus) Final() bool { return s == RunCancelled || s == RunTimedOut }

// EffectStatus is the lifecycle of one effect (r, k).
type EffectStatus uint8

// The effect statuses, named as in the spec.
const (
	EffectAbsent EffectStatus = iota
	EffectHeld
	EffectReleased
	EffectAdmitted
	EffectCompleted
	EffectRejected
)

var effectStatusNames = [...]string{"absent", "held", "released", "admitted", "completed", "rejected"}

// String returns the contract's name of s ("held", "released", ...).
func (s EffectStatus) String() string { return enumName(effectStatusNames[:], int(s)) }

// Answer is the gate's answer to Admit.
type Answer uint8

// The answers to Admit.
const (
	AnswerAdmit     Answer = iota + 1 // perform the effect now; given once per (r, k)
	AnswerHeld                        // wait: an approval of the run is pending
	AnswerDuplicate                   // already admitted; the outcome is attached if known
	AnswerDenied                      // never perform it; Reason says why
)

var answerNames = [...]string{"", "admit", "held", "duplicate", "denied"}

// String returns the contract's name of a ("admit", "held", "duplicate", "denied").
func (a Answer) String() string { return enumName(answerNames[:], int(a)) }

// Reason says why an Admit was denied.
type Reason uint8

// The denial reasons.
const (
	ReasonNone Reason = iota
	ReasonCancelled
	ReasonTimedOut
	ReasonStaleEpoch
	ReasonRejected
	ReasonRetired
)

var reasonNames = [...]string{"", "cancelled", "timed_out", "stale_epoch", "rejected", "retired"}

// String returns the contract's name of r ("cancelled", "stale_epoch", ...).
func (r Reason) String() string { return enumName(reasonNames[:], int(r)) }

// Decision is an approver's decision on a pending approval.
type Decision uint8

// The decisions.
const (
	Approve Decision = iota + 1
	Reject
)

var decisionNames = [...]string{"", "approve", "reject"}

// String returns "approve" or "reject".
func (d Decision) String() string { return enumName(decisionNames[:], int(d)) }

// Outcome is what a completed effect reported.
type Outcome uint8

// The outcomes; OutcomeNone means not completed (yet).
const (
	OutcomeNone Outcome = iota
	OutcomeOK
	OutcomeFailed
)

var outcomeNames = [...]string{"", "ok", "failed"}

// String returns "ok", "failed", or "" for OutcomeNone.
func (o Outcome) String() string { return enumName(outcomeNames[:], int(o)) }

func enumName(names []string, i int) string {
	if i < 0 || i >= len(names) {
		return "invalid"
	}
	return names[i]
}

// ParseDecision maps a contract name to a Decision.
func ParseDecision(s string) (Decision, bool) { return parseEnum[Decision](decisionNames[:], s) }

// ParseOutcome maps "ok" or "failed" to an Outcome.
func ParseOutcome(s string) (Outcome, bool) {
	o, ok := parseEnum[Outcome](outcomeNames[:], s)
	return o, ok && o != OutcomeNone
}

func parseEnum[T ~uint8](names []string, s string) (T, bool) {
	for i, n := range names {
		if n != "" && n == s {
			return T(i), true
		}
	}
	return 0, false
}
