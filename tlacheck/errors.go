package tlacheck

import (
	"errors"
	"fmt"
)

// Pos is a position in a source file: 1-based line and column.
type Pos struct {
	Line, Col int
}

// String renders the position as line:col.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Error kinds; test them with errors.Is.
var (
	// ErrParse reports a syntax error in a TLA+ module.
	ErrParse = errors.New("soundgate/tlacheck: parse error")
	// ErrSemantic reports an undefined or ill-used name, or a wrong arity.
	ErrSemantic = errors.New("soundgate/tlacheck: semantic error")
	// ErrUnsupported reports a TLA+ construct outside the supported subset.
	ErrUnsupported = errors.New("soundgate/tlacheck: unsupported construct")
	// ErrConfig reports a malformed or inconsistent .cfg file.
	ErrConfig = errors.New("soundgate/tlacheck: config error")
	// ErrEval reports an evaluation error (type mismatch, undefined value, ...).
	ErrEval = errors.New("soundgate/tlacheck: evaluation error")
	// ErrAssume reports an ASSUME that evaluated to FALSE.
	ErrAssume = errors.New("soundgate/tlacheck: assumption violated")
	// ErrLimit reports that a named limit (states, trace length) was exceeded.
	ErrLimit = errors.New("soundgate/tlacheck: limit exceeded")
)

// Error is a positioned error of one of the kinds above.
type Error struct {
	Kind error  // one of the Err* variables
	File string // source file, may be empty
	Pos  Pos    // zero when unknown
	Msg  string
}

// Error renders file:line:col: kind: message.
func (e *Error) Error() string {
	loc := e.File
	if e.Pos.Line > 0 {
		if loc != "" {
			loc += ":"
		}
		loc += e.Pos.String()
	}
	if loc != "" {
		return fmt.Sprintf("%s: %v: %s", loc, e.Kind, e.Msg)
	}
	return fmt.Sprintf("%v: %s", e.Kind, e.Msg)
}

// Unwrap returns the kind, so errors.Is(err, ErrParse) works.
func (e *Error) Unwrap() error { return e.Kind }

func errAt(kind error, p Pos, format string, args ...any) *Error {
	return &Error{Kind: kind, Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// MaxRecursionDepth bounds how deeply calls of RECURSIVE operators may nest. A
// recursion over the finite values of a model is as deep as a set or a sequence is
// long (spec/tla uses none, tlacheck/testdata three levels at most); one that goes
// deeper than this has almost surely no base case for its arguments. Ten thousand
// levels of tlacheck/testdata/NoBaseCase.tla take under 4 MB of Go stack in an
// expression and under 32 MB in an action, far from the runtime's 1 GB limit.
const MaxRecursionDepth = 10000

// RecursionError reports calls of a RECURSIVE operator nested deeper than
// MaxRecursionDepth. It wraps ErrEval.
type RecursionError struct {
	Op   string // the operator called one level too deep
	File string // source file, may be empty
	Pos  Pos    // that call
}

// Error renders file:line:col: evaluation error: the operator and the limit.
func (e *RecursionError) Error() string {
	msg := fmt.Sprintf("RECURSIVE operator %s nested more than %d calls deep (no base case reached?)", e.Op, MaxRecursionDepth)
	return (&Error{Kind: ErrEval, File: e.File, Pos: e.Pos, Msg: msg}).Error()
}

// Unwrap returns ErrEval, so errors.Is(err, ErrEval) holds.
func (e *RecursionError) Unwrap() error { return ErrEval }

// evalPanic carries an evaluation error (*Error or *RecursionError) through the
// evaluator's panics.
type evalPanic struct{ err error }

func throw(p Pos, format string, args ...any) {
	panic(evalPanic{errAt(ErrEval, p, format, args...)})
}

// catch converts an evaluator panic into an error; other panics propagate.
func catch(err *error) {
	if r := recover(); r != nil {
		if ep, ok := r.(evalPanic); ok {
			*err = ep.err
			return
		}
		panic(r)
	}
}
