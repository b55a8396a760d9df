package core

import "errors"

// Error is a typed refusal of the core. Its Code is the contract's name of the error,
// the same string that travels on the wire as error.data.type. Compare with errors.Is
// against the exported variables below.
type Error struct {
	Code string
	msg  string
}

func (e *Error) Error() string { return "soundgate/core: " + e.msg }

// Is makes errors.Is match on the code, so wrapped or re-created errors compare equal.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

func newError(code, msg string) *Error { return &Error{Code: code, msg: msg} }

// The core's errors. Each one leaves the state unchanged.
var (
	// ErrUnknownRun: the run was never opened (and no cancel left a tombstone).
	ErrUnknownRun = newError("unknown_run", "unknown run")
	// ErrBadEpoch: the caller presented an epoch above the run's; only the gate issues epochs.
	ErrBadEpoch = newError("bad_epoch", "epoch above the run's current epoch")
	// ErrNotPending: a decision on a key whose approval is not open, and not a repeat.
	ErrNotPending = newError("not_pending", "no pending approval for this key")
	// ErrNotAdmitted: complete of an effect that was never admitted.
	ErrNotAdmitted = newError("not_admitted", "effect was not admitted")
	// ErrConflict: complete with an outcome other than the one already recorded.
	ErrConflict = newError("conflict", "effect already completed with another outcome")
	// ErrRunFinal: fence of a cancelled or timed-out run.
	ErrRunFinal = newError("run_final", "run is cancelled or timed out")
	// ErrRunRetired: open, decide, complete or fence of a retired run.
	ErrRunRetired = newError("run_retired", "run is retired")
	// ErrNotFinished: retire of a run with an approval pending or an effect held,
	// released or admitted and not completed.
	ErrNotFinished = newError("not_finished", "run is not finished")
	// ErrTooManyRetired: Limits.RetiredMax runs are retired.
	ErrTooManyRetired = newError("too_many_retired", "limit reached: retired runs")
	// ErrInvalid: an argument is malformed (empty id, unknown decision or outcome, epoch < 1).
	ErrInvalid = newError("invalid_argument", "invalid argument")
	// ErrTooManyRuns: Limits.RunsMax runs exist.
	ErrTooManyRuns = newError("too_many_runs", "limit reached: runs")
	// ErrTooManyKeys: the run has Limits.KeysPerRunMax effects.
	ErrTooManyKeys = newError("too_many_keys", "limit reached: keys per run")
	// ErrTooManyPending: the run has Limits.PendingPerRunMax open approvals.
	ErrTooManyPending = newError("too_many_pending", "limit reached: pending approvals per run")
	// ErrRunTooLong: the run id exceeds Limits.RunBytesMax.
	ErrRunTooLong = newError("run_too_long", "limit reached: run id bytes")
	// ErrKeyTooLong: the key exceeds Limits.KeyBytesMax.
	ErrKeyTooLong = newError("key_too_long", "limit reached: key bytes")
	// ErrStateFull: the state would pass Limits.StateBytesMax.
	ErrStateFull = newError("state_full", "limit reached: state bytes")
	// ErrResultTooLong: the result exceeds Limits.ResultBytesMax.
	ErrResultTooLong = newError("result_too_long", "limit reached: result bytes")
)

// Errors lists every error the core returns, for documentation and exhaustive tests.
var Errors = []*Error{
	ErrUnknownRun, ErrBadEpoch, ErrNotPending, ErrNotAdmitted, ErrConflict, ErrRunFinal,
	ErrRunRetired, ErrNotFinished, ErrTooManyRetired, ErrInvalid, ErrTooManyRuns, ErrTooManyKeys, ErrTooManyPending, ErrRunTooLong,
	ErrKeyTooLong, ErrResultTooLong, ErrStateFull,
}
