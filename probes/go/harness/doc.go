// Package harness is the shared machinery of the Go barrier probes: the event
// log that stands for the world (an effect is an append at its commit point),
// the violation rules B1-B4 fixed before any probe runs, the environment a
// probe runs in (unmodified, or mediated through a running gate) and the
// machine-readable result of one probe run.
//
// A probe never decides its verdict: it returns, and the rule named by its
// property is applied to its event log afterwards (Apply).
package harness
