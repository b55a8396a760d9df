// Package server is the gate's network edge: it accepts connections on TCP and Unix
// sockets, authenticates each with a hello, decodes request lines (impl/proto), applies
// them to the admission core (impl/core) under one lock, makes every state change
// durable in the log (impl/wal) before any answer that depends on it leaves, and parks
// admits that asked to wait until a decision, cancel, fence or timeout of their run.
//
// Data flow of one request:
//
//	conn reader ──decode──▶ role check ──▶ lock{ core.Step; log.Append; re-ask parked } ──▶
//	conn writer ──wait until durable──▶ write the answer
//
// A reader with more input from its peer never waits for the disk: it hands each
// answer to the connection's writer with the log position the answer depends on, and
// goes on decoding, so that pipelined requests on a connection (and requests of all
// connections) share one fsync (group commit in impl/wal). When the peer has sent
// nothing more and nothing is queued (a request-response peer, the common case), the
// reader waits for the log and writes the answer itself (conn.send): the peer could
// not send its next request before that answer anyway, and the hand-off to the
// writer goroutine was one more wake-up per request. Answers may leave out of
// request order only for parked admits; clients match answers by id.
//
// Fail closed (F1): once an append or fsync fails, the server answers every request
// with `unavailable` and says why in its log and in that error; it never answers from
// state that is not on disk. Recovery is a restart, which replays the log.
//
// Why one lock and not one per run: the core keeps state per run, so the lock could be
// split, but a core step takes about a microsecond while an fsync takes hundreds; the
// lock is never held across I/O. Profiles of `soundgate bench` (SOUNDGATE_CPUPROFILE)
// show the server's time in system calls (socket reads and writes, fdatasync) and the
// scheduler, not in the lock.
package server
