// Package crashcheck is the crash harness of the durable gate: it runs the real
// `soundgate serve` binary under concurrent load, kills it with SIGKILL (at random
// moments, and at chosen points through the write-ahead log's failpoints: between
// write and fdatasync, or between fdatasync and the answer), restarts it on the same
// data directory, and checks that the crash lost nothing the gate had answered:
//
//   - D1: every acknowledged decision is still there (admitted, completed, rejected
//     effects; opened and cancelled runs);
//   - P3: no effect is admitted twice, across crashes (every `admit` answer of every
//     life is counted per effect);
//   - P2: a rejected effect stays rejected and is never admitted;
//   - P4: a cancelled run stays cancelled and admits nothing more.
//
// It prints the recovery time of every restart (process start until the socket
// accepts, and the log's own replay time as the server reports it).
//
// The harness builds the binary itself with the failpoints tag (servertest.Build). Run
// against `serve-unsafe` (built with the brokengate tag: a gate that answers before
// its log is written), it must report lost decisions: that is its negative control.
//
// The long run is the crashcheck command (docs/verify/wal.md).
package crashcheck
