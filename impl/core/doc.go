// Package core is the gate's admission core: a pure, deterministic state machine.
//
// The core decides every request of the contract (docs/contract.md): Open, Admit,
// Decide, Complete, Cancel, Fence, Timeout and the read-only Status. It does no I/O,
// starts no goroutine, reads no clock and takes no lock: time comes in as an argument
// and the shell (impl/node) owns concurrency, durability and waiting. That makes the
// core cheap to test exhaustively against the model (model/, conformance/) and lets the
// write-ahead log replay it exactly: the same commands at the same times give the same
// state.
//
// Step is the one door: a Command in, a Reply out that says what the shell must do
// (persist, wake). The functions that implement the spec's actions are unexported and
// each says which action it is (//spec:action). Built with the tag invariants, Step
// also checks the core's invariants after every command (invariants.go).
//
// State is kept per run (type Run), so that a shell can partition runs across locks and
// independent runs never contend. Gate is the set of runs plus the limits that bound it.
//
// Every action is atomic: it either applies completely and returns its answer, or it
// returns a typed error (see errors.go) and changes nothing.
package core
