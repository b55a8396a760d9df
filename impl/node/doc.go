// Package node is the one door into the admission core (impl/core): it owns the
// gate's state and every change to it, and is the only caller of core.Gate.Step
// outside the replay of the log.
//
// A node holds the core, the write-ahead log it appends to, the fail-closed state,
// the admits that wait for a decision, the run deadlines and the snapshots, and hands
// its answers to whoever asked (the server, the egress proxy's local mode, tests)
// as values and callbacks. It never reads a socket and never imports the wire codec.
//
// The order that makes the gate durable (D1) is written once, here:
//
//	Apply ──lock──▶ core.Step ──Persist──▶ log.Append ──Wake──▶ ask the run's waiting admits again ──unlock──▶ Answer{After: last LSN}
//	whoever sends the answer ──▶ Durable(After) ──▶ send
//
// Every answer carries the log position it rests on (Answer.After); Durable returns
// once the log holds it, or fails the node closed if the log cannot: then every
// later request is refused (ErrUnavailable) until a restart replays the log.
//
// Snapshots are encoded off the node's lock, from a core.Cut: begun under the lock at
// the last record appended, copied a piece at a time under it (the changes made
// meanwhile save what they change first), and paced to a fifth of a CPU; encoding
// the state, which takes time that grows with it, never stops an admit, and costs
// nothing between snapshots.
package node
