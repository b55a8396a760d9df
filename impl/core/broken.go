//go:build !broken_p1 && !broken_p2 && !broken_p3 && !broken_p4

package core

// Deliberately broken variants of the core, for the negative controls of the
// verification suite (conformance, linearizability, fuzzing): each build tag below
// breaks exactly one property, and the suite must catch it. In a normal build every
// switch is a false constant and the compiler removes the broken branches.
//
//	broken_p1: a released effect is admitted while a newer approval is pending
//	broken_p2: a rejection leaves the held non-gated siblings held (they are released later)
//	broken_p3: a completed effect is admitted again on replay
//	broken_p4: a stale epoch is not denied
const (
	brokenP1 = false
	brokenP2 = false
	brokenP3 = false
	brokenP4 = false
)
