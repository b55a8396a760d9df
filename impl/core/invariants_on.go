//go:build invariants

package core

// checkInvariants: built with the tag invariants, Step checks the run it touched after
// every command (invariants.go).
const checkInvariants = true
