package server

import (
	"context"
	"net"
	"time"

	"github.com/soundgate/soundgate/impl/proto"
)

// Shutdown stops the server gracefully: it stops accepting, refuses every parked admit
// and every request read from now on with shutting_down, sends every answer already
// decided (after it is durable), and closes the connections. It returns when all
// connection goroutines have ended, or ctx's error if they have not by then (the
// connections are then closed abruptly).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	close(s.doneC)
	for l := range s.listeners {
		l.Close()
	}
	for r, ws := range s.waiters {
		for _, w := range ws {
			w.timer.Stop()
			w.c.parked--
			w.c.push(answer{line: proto.AppendError(nil, w.id, proto.ErrShuttingDown)})
		}
		delete(s.waiters, r)
	}
	s.nWaiters = 0
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		if c.nc != nil { // the event loop's connections have no net.Conn
			conns = append(conns, c.nc) // read under the lock: the loop may take it (add)
		}
	}
	lp := s.loop
	s.mu.Unlock()

	// Unblock the readers; what they already read is answered, nothing more is read.
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now())
	}
	if lp != nil {
		lp.stop(false)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		for _, nc := range conns {
			nc.Close()
		}
		if lp != nil {
			lp.stop(true)
		}
		return ctx.Err()
	}
}
