package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// answer is one answer waiting to be sent: the id of its request, its encoded line,
// and the log position it rests on (release sends it only once that is durable).
type answer struct {
	id    proto.ID
	line  []byte
	after wal.LSN
	close bool      // close the connection after this answer
	admit admitKind // an admit's answer, counted once sent (Config.Metrics)
}

// session is one client connection as the protocol sees it, whatever transport
// carries its bytes: the credential of its hello, its decoder, and the answers
// waiting to be sent. A transport reads into rd and calls feed, takes the answers
// with take, turns them into bytes with release, writes them, and calls
// Server.forget once the connection is closed.
type session struct {
	s      *Server
	remote string      // the peer's address, for the log
	cred   *Credential // nil until a successful hello (set under Server.mu)
	admin  bool        // accepted by ServeAdmin
	// revoked: a reload of the roles removed or changed its credential (SetRoles).
	revoked atomic.Bool
	// waiting counts its admits that wait at the node (of its token's quota).
	waiting atomic.Int64
	// active is when bytes were last read from it or answers written to it (Unix
	// nanoseconds; touch): the idle rule's clock.
	active atomic.Int64
	party  *node.Party // its admits that wait at the node
	rd     *proto.Reader
	dec    proto.Decoder
	req    proto.Request

	// kick tells the transport that answers were queued (by push, from any
	// goroutine); onHello that the hello succeeded; interrupt, if set, is how
	// Shutdown stops the session's reading (abort: closes it now); sending, if set,
	// whether the transport holds answers it took and has not written yet (asked by
	// the idle rule). Set by the transport before the session reads.
	kick      func()
	onHello   func()
	interrupt func(abort bool)
	sending   func() bool

	// unsent is how many bytes of answers the transport took from the outbox and has
	// not written yet: with queued, how far behind its peer is (a watch's room).
	unsent atomic.Int64

	mu     sync.Mutex
	outbox []answer
}

func newSession(s *Server, remote string) *session {
	ss := &session{s: s, remote: remote, party: s.node.Join()}
	ss.touch(time.Now())
	return ss
}

// push queues an answer. It never blocks: the node calls it, through a waiting
// admit's Done, under its lock.
func (ss *session) push(a answer) {
	ss.mu.Lock()
	ss.outbox = append(ss.outbox, a)
	ss.mu.Unlock()
	ss.kick()
}

// take hands the queued answers to the transport, appended to dst.
func (ss *session) take(dst []answer) []answer {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	dst = append(dst, ss.outbox...)
	clear(ss.outbox)
	ss.outbox = ss.outbox[:0]
	return dst
}

// queued returns how many answers wait in the outbox.
func (ss *session) queued() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.outbox)
}

// readState says why feed stopped.
type readState int

const (
	readAgain  readState = iota // the source has no bytes now: feed again when it has
	readPaused                  // too many answers wait for the peer: feed again once they are written
	readDone                    // EOF, a broken connection, or a request that ends the session
)

// feed reads and applies the requests the source holds, until it has none now, the
// transport says the peer has too many answers waiting (backlogged), or the session
// ends. It is the one read path of every transport.
func (ss *session) feed(backlogged func() bool) readState {
	for {
		if backlogged() {
			return readPaused
		}
		line, err := ss.rd.ReadLine()
		if err != nil {
			switch {
			case errors.Is(err, proto.ErrWouldBlock):
				return readAgain
			case errors.Is(err, proto.ErrLineTooLong):
				ss.push(answer{line: proto.AppendError(nil, proto.ID{}, err)})
				continue
			}
			return readDone // EOF, a network error, or a deadline
		}
		if err := ss.dec.Decode(line, &ss.req); err != nil {
			ss.push(answer{id: ss.req.ID, line: proto.AppendError(nil, ss.req.ID, err)})
			continue
		}
		if quit := ss.handle(&ss.req); quit {
			return readDone
		}
	}
}

// handle authorises and applies one decoded request. It reports whether the
// connection must close.
func (ss *session) handle(req *proto.Request) (quit bool) {
	fail := func(err error, quit bool) bool {
		ss.push(answer{id: req.ID, line: proto.AppendError(nil, req.ID, err), close: quit})
		return quit
	}
	if req.Method == proto.MethodHello {
		return ss.hello(req, fail)
	}
	switch {
	case ss.revoked.Load():
		return fail(errRevoked, true)
	case ss.cred == nil:
		return fail(proto.ErrHelloRequired, false)
	case !allowed(ss.cred.Role, req.Method):
		ss.s.refused.add(ss.s.log, proto.ErrForbidden.Type, "remote", ss.remote, "token_name", ss.cred.Name, "role", ss.cred.Role.String(), "method", req.Method.String())
		return fail(fmt.Errorf("%w: the %s role may not call %s", proto.ErrForbidden, ss.cred.Role, req.Method), false)
	case req.Method == proto.MethodPending: // of no one run: scoped by the token's runs (inbox.go)
		ss.push(ss.inbox(req))
		return false
	case req.Method == proto.MethodWatch: // the same scope, as a stream (watcher.go)
		ss.watch(req)
		return false
	case req.Method == proto.MethodUnwatch:
		ss.unwatch(req)
		return false
	case !ss.cred.Allows(req.Run):
		ss.s.refused.add(ss.s.log, proto.ErrForbidden.Type, "remote", ss.remote, "token_name", ss.cred.Name, "method", req.Method.String(), "run", string(req.Run))
		return fail(fmt.Errorf("%w: run %q is outside the scope of token %q", proto.ErrForbidden, req.Run, ss.cred.Name), false)
	}
	nreq, ok := ss.request(req)
	if !ok {
		return fail(proto.ErrUnknownMethod, false)
	}
	cred := ss.cred
	counted, err := ss.reserve(req.ID, &nreq)
	if err != nil {
		ss.s.refused.add(ss.s.log, proto.ErrQuota.Type, "remote", ss.remote, "token_name", cred.Name, "why", err.Error())
		return fail(err, false)
	}
	a := ss.s.node.Apply(nreq)
	if counted {
		ss.s.usage.settle(cred, &nreq.Cmd, a)
	}
	if !a.Parked {
		if nreq.Wait > 0 {
			ss.waiting.Add(-1)
			ss.s.releaseWaiters(cred, 1)
		}
		ss.push(encodeAnswer(req.ID, nreq.Cmd, a))
	}
	return false
}

// reserve counts what nreq takes of the quotas of the session's token before the
// node applies it (a wait, a run, result bytes), or refuses it (quota) and counts
// nothing. counted: usage counted a run or result bytes, which usage.settle keeps or
// gives back once the node answered; a wait's Done gives its place back.
func (ss *session) reserve(id proto.ID, nreq *node.Request) (counted bool, _ error) {
	cred := ss.cred
	switch err := ss.s.usage.reserve(cred, &nreq.Cmd, ss.s.cfg.Limits); {
	case err == nil:
		counted = usageCounts(&nreq.Cmd)
	case !ss.s.recordsNothing(&nreq.Cmd):
		return false, err
	}
	if nreq.Wait <= 0 {
		return counted, nil
	}
	if err := ss.s.reserveWaiter(cred); err != nil {
		return false, err // an admit: usage counted nothing
	}
	ss.waiting.Add(1)
	cmd := nreq.Cmd
	nreq.Done = func(a node.Answer) {
		ss.s.releaseWaiters(cred, 1)
		// Touched and queued before it stops counting as waiting: the idle
		// rule never sees it idle in between (idleCheck).
		ss.touch(time.Now())
		ss.push(encodeAnswer(id, cmd, a))
		ss.waiting.Add(-1)
	}
	return counted, nil
}

func (ss *session) hello(req *proto.Request, fail func(error, bool) bool) bool {
	switch {
	case ss.cred != nil:
		return fail(proto.ErrHelloRepeated, false)
	case req.Version != proto.Version:
		return fail(proto.ErrUnsupportedVersion, true)
	}
	cred, ok := ss.s.lookup(req.Token)
	if !ok {
		ss.s.refused.add(ss.s.log, proto.ErrUnauthenticated.Type, "remote", ss.remote)
		return fail(proto.ErrUnauthenticated, true)
	}
	if err := ss.s.authenticate(ss, cred); err != nil {
		ss.s.refused.add(ss.s.log, proto.ErrorObjectOf(err).Type, "remote", ss.remote, "token_name", cred.Name, "role", cred.Role.String(), "why", err.Error())
		return fail(err, true)
	}
	ss.s.log.Debug("hello", "remote", ss.remote, "role", cred.Role.String(), "token_name", cred.Name)
	if ss.onHello != nil {
		ss.onHello()
	}
	ss.push(answer{id: req.ID, line: proto.AppendResult(nil, req.ID, &proto.HelloResult{
		Version: proto.Version, Role: cred.Role, Server: "soundgate " + ss.s.cfg.Version})})
	return false
}

// request turns a decoded request into the node's: the command, and how long a held
// admit waits.
func (ss *session) request(req *proto.Request) (node.Request, bool) {
	op, ok := req.Method.Op()
	if !ok {
		return node.Request{}, false
	}
	c := core.Command{Op: op, Run: req.Run, Key: req.Key, Epoch: req.Epoch, Gated: req.Gated,
		Decision: req.Decision, Outcome: req.Outcome, Result: req.Result,
		Description: req.Description, ArgsDigest: req.ArgsDigest, Reason: req.Reason}
	switch op {
	case core.OpDecide, core.OpCancel, core.OpFence: // who asked, for the audit trail
		c.By = ss.cred.Name
	}
	if op == core.OpOpen && req.TimeoutMs > 0 {
		c.Deadline = ss.s.node.Now() + core.Time(req.TimeoutMs)
	}
	r := node.Request{Cmd: c, Party: ss.party}
	if op == core.OpAdmit {
		r.Wait = time.Duration(req.WaitMs) * time.Millisecond
	}
	return r, true
}

// answerBytesHint is the capacity an answer line starts with: an admit's answer with
// short ids is about 100 bytes; longer ones grow.
const answerBytesHint = 192

// encodeAnswer is the wire's answer to a request with id and command c.
func encodeAnswer(id proto.ID, c core.Command, a node.Answer) answer {
	buf := make([]byte, 0, answerBytesHint)
	if a.Err != nil {
		return answer{id: id, line: proto.AppendError(buf, id, wireError(a.Err)), after: a.After}
	}
	kind := admitNone
	if c.Op == core.OpAdmit {
		kind = admitKindOf(a.Reply.Admit)
	}
	return answer{id: id, line: proto.AppendResult(buf, id, result(c, a.Reply)), after: a.After, admit: kind}
}

// wireError is the protocol's form of a node's refusal; the core's typed errors pass
// as they are.
func wireError(err error) error {
	for _, m := range []struct {
		from error
		to   *proto.Error
	}{{node.ErrUnavailable, proto.ErrUnavailable}, {node.ErrOverloaded, proto.ErrOverloaded}, {node.ErrStopped, proto.ErrShuttingDown}} {
		if errors.Is(err, m.from) {
			detail, _ := strings.CutPrefix(err.Error(), m.from.Error())
			return fmt.Errorf("%w%s", m.to, detail)
		}
	}
	return err
}

// result turns the core's reply into the wire's result for command c.
func result(c core.Command, rep core.Reply) proto.Result {
	switch c.Op {
	case core.OpOpen:
		v := rep.Open.Run
		return &proto.OpenResult{Run: v.ID, Status: v.Status, Epoch: v.Epoch, DeadlineMs: v.Deadline, Created: rep.Open.Created}
	case core.OpAdmit:
		a := rep.Admit
		return &proto.AdmitResult{Answer: a.Answer, Reason: a.Reason, Outcome: a.Outcome, Result: a.Result, Epoch: a.Epoch}
	case core.OpDecide:
		return &proto.DecideResult{Decision: rep.Decide.Decision, Repeat: rep.Decide.Repeat}
	case core.OpComplete:
		return &proto.CompleteResult{Repeat: rep.Complete.Repeat}
	case core.OpCancel:
		return &proto.CancelResult{Run: rep.Run.ID, Status: rep.Run.Status, Epoch: rep.Run.Epoch}
	case core.OpFence:
		return &proto.FenceResult{Run: rep.Run.ID, Epoch: rep.Run.Epoch}
	}
	v := rep.Run
	st := &proto.StatusResult{Run: v.ID, Status: v.Status, Epoch: v.Epoch, Pending: v.Pending, DeadlineMs: v.Deadline}
	if c.Key != "" {
		e := rep.Effect
		st.Effect = &proto.EffectResult{Key: e.Key, Status: e.Status, Epoch: e.Epoch, Gated: e.Gated,
			Approved: e.Approved, Outcome: e.Outcome, Result: e.Result}
		if n := e.Note; n != nil {
			st.Effect.SinceMs, st.Effect.Description, st.Effect.ArgsDigest, st.Effect.Reason = n.Since, n.Description, n.ArgsDigest, n.Reason
		}
	}
	return st
}

// release turns answers into the bytes to send, appended to out, once the log holds
// every record they rest on: the one place that orders "durable, then reply" (D1).
// An answer that rests on a record the log could not make durable becomes the
// refusal instead (fail closed, F1). It reports whether an answer closes the
// connection.
func (s *Server) release(out []byte, as []answer) ([]byte, bool) {
	var upto wal.LSN
	for _, a := range as {
		upto = max(upto, a.after)
	}
	failed := s.node.Durable(upto)
	closeAfter := false
	for _, a := range as {
		line := a.line
		if failed != nil && a.after > 0 && s.node.Durable(a.after) != nil {
			line = proto.AppendError(nil, a.id, wireError(failed)) // never acknowledged
		} else {
			s.metrics.countSent(&a)
		}
		out = append(out, line...)
		closeAfter = closeAfter || a.close
	}
	return out, closeAfter
}
