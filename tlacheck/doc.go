// Package tlacheck is the project's TLA+ model checker, for the subset of TLA+ that
// soundgate's specs use.
//
// It parses a TLA+ module with a hand-written parser (the bullet-list column rule for
// /\ and \/, operator precedence, nested comments), resolves names, evaluates
// expressions over canonical values, generates successor states from the next-state
// action (primed assignments, x' \in S, UNCHANGED, branching disjunctions and \E), and
// explores the reachable states breadth first. By default states are stored exactly,
// by their canonical byte encoding, so two distinct states are never confused; the
// fingerprint mode (Options.FingerprintBytes) keeps 64-bit fingerprints instead, and
// the states waiting on the queue compressed, in memory up to a budget and in a file
// beyond it, and prints TLC's estimate of the chance of a collision.
//
// A run is configured by a TLC .cfg file (CONSTANT(S), INIT/NEXT or SPECIFICATION,
// INVARIANT(S), CONSTRAINT, SYMMETRY, CHECK_DEADLOCK) and reports TLC's figures:
// states generated, distinct states, depth. A violated invariant yields the shortest
// trace from an initial state, naming each action. Anything outside the supported
// subset is rejected with an error that names the construct and its position; see
// docs/tla-subset.md.
//
// Besides exhaustive checking the package offers an inductive-invariant check
// (CheckInductive) and the reachable state graph as values (Spec.Graph), which
// docs/tla-graph.md describes.
package tlacheck
