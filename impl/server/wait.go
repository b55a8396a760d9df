package server

import (
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// waiter is an admit that was answered held and asked to wait (wait_ms). It is
// re-asked, with the same arguments, right after every decision, cancel, fence or
// timeout of its run, and answered as soon as the answer is not held; when its wait
// runs out it is re-asked once more and answered, held or not.
type waiter struct {
	c     *conn
	id    proto.ID
	cmd   core.Command
	timer *time.Timer
}

func (s *Server) parkLocked(c *conn, id proto.ID, cmd core.Command, wait time.Duration) {
	w := &waiter{c: c, id: id, cmd: cmd}
	s.waiters[cmd.Run] = append(s.waiters[cmd.Run], w)
	s.nWaiters++
	c.parked++
	w.timer = time.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.unparkLocked(w) {
			s.reaskLocked(w)
		}
	})
}

// unparkLocked removes w from the waiters; false if it was already answered.
func (s *Server) unparkLocked(w *waiter) bool {
	ws := s.waiters[w.cmd.Run]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			if len(ws) == 0 {
				delete(s.waiters, w.cmd.Run)
			} else {
				s.waiters[w.cmd.Run] = ws
			}
			s.nWaiters--
			w.c.parked--
			w.timer.Stop()
			return true
		}
	}
	return false
}

// reaskLocked asks w's admit again now and answers it.
func (s *Server) reaskLocked(w *waiter) {
	cmd := w.cmd
	cmd.Now = s.now()
	if s.answerReplyLocked(w, cmd, s.gate.Step(cmd)) {
		s.wakeLocked(cmd.Run) // the re-ask timed the run out: the others hear it too
	}
}

// wakeLocked re-asks, in the order they parked, the admits waiting on run r, and
// answers those whose answer is no longer held. A re-ask can itself change the run
// (it finds the deadline passed and times the run out); then the admits kept as
// held are asked again, until a pass changes nothing.
func (s *Server) wakeLocked(r core.RunID) {
	ws := s.waiters[r]
	if len(ws) == 0 {
		return
	}
	delete(s.waiters, r)
	s.nWaiters -= len(ws)
	for _, w := range ws {
		w.c.parked--
	}
	for len(ws) > 0 {
		var still []*waiter
		changed := false
		for _, w := range ws {
			cmd := w.cmd
			cmd.Now = s.now()
			rep := s.gate.Step(cmd) // a held answer changes nothing; anything else is logged below
			if rep.Err == nil && rep.Admit.Answer == core.AnswerHeld && !rep.Persist {
				still = append(still, w)
				continue
			}
			w.timer.Stop()
			changed = s.answerReplyLocked(w, cmd, rep) || changed
		}
		if !changed {
			ws = still
			break
		}
		ws = still
	}
	if s.failed != nil { // the log failed during this pass: no one stays parked
		for _, w := range ws {
			w.timer.Stop()
			w.c.push(answer{line: proto.AppendError(nil, w.id, s.unavailable())})
		}
		return
	}
	if len(ws) > 0 {
		s.waiters[r] = append(ws, s.waiters[r]...)
		s.nWaiters += len(ws)
		for _, w := range ws {
			w.c.parked++
		}
	}
}

// answerReplyLocked logs a re-asked admit's state change, if any, and answers it. It
// reports whether the re-ask changed the run for the other waiters (Wake).
func (s *Server) answerReplyLocked(w *waiter, cmd core.Command, rep core.Reply) bool {
	if rep.Persist && s.cfg.Log != nil && s.failed == nil {
		s.rec = core.AppendCommand(s.rec[:0], cmd)
		lsn, err := s.cfg.Log.Append(s.rec)
		if err != nil {
			s.failLocked(err)
		} else {
			s.lastLSN = lsn
		}
	}
	if s.failed != nil {
		w.c.push(answer{line: proto.AppendError(nil, w.id, s.unavailable())})
		return false
	}
	if rep.Err != nil {
		w.c.push(answer{line: proto.AppendError(nil, w.id, rep.Err), after: s.lastLSN})
		return false
	}
	w.c.push(answer{line: proto.AppendResult(nil, w.id, admitResult(rep.Admit)), after: s.lastLSN})
	return rep.Wake
}

// dropWaitersLocked forgets the parked admits of a closed connection.
func (s *Server) dropWaitersLocked(c *conn) {
	for r, ws := range s.waiters {
		kept := ws[:0]
		for _, w := range ws {
			if w.c == c {
				w.timer.Stop()
				s.nWaiters--
				c.parked--
				continue
			}
			kept = append(kept, w)
		}
		if len(kept) == 0 {
			delete(s.waiters, r)
		} else {
			s.waiters[r] = kept
		}
	}
}
