//go:build broken_p4

package core

// See broken.go: this build breaks P4 on purpose.
const (
	brokenP1 = false
	brokenP2 = false
	brokenP3 = false
	brokenP4 = true
)
