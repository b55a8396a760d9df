// Package conformance holds the model (model/) and the implementation (impl/core, and
// impl/server over the wire) to the same answers: link 4 of the verification chain.
//
// Both sides receive the same operations; after every operation the suite compares the
// answers and the implementation's state, mapped to a model state by the abstraction
// function Abstract, with the model's state (history variables aside: the
// implementation keeps no history). Three modes drive them:
//
//   - exhaustive: every operation of model.OpsWide from every reachable model state of
//     a small configuration, so every edge of the model's graph (and every refused
//     operation) is exercised on the real core;
//   - randomized: property-based traces (github.com/leanovate/gopter), seeded, shrunk to
//     a minimal failing trace, with weights that make cancels, fences, rejections,
//     timeouts and duplicates common;
//   - over the wire: the same random traces through a real server and the Go client.
//
// Every compared operation is counted; each run prints the count, the divergences and
// how often each action and each answer was reached, and fails if one was not.
package conformance
