package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// answer is one encoded answer line waiting in a connection's outbox.
type answer struct {
	line  []byte
	after wal.LSN // send only once the log is durable up to here
	close bool    // close the connection after this answer
}

// conn is one client connection. On Linux the server's event loop (loop_linux.go) owns
// its socket; elsewhere, or with Config.Goroutines, a reader goroutine decodes and
// applies requests and a writer goroutine sends answers once what they depend on is
// durable. handle, push and the parked admits are the same in both.
type conn struct {
	s      *Server
	nc     net.Conn    // nil for a connection of the event loop
	remote string      // the peer's address, for the log
	cred   *Credential // nil until a successful hello
	// parked counts this connection's waiting admits (guarded by the server's mu):
	// the writer stays until they are answered.
	parked int

	// gone is set (under the server's mu) once the peer can no longer receive parked
	// answers: its admits must not be parked, nor admitted for nobody.
	gone bool

	rd *proto.Reader // the reader goroutine's; Buffered is read by that goroutine only

	mu      sync.Mutex
	outbox  []answer
	writing bool          // a goroutine (the writer, or the reader in send) is writing to nc
	done    bool          // the reader has stopped; the writer drains and closes
	signal  chan struct{} // wakes the writer
	room    chan struct{} // wakes a reader waiting for outbox room
	closed  chan struct{} // closed when the connection is closed: a blocked reader leaves

	// The event loop's (lp non-nil); the loop goroutine's own, except kicked (lp.mu).
	lp         *loop
	fd         int
	dec        proto.Decoder
	src        loopSource // the socket, read once per readiness (netfd.Source)
	kicked     bool       // in lp.kicked
	ready      bool       // in lp.ready
	readDone   bool       // nothing more is read (EOF, quit, hello deadline, shutdown)
	paused     bool       // not read until its answers are written (back-pressure)
	closeAfter bool       // close once out is sent
	closedLoop bool       // the loop closed it
	events     uint32     // what epoll reports for it
	pend       []answer   // taken from outbox, waiting for the log
	out        []byte     // encoded answers; out[outOff:] not yet sent
	outOff     int
	helloBy    time.Time // closed if no hello by then
	stalled    time.Time // when a write last found the socket full (zero: not stalled)
}

func newConn(s *Server, nc net.Conn) *conn {
	return &conn{s: s, nc: nc, remote: nc.RemoteAddr().String(), signal: make(chan struct{}, 1), room: make(chan struct{}, 1), closed: make(chan struct{})}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// push queues an answer. It never blocks, so that it can be called under the server
// lock (to answer a parked admit); the reader bounds its own queue with waitRoom.
func (c *conn) push(a answer) {
	c.mu.Lock()
	c.outbox = append(c.outbox, a)
	c.mu.Unlock()
	if c.lp != nil {
		c.lp.kick(c)
		return
	}
	notify(c.signal)
}

// waitRoom blocks the reader while the outbox is full: back-pressure on a peer that
// pipelines faster than it reads its answers.
func (c *conn) waitRoom() bool {
	for {
		c.mu.Lock()
		n := len(c.outbox)
		c.mu.Unlock()
		if n < c.s.cfg.Limits.WriteQueueMax {
			return true
		}
		select {
		case <-c.room:
		case <-c.closed: // the writer dropped a peer that does not read
			return false
		case <-c.s.doneC:
			return false
		}
	}
}

func (c *conn) readLoop() {
	defer c.s.wg.Done()
	defer c.finish()
	r := proto.NewReader(c.nc)
	c.rd = r
	var dec proto.Decoder
	var req proto.Request
	for {
		line, err := r.ReadLine()
		if err != nil {
			if errors.Is(err, proto.ErrLineTooLong) {
				c.push(answer{line: proto.AppendError(nil, proto.ID{}, err)})
				continue
			}
			return // EOF, a network error, or the read deadline set by Shutdown
		}
		if !c.waitRoom() {
			return
		}
		if err := dec.Decode(line, &req); err != nil {
			c.push(answer{line: proto.AppendError(nil, req.ID, err)})
			continue
		}
		if quit := c.handle(&req); quit {
			return
		}
	}
}

// finish tells the writer that no more answers will come from the reader. The peer
// has gone (or closed its side): its parked admits are dropped, so that none of them
// is admitted later for nobody; the request is unanswered, an unknown outcome it
// will retry with the same key.
func (c *conn) finish() {
	c.s.mu.Lock()
	c.gone = true
	c.s.dropWaitersLocked(c)
	c.s.mu.Unlock()
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
	notify(c.signal)
}

func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	defer c.close()
	w := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		c.mu.Lock()
		if c.writing { // the reader is sending an answer itself (send); it signals when done
			c.mu.Unlock()
			<-c.signal
			continue
		}
		batch := c.outbox
		c.outbox = nil
		done := c.done
		c.writing = len(batch) > 0
		c.mu.Unlock()
		notify(c.room)
		if len(batch) == 0 {
			if done && c.s.parkedOf(c) == 0 {
				// A parked admit is unparked and answered under the server's lock, so
				// once none is left its answer is in the outbox already: look again.
				c.mu.Lock()
				empty := len(c.outbox) == 0
				c.mu.Unlock()
				if empty {
					return
				}
				continue
			}
			<-c.signal
			continue
		}
		quit := false
		for _, a := range batch {
			line := c.durable(a)
			c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.Limits.WriteTimeout))
			if _, err := w.Write(line); err != nil {
				return
			}
			quit = quit || a.close
		}
		if err := w.Flush(); err != nil || quit {
			return
		}
		c.mu.Lock()
		c.writing = false
		c.mu.Unlock()
	}
}

// durable waits until the log is durable up to what a's answer read and returns the
// line to send: a's, or an unavailable refusal if the log failed first. Never
// acknowledge what is not on disk (D1, F1).
func (c *conn) durable(a answer) []byte {
	if a.after > 0 && c.s.cfg.Log != nil {
		if err := c.s.cfg.Log.WaitDurable(context.Background(), a.after); err != nil {
			c.s.fail(err)
			return proto.AppendError(nil, answerID(a.line), c.s.unavailableErr())
		}
	}
	return a.line
}

// send answers a request from the reader's goroutine. When nothing is queued or being
// written and the peer has sent nothing more (a request-response peer), the reader
// waits for the log and writes the answer itself: no hand-off to the writer
// goroutine, and one fewer wake-up per request. Otherwise (a pipelining peer,
// answers in flight) the writer sends it in order with the others. Either way the
// answer leaves only once what it read is durable.
func (c *conn) send(a answer) {
	if c.lp != nil {
		c.push(a) // the loop waits for the log once for all of a pass's answers
		return
	}
	c.mu.Lock()
	if c.writing || len(c.outbox) > 0 || c.rd.Buffered() > 0 {
		c.outbox = append(c.outbox, a)
		c.mu.Unlock()
		notify(c.signal)
		return
	}
	c.writing = true
	c.mu.Unlock()
	line := c.durable(a)
	c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.Limits.WriteTimeout))
	if _, err := c.nc.Write(line); err != nil {
		c.nc.Close() // the reader's next read fails; finish and the writer clean up
	}
	c.mu.Lock()
	c.writing = false
	more := len(c.outbox) > 0
	c.mu.Unlock()
	if more {
		notify(c.signal)
	}
}

func (s *Server) unavailableErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unavailable()
}

// answerID recovers the id of an encoded answer, to turn it into an error answer.
func answerID(line []byte) proto.ID {
	r, err := proto.DecodeResponse(line)
	if err != nil {
		return proto.ID{}
	}
	return r.ID
}

// parkedOf counts c's admits that are still waiting.
func (s *Server) parkedOf(c *conn) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.parked
}

func (c *conn) close() {
	c.nc.Close()
	c.forget()
}

// forget ends a closed connection for the server: a blocked reader leaves, it is no
// longer counted, and its parked admits are dropped. Both models call it once the
// socket is closed (close, closeLoop).
func (c *conn) forget() {
	close(c.closed)
	c.s.mu.Lock()
	c.gone = true
	delete(c.s.conns, c)
	c.s.dropWaitersLocked(c)
	c.s.mu.Unlock()
}

// handle authorises and applies one decoded request. It reports whether the
// connection must close.
func (c *conn) handle(req *proto.Request) (quit bool) {
	s := c.s
	fail := func(err error, quit bool) bool {
		c.push(answer{line: proto.AppendError(nil, req.ID, err), close: quit})
		return quit
	}
	if req.Method == proto.MethodHello {
		switch {
		case c.cred != nil:
			return fail(proto.ErrHelloRepeated, false)
		case req.Version != proto.Version:
			return fail(proto.ErrUnsupportedVersion, true)
		}
		cred, ok := s.cfg.Roles.Lookup(req.Token)
		if !ok {
			s.log.Warn("hello with an unknown token", "remote", c.remote)
			return fail(proto.ErrUnauthenticated, true)
		}
		c.cred = cred
		s.mu.Lock()
		if !s.closing && c.nc != nil { // under the lock: Shutdown's own deadline, set after closing, must win
			c.nc.SetReadDeadline(time.Time{})
		}
		s.mu.Unlock()
		c.push(answer{line: proto.AppendResult(nil, req.ID, &proto.HelloResult{
			Version: proto.Version, Role: cred.Role, Server: "soundgate " + s.cfg.Version})})
		return false
	}
	if c.cred == nil {
		return fail(proto.ErrHelloRequired, false)
	}
	if !allowed(c.cred.Role, req.Method) {
		return fail(fmt.Errorf("%w: the %s role may not call %s", proto.ErrForbidden, c.cred.Role, req.Method), false)
	}
	if !c.cred.Allows(req.Run) {
		return fail(fmt.Errorf("%w: run %q is outside the scope of token %q", proto.ErrForbidden, req.Run, c.cred.Name), false)
	}

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return fail(proto.ErrShuttingDown, false)
	}
	if req.Method == proto.MethodAdmit && req.WaitMs > 0 && s.nWaiters >= s.cfg.Limits.WaitersMax {
		// Refused before the core sees it: an exceeded limit changes nothing.
		s.mu.Unlock()
		return fail(proto.ErrOverloaded, false)
	}
	cmd := command(req, s.now())
	rep, err := s.stepLocked(cmd)
	if err == nil && rep.Err != nil {
		err = rep.Err
	}
	if err == nil && req.Method == proto.MethodAdmit && rep.Admit.Answer == core.AnswerHeld && req.WaitMs > 0 && !c.gone {
		s.parkLocked(c, req.ID, cmd, time.Duration(req.WaitMs)*time.Millisecond)
		s.mu.Unlock()
		return false
	}
	// Every answer, a typed refusal of the core included (not_pending can rest on a
	// decision still in flight to the disk), waits until what it read is durable.
	after := s.lastLSN
	s.mu.Unlock()
	// An answer is one allocation: most fit in answerBytesHint.
	var line []byte
	if err != nil {
		line = proto.AppendError(make([]byte, 0, answerBytesHint), req.ID, err)
	} else {
		line = proto.AppendResult(make([]byte, 0, answerBytesHint), req.ID, result(req, cmd, rep))
	}
	c.send(answer{line: line, after: after})
	return false
}

// answerBytesHint is the capacity an answer line starts with: an admit's answer with
// short ids is about 100 bytes; longer ones grow.
const answerBytesHint = 192

// command turns a decoded request into a core command at time now.
func command(req *proto.Request, now core.Time) core.Command {
	c := core.Command{Run: req.Run, Key: req.Key, Epoch: req.Epoch, Gated: req.Gated,
		Decision: req.Decision, Outcome: req.Outcome, Result: req.Result, Now: now}
	switch req.Method {
	case proto.MethodOpen:
		c.Op = core.OpOpen
		if req.TimeoutMs > 0 {
			c.Deadline = now + core.Time(req.TimeoutMs)
		}
	case proto.MethodAdmit:
		c.Op = core.OpAdmit
	case proto.MethodDecide:
		c.Op = core.OpDecide
	case proto.MethodComplete:
		c.Op = core.OpComplete
	case proto.MethodCancel:
		c.Op = core.OpCancel
	case proto.MethodFence:
		c.Op = core.OpFence
	case proto.MethodStatus:
		c.Op = core.OpStatus
	}
	return c
}

// result turns the core's reply into the wire's result for req.
func result(req *proto.Request, cmd core.Command, rep core.Reply) proto.Result {
	switch req.Method {
	case proto.MethodOpen:
		v := rep.Open.Run
		return &proto.OpenResult{Run: v.ID, Status: v.Status, Epoch: v.Epoch, DeadlineMs: v.Deadline, Created: rep.Open.Created}
	case proto.MethodAdmit:
		return admitResult(rep.Admit)
	case proto.MethodDecide:
		return &proto.DecideResult{Decision: rep.Decide.Decision, Repeat: rep.Decide.Repeat}
	case proto.MethodComplete:
		return &proto.CompleteResult{Repeat: rep.Complete.Repeat}
	case proto.MethodCancel:
		return &proto.CancelResult{Run: rep.Run.ID, Status: rep.Run.Status, Epoch: rep.Run.Epoch}
	case proto.MethodFence:
		return &proto.FenceResult{Run: rep.Run.ID, Epoch: rep.Run.Epoch}
	}
	v := rep.Run
	st := &proto.StatusResult{Run: v.ID, Status: v.Status, Epoch: v.Epoch, Pending: v.Pending, DeadlineMs: v.Deadline}
	if cmd.Key != "" {
		e := rep.Effect
		st.Effect = &proto.EffectResult{Key: e.Key, Status: e.Status, Epoch: e.Epoch, Gated: e.Gated,
			Approved: e.Approved, Outcome: e.Outcome, Result: e.Result}
	}
	return st
}

// admitResult is the wire form of the core's answer to an admit.
func admitResult(a core.AdmitResult) *proto.AdmitResult {
	return &proto.AdmitResult{Answer: a.Answer, Reason: a.Reason, Outcome: a.Outcome, Result: a.Result, Epoch: a.Epoch}
}
