//go:build linux

package server

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/netfd"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// loop is the server's event loop on Linux: one goroutine owns every connection's
// socket. Each pass it reads every readable connection once (epoll, level-triggered),
// applies the requests it finds, polls a few times more without waiting for requests
// that arrived meanwhile (gatherPolls), waits once for the log to make all of their
// answers durable, and then writes each connection's answers in one write. This is how Redis
// serves `appendfsync always`, and for the same reason: per request it costs one read
// and one write, with no goroutine woken and no thread handed a socket. Measured on
// the 2-core machines of docs/verify/wal.md, a goroutine per connection (a reader that
// reads until EAGAIN, then sleeps in Go's poller, and a wait on the log's commit
// channel) spent about twice the CPU per admission, most of it in the kernel, and
// stayed at about 0.6 of Redis at 64 clients.
//
// Answers queued by other goroutines (a parked admit answered by a wait that ran out,
// Shutdown) reach the loop through kick and a wake-up pipe. Every answer still leaves
// only once what it read is durable (D1, F1): the pass's wait covers the largest LSN
// any of its answers depends on.
type loop struct {
	s    *Server
	ep   int    // the epoll descriptor
	wake [2]int // a non-blocking pipe: a byte in it wakes the loop

	mu       sync.Mutex
	added    []*conn // handed over by Serve, not registered yet
	kicked   []*conn // with answers queued by push
	awake    bool    // the loop looks at added and kicked before it sleeps again
	stopping bool    // Shutdown began: read nothing more, answer, close, leave
	abort    bool    // Shutdown's context ended: close every connection now
	exited   bool

	// The loop goroutine's own.
	conns    map[int32]*conn
	ready    []*conn // to flush this pass
	events   []syscall.EpollEvent
	deadline time.Time // the earliest hello or write deadline of a connection (zero: none)
}

// loopSource is a connection's socket as the loop reads it.
type loopSource = netfd.Source

// loopAvailable: this platform has the event loop.
const loopAvailable = true

// newLoop starts the event loop of s.
func newLoop(s *Server) (*loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	lp := &loop{s: s, ep: ep, conns: map[int32]*conn{}, events: make([]syscall.EpollEvent, 256)}
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

// kick tells the loop that c has answers queued. Any goroutine may call it.
func (lp *loop) kick(c *conn) {
	lp.mu.Lock()
	if !c.kicked {
		c.kicked = true
		lp.kicked = append(lp.kicked, c)
	}
	lp.wakeLocked()
	lp.mu.Unlock()
}

// add hands a connection accepted by Serve to the loop. It takes the socket from nc
// (netfd.Take): from now on only the loop reads, writes and closes it. It reports
// false if the socket cannot be taken (then Serve serves nc with goroutines).
func (lp *loop) add(c *conn, nc net.Conn) bool {
	remote := nc.RemoteAddr().String()
	fd, err := netfd.Take(nc)
	if err != nil {
		return false
	}
	c.fd = fd
	c.src.FD = fd
	c.remote = remote
	c.rd = proto.NewReader(&c.src)
	lp.s.mu.Lock() // Shutdown looks at c.nc under it
	c.nc = nil
	lp.s.mu.Unlock()
	lp.mu.Lock()
	if lp.exited {
		lp.mu.Unlock()
		syscall.Close(fd)
		c.closeLoop()
		return true
	}
	lp.added = append(lp.added, c)
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
			timeout = int(time.Until(lp.deadline)/time.Millisecond) + 1
			timeout = max(timeout, 0)
		}
		n, err := syscall.EpollWait(lp.ep, lp.events, timeout)
		if err != nil && err != syscall.EINTR {
			// Never seen; the loop cannot go on without epoll. Fail closed: every
			// connection is closed, every request in flight stays unanswered.
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
// stream of requests a pass still ends and its answers leave. Gathering took the
// records per fdatasync at 64 clients from about 37 to about 53, and admissions/s up
// by 13 to 30% in five of six alternating pairs of 4 s runs (docs/verify/wal.md).
const gatherPolls = 4

// handleEvents reads the connections of the first n events and applies their requests.
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
		c := lp.conns[ev.Fd]
		if c == nil {
			continue
		}
		if ev.Events&syscall.EPOLLOUT != 0 {
			lp.markReady(c)
		}
		if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR|syscall.EPOLLRDHUP) != 0 {
			if c.readDone {
				lp.markReady(c) // the peer hung up: the write finds out
			} else {
				c.src.Readable = true
				lp.readConn(c)
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
// this check (TestShutdownRightAfterAccept caught the version that forgot stopping).
func (lp *loop) settle() (exit bool) {
	for {
		lp.mu.Lock()
		added, kicked := lp.added, lp.kicked
		lp.added, lp.kicked = nil, nil
		for _, c := range kicked {
			c.kicked = false
		}
		stopping, abort := lp.stopping, lp.abort
		lp.mu.Unlock()
		if abort {
			lp.abortAll(added)
			return true
		}
		for _, c := range added {
			lp.register(c)
		}
		for _, c := range kicked {
			lp.markReady(c)
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

func (lp *loop) register(c *conn) {
	c.events = syscall.EPOLLIN | syscall.EPOLLRDHUP
	if err := syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_ADD, c.fd, &syscall.EpollEvent{Events: c.events, Fd: int32(c.fd)}); err != nil {
		lp.s.log.Warn("event loop: cannot watch a connection; closing it", "remote", c.remote, "err", err)
		syscall.Close(c.fd)
		c.closeLoop()
		return
	}
	lp.conns[int32(c.fd)] = c
	c.helloBy = time.Now().Add(lp.s.cfg.Limits.HelloTimeout)
	lp.earliest(c.helloBy)
}

// earliest lowers the loop's next deadline to t.
func (lp *loop) earliest(t time.Time) {
	if lp.deadline.IsZero() || t.Before(lp.deadline) {
		lp.deadline = t
	}
}

func (lp *loop) markReady(c *conn) {
	if !c.ready && !c.closedLoop {
		c.ready = true
		lp.ready = append(lp.ready, c)
	}
}

// readConn applies the requests c has sent, reading its socket at most once, until it
// has none buffered, or too many answers wait to be written (back-pressure: the loop
// stops reading c until they are).
func (lp *loop) readConn(c *conn) {
	var req proto.Request
	for !c.readDone && !c.paused {
		if lp.backlogged(c) {
			c.paused = true
			lp.interest(c)
			return
		}
		line, err := c.rd.ReadLine()
		if err != nil {
			switch {
			case errors.Is(err, proto.ErrWouldBlock):
				return
			case errors.Is(err, proto.ErrLineTooLong):
				c.push(answer{line: proto.AppendError(nil, proto.ID{}, err)})
				continue
			}
			lp.readerDone(c) // EOF, or the connection broke
			return
		}
		if err := c.dec.Decode(line, &req); err != nil {
			c.push(answer{line: proto.AppendError(nil, req.ID, err)})
			continue
		}
		if quit := c.handle(&req); quit {
			lp.readerDone(c)
			return
		}
	}
}

// outBytesMax is how many written-but-unsent answer bytes make the loop stop reading
// a connection until its peer reads them.
const outBytesMax = 256 << 10

func (lp *loop) backlogged(c *conn) bool {
	if len(c.out)-c.outOff >= outBytesMax {
		return true
	}
	c.mu.Lock()
	n := len(c.outbox)
	c.mu.Unlock()
	return n+len(c.pend) >= lp.s.cfg.Limits.WriteQueueMax
}

// readerDone: c sends nothing more (EOF, an error, a quit, a hello deadline or
// shutdown). As in the goroutine model (finish), its parked admits are dropped; the
// connection closes once its queued answers are written.
func (lp *loop) readerDone(c *conn) {
	if c.readDone {
		return
	}
	c.readDone = true
	c.finish()
	lp.interest(c)
	lp.markReady(c)
}

// interest sets what epoll reports for c: readable while it is read, writable while
// answers wait for room in the socket.
func (lp *loop) interest(c *conn) {
	var ev uint32
	if !c.readDone && !c.paused {
		ev |= syscall.EPOLLIN | syscall.EPOLLRDHUP
	}
	if c.outOff < len(c.out) {
		ev |= syscall.EPOLLOUT
	}
	if ev == c.events {
		return
	}
	c.events = ev
	syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_MOD, c.fd, &syscall.EpollEvent{Events: ev, Fd: int32(c.fd)})
}

// flush sends the answers of every ready connection: one wait for the log covers
// them all, then one write per connection.
func (lp *loop) flush() {
	ready := lp.ready
	lp.ready = nil
	var upto wal.LSN
	for _, c := range ready {
		c.mu.Lock()
		c.pend = append(c.pend, c.outbox...)
		clear(c.outbox)
		c.outbox = c.outbox[:0]
		c.mu.Unlock()
		for _, a := range c.pend {
			upto = max(upto, a.after)
		}
	}
	var failed error
	if log := lp.s.cfg.Log; upto > 0 && log != nil {
		if err := log.WaitDurable(context.Background(), upto); err != nil {
			lp.s.fail(err)
			failed = lp.s.unavailableErr()
		}
	}
	for _, c := range ready {
		c.ready = false
		if c.closedLoop {
			c.pend = c.pend[:0]
			continue
		}
		for _, a := range c.pend {
			line := a.line
			if failed != nil && a.after > 0 && lp.s.cfg.Log.WaitDurable(context.Background(), a.after) != nil {
				// Not on disk: never acknowledged (D1, F1).
				line = proto.AppendError(nil, answerID(a.line), failed)
			}
			c.out = append(c.out, line...)
			c.closeAfter = c.closeAfter || a.close
		}
		clear(c.pend)
		c.pend = c.pend[:0]
		lp.write(c)
	}
}

// write sends what c has to send, as far as the socket takes it.
func (lp *loop) write(c *conn) {
	for c.outOff < len(c.out) {
		n, err := syscall.Write(c.fd, c.out[c.outOff:])
		if n > 0 {
			c.outOff += n
			c.stalled = time.Time{}
		}
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			if c.stalled.IsZero() {
				c.stalled = time.Now()
				lp.earliest(c.stalled.Add(lp.s.cfg.Limits.WriteTimeout))
			}
			lp.interest(c)
			return
		}
		if err != nil {
			lp.closeConn(c) // the peer is gone
			return
		}
	}
	if cap(c.out) > 64<<10 {
		c.out = nil // a burst's buffer is not kept for an idle connection
	}
	c.out, c.outOff = c.out[:0], 0
	if c.closeAfter {
		lp.closeConn(c)
		return
	}
	if c.readDone {
		if lp.s.parkedOf(c) == 0 && !c.hasQueued() {
			lp.closeConn(c)
			return
		}
	} else if c.paused {
		c.paused = false
		lp.readConn(c) // the lines it holds, then the socket
	}
	lp.interest(c)
}

func (c *conn) hasQueued() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.outbox) > 0
}

// expire closes connections past their deadlines: no hello within HelloTimeout (as
// the goroutine model's read deadline does), or answers unread for WriteTimeout.
func (lp *loop) expire() {
	now := time.Now()
	lp.deadline = time.Time{}
	for _, c := range lp.conns {
		if c.cred == nil && !c.readDone {
			if !now.Before(c.helloBy) {
				lp.readerDone(c)
			} else {
				lp.earliest(c.helloBy)
			}
		}
		if !c.stalled.IsZero() {
			if by := c.stalled.Add(lp.s.cfg.Limits.WriteTimeout); !now.Before(by) {
				lp.closeConn(c)
			} else {
				lp.earliest(by)
			}
		}
	}
}

// stopAll: Shutdown began. Nothing more is read; what was read is answered.
func (lp *loop) stopAll() {
	for _, c := range lp.conns {
		if !c.readDone {
			lp.readerDone(c)
		}
	}
}

// abortAll closes every connection at once, and those handed over but not yet
// registered (added); later ones are closed by add.
func (lp *loop) abortAll(added []*conn) {
	for _, c := range lp.conns {
		lp.closeConn(c)
	}
	lp.mu.Lock()
	added = append(added, lp.added...)
	lp.added = nil
	lp.exited = true
	lp.mu.Unlock()
	for _, c := range added {
		syscall.Close(c.fd)
		c.closeLoop()
	}
}

func (lp *loop) closeConn(c *conn) {
	if c.closedLoop {
		return
	}
	syscall.EpollCtl(lp.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	syscall.Close(c.fd)
	delete(lp.conns, int32(c.fd))
	if !c.readDone {
		c.readDone = true
		c.finish()
	}
	c.closeLoop()
}

// closeLoop is close for a connection of the loop, whose socket the loop has closed.
func (c *conn) closeLoop() {
	c.closedLoop = true
	c.forget()
	c.s.wg.Done()
}
