package mutation

import (
	"fmt"
	"time"
)

// Operator names a family of mutations. The names appear in mutant ids, in the report
// and in the suppression file, so they never change once released.
type Operator string

// The operators. Each one's doc says what it changes; operators.go implements them.
const (
	// OpNegateCond negates a comparison (== and !=, < and >=, > and <=) or the
	// condition of an if or for statement that is not a comparison.
	OpNegateCond Operator = "negate-cond"
	// OpBoundary moves a boundary: < and <=, > and >= swap.
	OpBoundary Operator = "boundary"
	// OpBoolean swaps && and ||, and drops a logical not.
	OpBoolean Operator = "boolean"
	// OpArith swaps arithmetic and bitwise operators (+ -, * /, % *, & |, ^ &, << >>,
	// &^ &), their assignment forms, and ++ with --.
	OpArith Operator = "arith"
	// OpConstant changes an integer literal n to n+1 and swaps true and false.
	OpConstant Operator = "constant"
	// OpRemoveStmt removes an assignment or an increment statement.
	OpRemoveStmt Operator = "remove-stmt"
	// OpRemoveCall removes a call statement whose results are discarded.
	OpRemoveCall Operator = "remove-call"
	// OpEarlyReturn returns zero values at the top of a function.
	OpEarlyReturn Operator = "early-return"
	// OpMapWrite removes a write to a map (m[k] = v, m[k] op= v, delete(m, k)).
	OpMapWrite Operator = "map-write"
	// OpSliceWrite removes a write to a slice element or an append assignment.
	OpSliceWrite Operator = "slice-write"
	// OpUnlockDrop removes an Unlock or RUnlock of a sync mutex (also a deferred one).
	OpUnlockDrop Operator = "unlock-drop"
	// OpSyncDrop removes a Sync, Fsync or Fdatasync call (a lost fsync); in an
	// expression its error result becomes nil.
	OpSyncDrop Operator = "sync-drop"
	// OpWaitDrop removes a Wait of a sync.WaitGroup, sync.Cond or an error group.
	OpWaitDrop Operator = "wait-drop"
)

// Operators lists every operator in report order.
var Operators = []Operator{
	OpNegateCond, OpBoundary, OpBoolean, OpArith, OpConstant, OpRemoveStmt, OpRemoveCall,
	OpEarlyReturn, OpMapWrite, OpSliceWrite, OpUnlockDrop, OpSyncDrop, OpWaitDrop,
}

// Status is the outcome of one mutant.
type Status string

// The outcomes.
const (
	// StatusPending is a mutant not yet run.
	StatusPending Status = "pending"
	// StatusKilled is a mutant some test failed on (KilledBy names the test).
	StatusKilled Status = "killed"
	// StatusSurvived is a mutant every test passed on.
	StatusSurvived Status = "survived"
	// StatusTimedOut is a mutant whose test binary exceeded its timeout twice.
	StatusTimedOut Status = "timed_out"
	// StatusNotViable is a mutant the go command could not build (Message has why).
	StatusNotViable Status = "not_viable"
	// StatusEquivalent is a survivor whose compiled package is identical to the
	// original's: no test can kill it.
	StatusEquivalent Status = "equivalent"
	// StatusSuppressed is a mutant listed in the suppression file (Message has the
	// reviewed reason); it is not run.
	StatusSuppressed Status = "suppressed"
)

// Mutant is one change to one file of a target package.
type Mutant struct {
	// ID is the stable id: "relfile:Func:operator:hash", see package doc.
	ID string `json:"id"`
	// Operator is the mutation family.
	Operator Operator `json:"operator"`
	// Package is the import path of the mutated package.
	Package string `json:"package"`
	// File is the module-relative path of the mutated file.
	File string `json:"file"`
	// Func is the enclosing function ("Type.Method" for methods, "" at package level).
	Func string `json:"func"`
	// Line and Col locate the change (1-based); EndLine is the last line it touches.
	Line    int `json:"line"`
	Col     int `json:"col"`
	EndLine int `json:"end_line"`
	// Original and Replacement are the source text before and after the change.
	Original    string `json:"original"`
	Replacement string `json:"replacement"`

	// Status is the outcome; KilledBy names the failing test of a killed mutant
	// ("pkg.TestName"); Message holds the compiler's message of a not viable mutant,
	// the reason of a suppressed one, or detail on a timeout.
	Status   Status `json:"status"`
	KilledBy string `json:"killed_by,omitempty"`
	Message  string `json:"message,omitempty"`
	// Diff is a unified diff of the change, for reviewers of survivors.
	Diff string `json:"diff,omitempty"`
	// Runs is how many times the tests ran on the mutant (2 after a timeout re-run).
	Runs int `json:"runs"`
	// Seconds is the wall time spent on the mutant, builds included.
	Seconds float64 `json:"seconds"`

	// Mode says how the mutant was tested: "schema" (switched on at run time in one
	// shared test binary built with go test -overlay) or "overlay" (its own go test
	// -overlay run). Survivors of a schema run are always re-run as "overlay".
	Mode string `json:"mode,omitempty"`

	absFile   string
	src       []byte // absFile as the generator read it: the bytes every offset refers to
	hostStart int    // range of the expression or statement a schema wraps
	hostEnd   int
	hostKind  hostKind
	hostType  string // spelled result type of an expression host
	schemaID  int    // run-time switch number in the schema; 0: not in a schema
	start     int    // byte offset of the change in the original file
	end       int
	spanStart int  // first line of the code this mutant belongs to, for --diff
	inBody    bool // the change is inside a function body (object-code comparison is sound)
	duration  time.Duration
}

// Position returns "file:line:col".
func (m *Mutant) Position() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

// Apply returns the content of the mutated file given the original content.
func (m *Mutant) Apply(src []byte) []byte {
	out := make([]byte, 0, len(src)-(m.end-m.start)+len(m.Replacement))
	out = append(out, src[:m.start]...)
	out = append(out, m.Replacement...)
	out = append(out, src[m.end:]...)
	return out
}
