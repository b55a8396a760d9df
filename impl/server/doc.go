// Package server is the gate's network edge: it accepts connections on TCP and Unix
// sockets, authenticates each with a hello, decodes request lines (impl/proto), applies
// them to the admission core (impl/core) under one lock, makes every state change
// durable in the log (impl/wal) before any answer that depends on it leaves, and parks
// admits that asked to wait until a decision, cancel, fence or timeout of their run.
//
// Data flow of one request, on the event loop (Linux, the default):
//
//	epoll: readable ──read once──▶ decode ──▶ role check ──▶ lock{ core.Step; log.Append; re-ask parked } ──▶
//	end of the pass: one wait until the log is durable up to the pass's last record ──▶ one write per connection
//
// One goroutine (loop_linux.go) owns every socket, as Redis's event loop does. Each
// pass reads every readable connection once, applies the requests it finds, then
// waits once for the log (group commit: the whole pass shares one fdatasync) and
// writes each connection's answers in one write. Per request that is one read and one
// write system call, and no goroutine is woken. A peer that sends faster than it
// reads is paused (not read) while WriteQueueMax answers or 256 KiB wait for it, and
// dropped after WriteTimeout without progress.
//
// The goroutine model (Config.Goroutines, `serve --io goroutines`, and every platform
// without epoll) gives each connection a reader and a writer goroutine. A reader with
// more input never waits for the disk: it hands each answer to the writer with the log
// position the answer depends on and goes on decoding. When the peer has sent nothing
// more (a request-response peer), the reader waits for the log and writes the answer
// itself (conn.send). It costs about twice the CPU per request of the loop: a read
// that finds nothing (EAGAIN) before every sleep in Go's poller, a wake-up per answer,
// and threads handed sockets and syscalls (docs/verify/wal.md has the figures).
//
// In both, answers may leave out of request order only for parked admits; clients
// match answers by id. handle, push and the parked admits are shared.
//
// Fail closed (F1): once an append or fsync fails, the server answers every request
// with `unavailable` and says why in its log and in that error; it never answers from
// state that is not on disk. Recovery is a restart, which replays the log.
//
// Why one lock and not one per run: the core keeps state per run, so the lock could be
// split, but a core step takes about a microsecond while an fsync takes hundreds; the
// lock is never held across I/O. Profiles of `soundgate bench` (SOUNDGATE_CPUPROFILE)
// show the server's time in system calls (socket reads and writes, fdatasync) and, in
// the goroutine model, the scheduler; not in the lock.
package server
