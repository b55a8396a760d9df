//go:build broken_p1

package core

// See broken.go: this build breaks P1 on purpose.
const (
	brokenP1 = true
	brokenP2 = false
	brokenP3 = false
	brokenP4 = false
)
