//go:build !failpoints

package wal

// failpoint is a no-op in normal builds; see failpoint_on.go (build tag failpoints).
func failpoint(string) {}

// Failpoints reports whether this binary was built with the failpoints tag.
const Failpoints = false
