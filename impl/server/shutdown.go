package server

import "context"

// Shutdown stops the server gracefully: it stops accepting, stops the node (every
// waiting admit and every request read from now on is refused with shutting_down),
// sends every answer already decided (after it is durable), closes the
// connections, and then ServeWeb's listeners. It returns when every transport
// goroutine has ended, or ctx's error if they have not by then (the connections are
// then closed abruptly).
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
	var interrupts []func(abort bool)
	for ss := range s.sessions {
		if ss.interrupt != nil { // the loop's sessions stop with the loop
			interrupts = append(interrupts, ss.interrupt)
		}
	}
	lp := s.loop
	s.mu.Unlock()
	// The HTTP listener closes last: /healthz says "shutting down" meanwhile.
	defer s.closeWebs()

	s.node.Stop()
	for _, stop := range interrupts {
		stop(false) // what was read is answered, nothing more is read
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
		for _, stop := range interrupts {
			stop(true)
		}
		if lp != nil {
			lp.stop(true)
		}
		return ctx.Err()
	}
}
