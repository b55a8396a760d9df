// Package server is the gate's wire: it accepts connections on TCP and Unix sockets,
// authenticates each with a hello, decodes request lines (impl/proto), hands each
// request to the node (impl/node) and sends its answer once the log holds what the
// answer rests on.
//
// A connection is a session (session.go): its credential, its decoder and the answers
// waiting to be sent. A transport only moves bytes: it reads into the session and
// calls feed (the one read path), takes the answers and turns them into bytes with
// release (the one path that waits for the log: D1, and fail closed, F1), writes
// them, and calls forget once the connection is closed. Two transports exist:
//
//	loop (loop_linux.go, the default on Linux): one goroutine owns every socket
//	through epoll, as Redis's event loop does. Each pass reads every readable
//	connection once, waits once for the log for all the answers of the pass (group
//	commit: one fdatasync), and writes each connection's answers in one write.
//
//	goroutines (goroutines.go: other platforms, Config.Goroutines, and a socket the
//	loop cannot take): a reader goroutine feeds the session, a writer goroutine
//	releases and writes its answers.
//
// Answers may leave out of request order only for admits that waited; clients match
// answers by id. A peer that sends faster than it reads is paused (not read) while
// Limits.WriteQueueMax answers wait for it, and dropped after WriteTimeout without
// progress.
//
// ServeWeb (http.go) is the gate's HTTP listener, for operators and their tools:
// /metrics in the Prometheus text format (metrics.go: the server counts the admit
// answers release lets go, with an atomic add each; the rest is read when asked)
// and /healthz. It changes nothing in the gate.
//
// The server holds no gate state: the node decides, logs, parks waiting admits,
// fires deadlines and fails closed; its refusals become the wire's errors
// (unavailable, overloaded, shutting_down).
package server
