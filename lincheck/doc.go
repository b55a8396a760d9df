// Package lincheck checks that the real soundgate server is linearizable: link 6 of
// the verification chain.
//
// A campaign (Run) starts the `soundgate serve` binary on a data directory, listening
// on TCP and on a Unix socket, and drives it with histories: in each, concurrent
// clients (each one request at a time, over TCP or the socket at random) send a
// seeded random mix of open, admit (gated or not, at the current, an older or a
// newer epoch), decide (approve, reject), complete (ok, failed), cancel, fence and
// status requests on a few runs, recording the call and return time of each. A
// nemesis kills the server with SIGKILL at random moments and restarts it on the same
// data directory, so that histories contain crash-restart cycles.
//
// Every history is checked with porcupine (github.com/anishathalye/porcupine),
// partitioned by run, against a sequential model that wraps the action functions of
// package model (model.Open, model.Admit, ...): Expect maps a model.Answer onto the
// fields of the wire's answer, and an operation is legal when the server answered
// exactly that. A request whose answer never arrived (the client's timeout, or the
// server killed while it was in flight) is an unknown outcome: its return time is
// past the end of the history and the model accepts any answer for it, so it takes
// effect at some point after its call or never.
//
// On a failure, Shrink reduces the history soundly (one run; the earliest failing
// truncation; operations that changed nothing dropped) and Report writes porcupine's
// HTML visualization of it. cmd/lincheck runs campaigns; the tests run a small one
// and the negative controls (servers built with -tags broken_p1, broken_p3, and the
// brokengate serve-unsafe command that acknowledges before its log is written), which
// the check must find.
//
// Not covered: run deadlines (every run is opened without one, so no Timeout happens)
// and parked admits (every admit is sent with wait 0): a waited admit can take effect
// in two steps (held, later admitted) and is not a single linearizable operation.
package lincheck
