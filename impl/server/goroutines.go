package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/impl/proto"
)

// gconn is a connection served by the goroutine transport: a reader goroutine feeds
// the session from the socket, and a writer goroutine sends its answers. It is the
// transport of platforms without the event loop, of Config.Goroutines, and of a
// connection whose socket the loop cannot take.
type gconn struct {
	ss     *session
	nc     net.Conn
	signal chan struct{} // wakes the writer: answers queued, or the reader ended
	room   chan struct{} // wakes a reader waiting for outbox room
	closed chan struct{} // closed with the connection: a waiting reader leaves

	sending atomic.Bool // the writer holds answers it took and has not written (idleCheck)

	mu   sync.Mutex
	done bool // the reader has ended
}

// serveGoroutines starts the goroutine transport of ss over nc.
func serveGoroutines(ss *session, nc net.Conn) {
	s := ss.s
	g := &gconn{ss: ss, nc: nc, signal: make(chan struct{}, 1), room: make(chan struct{}, 1), closed: make(chan struct{})}
	ss.rd = proto.NewReader(g)
	ss.kick = func() { notify(g.signal) }
	ss.onHello = func() { g.rearm() } // the hello's deadline gives way to the idle rule's
	ss.sending = g.sending.Load
	s.mu.Lock()
	ss.interrupt = g.interrupt
	// A peer must say hello promptly: a silent connection would hold a slot forever.
	// Set under the lock, so that a Shutdown that began meanwhile is not undone.
	if s.closing {
		nc.SetReadDeadline(time.Now())
	} else {
		nc.SetReadDeadline(time.Now().Add(s.cfg.Limits.HelloTimeout))
	}
	s.wg.Add(1) // the reader's
	s.mu.Unlock()
	go g.read()
	go g.write()
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// interrupt is Shutdown's: read nothing more (what was read is answered), or with
// abort close the connection now.
func (g *gconn) interrupt(abort bool) {
	if abort {
		g.nc.Close()
		return
	}
	g.nc.SetReadDeadline(time.Now())
}

// Read is the socket as the session reads it (proto.Reader): it touches the session
// for every read that brings bytes, and when a read deadline passes after hello, it
// reads on if rearm finds a later one. The hello's deadline, Shutdown's and an idle
// agent's end the read (a deadline error, which ends the session).
func (g *gconn) Read(p []byte) (int, error) {
	for {
		n, err := g.nc.Read(p)
		if n > 0 {
			g.ss.touch(time.Now())
		}
		if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) || g.ss.cred == nil || !g.rearm() {
			return n, err
		}
	}
}

// rearm sets the read deadline to the idle rule's next look (none for a role it
// does not apply to), and reports whether the reader may read on: false once
// Shutdown has begun, or for an agent's connection the rule finds expired (counted).
// The deadline is set under the server's lock, and only while it is not closing:
// Shutdown sets closing under that lock before it sets its own deadline (now), so
// a reader that Shutdown woke, or that re-arms while Shutdown begins, never puts
// the wake-up off.
func (g *gconn) rearm() bool {
	s := g.ss.s
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	expired, next := g.ss.idleCheck(time.Now())
	if !expired {
		g.nc.SetReadDeadline(next)
	}
	s.mu.Unlock()
	if expired {
		g.ss.idleClosed()
	}
	return !expired
}

func (g *gconn) read() {
	defer g.ss.s.wg.Done()
	backlogged := func() bool { return g.ss.queued() >= g.ss.s.cfg.Limits.WriteQueueMax }
	for g.ss.feed(backlogged) == readPaused && g.waitRoom() {
	}
	g.ss.s.node.Leave(g.ss.party) // the peer sends nothing more: its waiting admits end
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
	notify(g.signal)
}

// waitRoom blocks the reader while the peer has WriteQueueMax answers waiting:
// back-pressure on a peer that pipelines faster than it reads its answers. It
// reports false if the connection closed meanwhile.
func (g *gconn) waitRoom() bool {
	for g.ss.queued() >= g.ss.s.cfg.Limits.WriteQueueMax {
		select {
		case <-g.room:
		case <-g.closed: // the writer dropped a peer that does not read
			return false
		case <-g.ss.s.doneC:
			return false
		}
	}
	return true
}

func (g *gconn) ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done
}

func (g *gconn) write() {
	defer g.close()
	var batch []answer
	var out []byte
	for {
		g.sending.Store(true) // before take: the idle rule sees the answers in one hand or the other
		batch = g.ss.take(batch[:0])
		notify(g.room)
		if len(batch) == 0 {
			g.sending.Store(false)
			// Once the reader has ended no admit of the session waits (Leave), so an
			// empty outbox then is the end.
			if g.ended() && g.ss.queued() == 0 {
				return
			}
			<-g.signal
			continue
		}
		var quit bool
		out, quit = g.ss.s.release(out[:0], batch)
		clear(batch)
		g.nc.SetWriteDeadline(time.Now().Add(g.ss.s.cfg.Limits.WriteTimeout))
		g.ss.unsent.Store(int64(len(out))) // a watch's room
		if _, err := g.nc.Write(out); err != nil || quit {
			return
		}
		g.ss.unsent.Store(0)
		g.ss.touch(time.Now()) // before sending is cleared (the loop's next turn)
		if cap(out) > 64<<10 {
			out = nil // a burst's buffer is not kept for an idle connection
		}
	}
}

func (g *gconn) close() {
	g.nc.Close()
	close(g.closed)
	g.ss.s.forget(g.ss)
}
