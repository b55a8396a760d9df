// Package model is the gate of spec/tla/SoundGate.tla transcribed into plain Go, for
// obviousness and not for speed: link 3 of the verification chain.
//
// A State holds the same variables as the spec (runs, effects and the history that
// states P1-P4). Each TLA+ action is a function of the same name (Open, Admit, Decide,
// Complete, Cancel, Fence, Timeout) that checks the spec's conditions in the spec's
// order and returns the contract's answer for any input, enabled or not, together with
// the successor state; an answer that is an error leaves the state unchanged. Step
// applies an operation only where the spec's Next has a step (the answer is not an
// error, Fence below MaxEpoch, Timeout of an active run), which is what the explorer
// follows.
//
// Explore enumerates the reachable states for given constants by breadth-first search
// with an exact canonical key per state (State.Key, a compact encoding), optionally
// reduced by the symmetry of runs and keys, and counts states generated, distinct
// states, edges and depth as TLC does. Its graph, each state as its TLA+ text
// (State.Text, the encoding of docs/tla-graph.md), can be written in the same format
// as the TLA+ checker's dump, so the two can be compared state by state and edge by
// edge.
//
// Ops lists every operation with its parameters over the small domains of a Config,
// and Apply answers any of them: that is what the conformance suite drives against
// the implementation.
package model
