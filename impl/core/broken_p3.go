//go:build broken_p3

package core

// See broken.go: this build breaks P3 on purpose.
const (
	brokenP1 = false
	brokenP2 = false
	brokenP3 = true
	brokenP4 = false
)
