//go:build broken_p2

package core

// See broken.go: this build breaks P2 on purpose.
const (
	brokenP1 = false
	brokenP2 = true
	brokenP3 = false
	brokenP4 = false
)
