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

// evalPanic carries an evaluation error through the evaluator's panics.
type evalPanic struct{ err *Error }

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
