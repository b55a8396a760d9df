//go:build !broken_wake

package node

// brokenWake, with the build tag broken_wake, is a deliberately broken wake path for
// the negative control of trace validation (internal/tracecheck): an admit that waited
// and is then denied (its run cancelled, fenced or timed out) is answered admit. The
// core's state stays right; only the answer the waiting caller gets is wrong, which
// is what only a check of the shell's answers against its steps sees. In a normal
// build it is a false constant and the compiler removes the broken branch.
const brokenWake = false
