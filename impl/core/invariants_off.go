//go:build !invariants

package core

// checkInvariants: without the tag invariants, Step checks nothing after a command.
const checkInvariants = false
