//go:build linux

package server

import (
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/netfd"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// loop is the server's event loop on Linux: one goroutine owns every connection's
// socket. Each pass it reads every readable connection once (epoll, level-triggered)
// and feeds its session, polls a few times more without waiting for requests that
// arrived meanwhile (gatherPolls), waits once for the log to make all of their
// answers durable, and then writes each connection's answers in one write. This is
// how Redis serves `appendfsync always`, and for the same reason: per request it
// costs one read and one write, with no goroutine woken and no thread handed a
// socket (docs/server.md compares it with the goroutine transport).
//
// Answers queued by other goroutines (a waiting admit answered when its wait runs
// out, Shutdown) reach the loop through kick and a wake-up pipe.
type loop struct {
	s    *Server
	ep   int    // the epoll descriptor
	wake [2]int // a non-blocking pipe: a byte in it wakes the loop

	mu       sync.Mutex
	added    []*lconn // handed over by admit, not registered yet
	kicked   []*lconn // with answers queued by push
	awake    bool     // the loop looks at added and kicked before it sleeps again
	stopping bool     // Shutdown began: read nothing more, answer, close, leave
	abort    bool     // Shutdown's context ended: close every connection now
	exited   bool

	// The loop goroutine's own.
	conns    map[int32]*lconn
	ready    []*lconn // to flush this pass
	events   []syscall.EpollEvent
	deadline time.Time // the earliest hello, idle or write deadline of a connection (zero: none)
}

// lconn is a connection of the loop; all but kicked (lp.mu) belong to the loop goroutine.
type lconn struct {
	ss         *session
	fd         int
	src        netfd.Source // the socket, read once per readiness
	kicked     bool         // in lp.kicked
	ready      bool         // in lp.ready
	readDone   bool         // nothing more is read (EOF, quit, hello deadline, shutdown)
	paused     bool         // not read until its answers are written (back-pressure)
	closeAfter bool         // close once out is sent
	closed     bool
	events     uint32      // what epoll reports for it
	pend       []answer    // taken from the session, waiting for the log
	out        []byte      // encoded answers; out[outOff:] not yet sent
	outOff     int         //
	helloBy    time.Time   // closed if no hello by then
	stalled    time.Time   // when a write last found the socket full (zero: not stalled)
	backlogged func() bool // lp.backlogged(lc), made once
}

// loopAvailable: this platform has the event loop.
const loopAvailable = true

// newLoop starts the event loop of s.
func newLoop(s *Server) (*loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	lp := &loop{s: s, ep: ep, conns: map[int32]*lconn{}, events: make([]syscall.EpollEvent, 256)}
	if err := syscall.Pipe2(lp.wake[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(ep)
		return nil, err
	}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, lp.wake[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lp.wake[0])}); err != nil {
		lp.closeFDs()
		return nil, err
	}
	lp.awake = true // until its first look at added and kicked
	s.wg.Add(1)
	go lp.run()
	return lp, nil
}

func (lp *loop) closeFDs() {
	syscall.Close(lp.ep)
	syscall.Close(lp.wake[0])
	syscall.Close(lp.wake[1])
}

// wakeLocked makes the loop look at its queues soon. Called with lp.mu held.
func (lp *loop) wakeLocked() {
	if lp.awake {
		return // it will look before it sleeps
	}
	lp.awake = true
	syscall.Write(lp.wake[1], []byte{1}) // EAGAIN: the pipe is full, a wake-up is pending anyway
}

// kick tells the loop that lc has answers queued. Any goroutine may call it.
func (lp *loop) kick(lc *lconn) {
	lp.mu.Lock()
	if !lc.kicked {
		lc.kicked = true
		lp.kicked = append(lp.kicked, lc)
	}
	lp.wakeLocked()
	lp.mu.Unlock()
}

// add hands the loop a session accepted on nc. It takes the socket from nc
// (netfd.Take): from now on only the loop reads, writes and closes it. It reports
// false if the socket cannot be taken (nc is then untouched).
func (lp *loop) add(ss *session, nc net.Conn) bool {
	fd, err := netfd.Take(nc)
	if err != nil {
		return false
	}
	lc := &lconn{ss: ss, fd: fd, src: netfd.Source{FD: fd, Empty: proto.ErrWouldBlock}}
	lc.backlogged = func() bool { return lp.backlogged(lc) }
	ss.rd = proto.NewReader(&lc.src)
	ss.kick = func() { lp.kick(lc) }
	ss.sending = func() bool { return len(lc.pend) > 0 || lc.outOff < len(lc.out) }
	ss.onHello = func() { // on the loop goroutine (feed): the idle rule's first look
		if _, next := ss.idleCheck(time.Now()); !next.IsZero() {
			lp.earliest(next)
		}
	}
	lp.mu.Lock()
	if lp.exited {
		lp.mu.Unlock()
		syscall.Close(fd)
		lp.s.forget(ss)
		return true
	}
	lp.added = append(lp.added, lc)
	lp.wakeLocked()
	lp.mu.Unlock()
	return true
}

// stop makes the loop read nothing more, answer what it read and close every
// connection; abort closes them at once.
func (lp *loop) stop(abort bool) {
	lp.mu.Lock()
	lp.stopping = true
	lp.abort = lp.abort || abort
	lp.wakeLocked()
	lp.mu.Unlock()
}

func (lp *loop) run() {
	defer lp.s.wg.Done()
	defer lp.closeFDs()
	for {
		if exit := lp.settle(); exit {
			return
		}
		timeout := -1
		if !lp.deadline.IsZero() {
			timeout = max(int(time.Until(lp.deadline)/time.Millisecond)+1, 0)
		}
		n, err := syscall.EpollWait(lp.ep, lp.events, timeout)
		if err != nil && err != syscall.EINTR {
			// The loop cannot go on without epoll. Fail closed: every connection is
			// closed, every request in flight stays unanswered.
			lp.s.log.Error("event loop: epoll_wait failed; closing every connection", "err", err)
			lp.abortAll(nil)
			return
		}
		lp.mu.Lock()
		lp.awake = true
		lp.mu.Unlock()
		for gather := 0; n > 0; gather++ {
			lp.handleEvents(n)
			if gather == gatherPolls {
				break
			}
			// Requests that arrived while these were applied join the same
			// fdatasync: a poll that does not wait, no timer.
			if n, err = syscall.EpollWait(lp.ep, lp.events, 0); err != nil {
				n = 0
			}
		}
		if !lp.deadline.IsZero() && !time.Now().Before(lp.deadline) {
			lp.expire()
		}
	}
}

// gatherPolls bounds the polls that do not wait in one pass, so that under a constant
// stream of requests a pass still ends and its answers leave.
const gatherPolls = 4

// handleEvents reads the connections of the first n events and feeds their sessions.
func (lp *loop) handleEvents(n int) {
	for i := 0; i < n; i++ {
		ev := lp.events[i]
		if int(ev.Fd) == lp.wake[0] {
			var b [64]byte
			for {
				if m, _ := syscall.Read(lp.wake[0], b[:]); m <= 0 {
					break
				}
			}
			continue
		}
		lc := lp.conns[ev.Fd]
		if lc == nil {
			continue
		}
		if ev.Events&syscall.EPOLLOUT != 0 {
			lp.markReady(lc)
		}
		if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR|syscall.EPOLLRDHUP) != 0 {
			if lc.readDone {
				lp.markReady(lc) // the peer hung up: the write finds out
			} else {
				lc.src.Readable = true
				lp.feed(lc)
			}
		}
	}
}

// settle registers new connections and flushes every connection with answers, until
// nothing is left to do; then it lets other goroutines wake the loop again. It
// reports whether the loop is to exit: Shutdown's deadline passed, or it is stopping
// and no connection is left.
//
// The loop may sleep only if, in the same hold of mu that clears awake, nothing new
// is queued and stopping and abort are as it last acted on them: a stop or a kick
// that came while it worked saw awake set, did not write to the pipe, and counts on
// this check.
func (lp *loop) settle() (exit bool) {
	for {
		lp.mu.Lock()
		added, kicked := lp.added, lp.kicked
		lp.added, lp.kicked = nil, nil
		for _, lc := range kicked {
			lc.kicked = false
		}
		stopping, abort := lp.stopping, lp.abort
		lp.mu.Unlock()
		if abort {
			lp.abortAll(added)
			return true
		}
		for _, lc := range added {
			lp.register(lc)
		}
		for _, lc := range kicked {
			lp.markReady(lc)
		}
		if stopping {
			lp.stopAll()
		}
		if len(lp.ready) > 0 {
			lp.flush()
			continue
		}
		lp.mu.Lock()
		if len(lp.added) > 0 || len(lp.kicked) > 0 || lp.stopping != stopping || lp.abort != abort {
			lp.mu.Unlock()
			continue
		}
		if stopping && len(lp.conns) == 0 {
			lp.exited = true
			lp.mu.Unlock()
			return true
		}
		lp.awake = false // from now on a kick or a stop writes to the pipe
		lp.mu.Unlock()
		return false
	}
}

func (lp *loop) register(lc *lconn) {
	lc.events = syscall.EPOLLIN | syscall.EPOLLRDHUP
	if err := syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_ADD, lc.fd, &syscall.EpollEvent{Events: lc.events, Fd: int32(lc.fd)}); err != nil {
		lp.s.log.Warn("event loop: cannot watch a connection; closing it", "remote", lc.ss.remote, "err", err)
		syscall.Close(lc.fd)
		lc.closed = true
		lp.s.forget(lc.ss)
		return
	}
	lp.conns[int32(lc.fd)] = lc
	lc.helloBy = time.Now().Add(lp.s.cfg.Limits.HelloTimeout)
	lp.earliest(lc.helloBy)
}

// earliest lowers the loop's next deadline to t.
func (lp *loop) earliest(t time.Time) {
	if lp.deadline.IsZero() || t.Before(lp.deadline) {
		lp.deadline = t
	}
}

func (lp *loop) markReady(lc *lconn) {
	if !lc.ready && !lc.closed {
		lc.ready = true
		lp.ready = append(lp.ready, lc)
	}
}

// feed applies the requests lc has sent, reading its socket at most once, until it
// has none buffered, or too many answers wait to be written (back-pressure: the loop
// stops reading lc until they are).
func (lp *loop) feed(lc *lconn) {
	if lc.readDone || lc.paused {
		return
	}
	now := time.Now()
	lc.ss.touch(now)
	if weakened.hello && lc.ss.cred == nil {
		lc.helloBy = now.Add(lp.s.cfg.Limits.HelloTimeout)
		lp.earliest(lc.helloBy)
	}
	switch lc.ss.feed(lc.backlogged) {
	case readPaused:
		lc.paused = true
		lp.interest(lc)
	case readDone:
		lp.readerDone(lc)
	}
}

// outBytesMax is how many written-but-unsent answer bytes make the loop stop reading
// a connection until its peer reads them.
const outBytesMax = 256 << 10

func (lp *loop) backlogged(lc *lconn) bool {
	return len(lc.out)-lc.outOff >= outBytesMax || lc.ss.queued()+len(lc.pend) >= lp.s.cfg.Limits.WriteQueueMax
}

// readerDone: lc sends nothing more (EOF, an error, a quit, a hello deadline or
// shutdown): its waiting admits end, and it closes once its queued answers are written.
func (lp *loop) readerDone(lc *lconn) {
	if lc.readDone {
		return
	}
	lc.readDone = true
	lp.s.node.Leave(lc.ss.party)
	lp.interest(lc)
	lp.markReady(lc)
}

// interest sets what epoll reports for lc: readable while it is read, writable while
// answers wait for room in the socket.
func (lp *loop) interest(lc *lconn) {
	var ev uint32
	if !lc.readDone && !lc.paused {
		ev |= syscall.EPOLLIN | syscall.EPOLLRDHUP
	}
	if lc.outOff < len(lc.out) {
		ev |= syscall.EPOLLOUT
	}
	if ev == lc.events {
		return
	}
	lc.events = ev
	syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_MOD, lc.fd, &syscall.EpollEvent{Events: ev, Fd: int32(lc.fd)})
}

// flush sends the answers of every ready connection: one wait for the log covers
// them all (group commit: the pass shares one fdatasync), then release and one write
// per connection.
func (lp *loop) flush() {
	ready := lp.ready
	lp.ready = nil
	var upto wal.LSN
	for _, lc := range ready {
		lc.pend = lc.ss.take(lc.pend)
		for _, a := range lc.pend {
			upto = max(upto, a.after)
		}
	}
	lp.s.node.Durable(upto) // release checks every answer again; this is the pass's one wait
	for _, lc := range ready {
		lc.ready = false
		if !lc.closed {
			var closeAfter bool
			lc.out, closeAfter = lp.s.release(lc.out, lc.pend)
			lc.closeAfter = lc.closeAfter || closeAfter
		}
		clear(lc.pend)
		lc.pend = lc.pend[:0]
		if !lc.closed {
			lp.write(lc)
		}
	}
}

// write sends what lc has to send, as far as the socket takes it.
func (lp *loop) write(lc *lconn) {
	for lc.outOff < len(lc.out) {
		n, err := syscall.Write(lc.fd, lc.out[lc.outOff:])
		if n > 0 {
			lc.outOff += n
			lc.stalled = time.Time{}
		}
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			lc.ss.unsent.Store(int64(len(lc.out) - lc.outOff)) // a watch's room
			if lc.stalled.IsZero() {
				lc.stalled = time.Now()
				lp.earliest(lc.stalled.Add(lp.s.cfg.Limits.WriteTimeout))
			}
			lp.interest(lc)
			return
		}
		if err != nil {
			lp.closeConn(lc) // the peer is gone
			return
		}
	}
	if len(lc.out) > 0 {
		lc.ss.touch(time.Now()) // answers written: activity, for the idle rule
		lc.ss.unsent.Store(0)
	}
	if cap(lc.out) > 64<<10 {
		lc.out = nil // a burst's buffer is not kept for an idle connection
	}
	lc.out, lc.outOff = lc.out[:0], 0
	switch {
	case lc.closeAfter:
		lp.closeConn(lc)
		return
	case lc.readDone:
		// Once reading is done no admit of the session waits (Leave): an empty
		// outbox is the end.
		if lc.ss.queued() == 0 {
			lp.closeConn(lc)
			return
		}
	case lc.paused:
		lc.paused = false
		lp.feed(lc) // the lines it holds, then the socket
	}
	lp.interest(lc)
}

// expire closes connections past their deadlines: no hello within HelloTimeout, an
// agent's idle for IdleTimeout (the idle rule), or answers unread for WriteTimeout.
func (lp *loop) expire() {
	now := time.Now()
	lp.deadline = time.Time{}
	for _, lc := range lp.conns {
		if !lc.readDone {
			lp.expireReading(lc, now)
		}
		if !lc.stalled.IsZero() {
			if by := lc.stalled.Add(lp.s.cfg.Limits.WriteTimeout); !now.Before(by) {
				lp.closeConn(lc)
			} else {
				lp.earliest(by)
			}
		}
	}
}

// expireReading stops reading lc, which is still read, if it has not said hello by
// helloBy or the idle rule finds it expired; else it keeps its next deadline.
func (lp *loop) expireReading(lc *lconn, now time.Time) {
	next := lc.helloBy
	if lc.ss.cred != nil {
		var expired bool
		if expired, next = lc.ss.idleCheck(now); expired {
			lc.ss.idleClosed()
			lp.readerDone(lc)
			return
		}
	} else if !now.Before(next) {
		lp.readerDone(lc)
		return
	}
	if !next.IsZero() {
		lp.earliest(next)
	}
}

// stopAll: Shutdown began. Nothing more is read; what was read is answered.
func (lp *loop) stopAll() {
	for _, lc := range lp.conns {
		lp.readerDone(lc)
	}
}

// abortAll closes every connection at once, and those handed over but not yet
// registered (added); later ones are closed by add.
func (lp *loop) abortAll(added []*lconn) {
	for _, lc := range lp.conns {
		lp.closeConn(lc)
	}
	lp.mu.Lock()
	added = append(added, lp.added...)
	lp.added = nil
	lp.exited = true
	lp.mu.Unlock()
	for _, lc := range added {
		syscall.Close(lc.fd)
		lc.closed = true
		lp.s.forget(lc.ss)
	}
}

func (lp *loop) closeConn(lc *lconn) {
	if lc.closed {
		return
	}
	syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_DEL, lc.fd, nil)
	syscall.Close(lc.fd)
	delete(lp.conns, int32(lc.fd))
	lc.closed = true
	lp.s.forget(lc.ss)
}
