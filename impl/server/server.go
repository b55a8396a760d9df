package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

// Log is what the server needs of a write-ahead log; *wal.Log implements it.
type Log interface {
	// Append adds one record in order and returns its position. Called under the
	// server's lock, so the log's order is the order the core applied the commands in.
	Append(rec []byte) (wal.LSN, error)
	// WaitDurable returns once every record up to lsn is on stable storage, or the
	// log's sticky error.
	WaitDurable(ctx context.Context, lsn wal.LSN) error
}

// Config configures a Server.
type Config struct {
	Roles  *Roles      // required: who may connect and what each may do
	Core   core.Limits // limits of the admission core (used when Gate is nil)
	Limits Limits      // limits of the server
	// Log makes the server durable: every state change is appended and synced before
	// any answer that depends on it is sent. Nil is the in-memory mode, for tests and
	// demos only: nothing survives a restart.
	Log Log
	// Gate is the recovered state to serve (from a log replay); nil starts empty.
	Gate *core.Gate
	// Now is the gate's clock in milliseconds; nil uses the wall clock.
	Now    func() core.Time
	Logger *slog.Logger // nil: discard
	// Version is reported in the hello answer ("soundgate <Version>").
	Version string
	// LastLSN is the position of the last record replayed into Gate, so that
	// snapshots name the right position.
	LastLSN wal.LSN
	// Goroutines serves each connection with a reader and a writer goroutine instead
	// of the event loop (Linux epoll, the default there). Other platforms always do.
	// The loop costs about half the CPU per request; this is for comparing the two
	// and for tests that run the same suite on both.
	Goroutines bool
}

// Server serves the gate's protocol. Create it with New, feed it listeners with Serve,
// stop it with Shutdown.
type Server struct {
	cfg    Config
	log    *slog.Logger
	now    func() core.Time
	nudgeC chan struct{} // re-arms the deadline timer after an open with a deadline
	doneC  chan struct{} // closed by Shutdown

	mu         sync.Mutex
	gate       *core.Gate
	lastLSN    wal.LSN // the last record appended: every answer waits until it is durable
	failed     error   // sticky: once set, every request is refused with unavailable
	closing    bool
	listeners  map[net.Listener]struct{}
	conns      map[*conn]struct{}
	waiters    map[core.RunID][]*waiter
	nWaiters   int
	rec        []byte // scratch for encoding log records (under mu)
	loop       *loop  // the event loop, started by the first Serve (nil: goroutines)
	loopFailed bool   // it could not start: goroutines serve

	wg sync.WaitGroup // connection and background goroutines
}

// ErrNoRoles: a server needs a roles file; an open gate would fail open.
var ErrNoRoles = errors.New("soundgate/server: no roles configured")

// New returns a server over cfg.Gate (or an empty gate) and starts its deadline timer.
func New(cfg Config) (*Server, error) {
	if cfg.Roles == nil || len(cfg.Roles.creds) == 0 {
		return nil, ErrNoRoles
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Core == (core.Limits{}) {
		cfg.Core = core.DefaultLimits()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, now: cfg.Now, gate: cfg.Gate,
		nudgeC: make(chan struct{}, 1), doneC: make(chan struct{}),
		listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{}, waiters: map[core.RunID][]*waiter{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = func() core.Time { return core.Time(time.Now().UnixMilli()) }
	}
	if s.gate == nil {
		s.gate = core.New(cfg.Core)
	}
	s.lastLSN = cfg.LastLSN
	s.wg.Add(1)
	go s.deadlineLoop()
	return s, nil
}

// Serve accepts connections on l until Shutdown. It returns nil after Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			delete(s.listeners, l)
			s.mu.Unlock()
			if closing {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return fmt.Errorf("soundgate/server: accept: %w", err)
			}
			// Out of file descriptors, or another passing failure: back off and go on,
			// as net/http does, rather than stop the gate.
			s.log.Warn("accept failed; retrying", "err", err, "backoff", backoff)
			select {
			case <-time.After(backoff):
			case <-s.doneC:
			}
			backoff = min(2*backoff, time.Second)
			s.mu.Lock()
			s.listeners[l] = struct{}{}
			s.mu.Unlock()
			continue
		}
		backoff = 5 * time.Millisecond
		s.mu.Lock()
		if s.closing || len(s.conns) >= s.cfg.Limits.ConnectionsMax {
			closing := s.closing
			s.mu.Unlock()
			refusal := proto.ErrOverloaded
			if closing {
				refusal = proto.ErrShuttingDown
			}
			nc.SetWriteDeadline(time.Now().Add(time.Second))
			nc.Write(proto.AppendError(nil, proto.ID{}, refusal))
			nc.Close()
			continue
		}
		c := newConn(s, nc)
		s.conns[c] = struct{}{}
		lp := s.loopLocked()
		if lp != nil {
			c.lp = lp
			s.wg.Add(1) // the loop's Done when it closes c
			s.mu.Unlock()
			if lp.add(c, nc) {
				continue
			}
			c.lp = nil // the socket cannot be taken: goroutines serve it
			s.mu.Lock()
		}
		s.wg.Add(2 - btoi(lp != nil))
		// A peer must say hello promptly: a silent connection would hold a slot
		// forever. Set here, under the lock, and not by the reader when it starts:
		// a Shutdown in between set its own deadline (now), which this would undo,
		// and the connection would hold Shutdown for HelloTimeout.
		nc.SetReadDeadline(time.Now().Add(s.cfg.Limits.HelloTimeout))
		s.mu.Unlock()
		go c.readLoop()
		go c.writeLoop()
	}
}

// testGoroutines makes every server of this process serve with goroutines, as if
// each Config said Goroutines: the package's tests set it with -io=goroutines
// (main_test.go), so that one suite checks both models.
var testGoroutines bool

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loopLocked returns the server's event loop, starting it on first use; nil with
// Config.Goroutines, on a platform without one, or if it cannot start (then the
// goroutine model serves, and the log says why).
func (s *Server) loopLocked() *loop {
	if s.cfg.Goroutines || testGoroutines || !loopAvailable || s.loopFailed {
		return nil
	}
	if s.loop == nil {
		lp, err := newLoop(s)
		if err != nil {
			s.loopFailed = true
			s.log.Warn("event loop unavailable; serving a goroutine per connection", "err", err)
			return nil
		}
		s.loop = lp
	}
	return s.loop
}

// Entries returns the runs and effects the gate holds (core.Gate.Entries): what a
// snapshot encodes.
func (s *Server) Entries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate.Entries()
}

// Failed returns the reason the server refuses every request, or nil while it is healthy.
func (s *Server) Failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// Snapshot encodes the gate's state together with the last log position it includes,
// for log compaction (wal.Log.Snapshot). The snapshot is taken under the lock, so it
// is exactly the state after record lsn.
func (s *Server) Snapshot() (lsn wal.LSN, state []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		// The core may hold a change whose record never reached the log.
		return 0, nil, s.unavailable()
	}
	state, err = s.gate.MarshalBinary()
	return s.lastLSN, state, err
}

// stepLocked applies one command and logs it if it changed the state. On a log
// failure the server fails closed and the error is ErrUnavailable.
func (s *Server) stepLocked(c core.Command) (core.Reply, error) {
	if s.failed != nil {
		return core.Reply{}, s.unavailable()
	}
	rep := s.gate.Step(c)
	if rep.Persist && s.cfg.Log != nil {
		s.rec = core.AppendCommand(s.rec[:0], c)
		lsn, err := s.cfg.Log.Append(s.rec)
		if err != nil {
			s.failLocked(err)
			return core.Reply{}, s.unavailable()
		}
		s.lastLSN = lsn
	}
	if c.Op == core.OpOpen && rep.Open.Created && c.Deadline > 0 {
		select {
		case s.nudgeC <- struct{}{}:
		default:
		}
	}
	if rep.Wake {
		s.wakeLocked(c.Run)
	}
	return rep, nil
}

func (s *Server) unavailable() error {
	return fmt.Errorf("%w: the gate refuses until restarted: %v", proto.ErrUnavailable, s.failed)
}

// failLocked puts the server into its fail-closed state.
func (s *Server) failLocked(err error) {
	if s.failed == nil {
		s.failed = err
		s.log.Error("log failed: refusing every request until restart (fail closed)", "err", err)
		for r, ws := range s.waiters { // parked admits hear it now, not when their wait ends
			for _, w := range ws {
				w.timer.Stop()
				w.c.parked--
				w.c.push(answer{line: proto.AppendError(nil, w.id, s.unavailable())})
			}
			delete(s.waiters, r)
		}
		s.nWaiters = 0
	}
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	s.failLocked(err)
	s.mu.Unlock()
}

// deadlineLoop times out runs when their deadlines pass on the gate's clock, and
// answers the admits parked on them.
func (s *Server) deadlineLoop() {
	defer s.wg.Done()
	const idleCheck = time.Second
	timer := time.NewTimer(idleCheck)
	defer timer.Stop()
	for {
		select {
		case <-s.doneC:
			return
		case <-timer.C:
		case <-s.nudgeC:
		}
		s.Expire()
		s.mu.Lock()
		next, _, ok := s.gate.NextDeadline()
		s.mu.Unlock()
		wait := idleCheck
		if ok {
			if d := time.Duration(next-s.now()) * time.Millisecond; d < wait {
				wait = max(d, time.Millisecond)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// Expire times out every run whose deadline has passed on the gate's clock now, logs
// each timeout and answers the admits parked on those runs. It returns their ids. The
// server calls it on its own; tests with a fake clock call it directly.
func (s *Server) Expire() []core.RunID {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []core.RunID
	for s.failed == nil {
		at, run, ok := s.gate.NextDeadline()
		if !ok || at > now {
			break
		}
		// Through Step, so that the log records the timeout (replay: Timeout(run)).
		if _, err := s.stepLocked(core.Command{Op: core.OpTimeout, Run: run}); err != nil {
			break
		}
		out = append(out, run)
	}
	return out
}

// TimeoutRun times run r out now, as the gate's timer does when r's deadline passes
// (logged, parked admits answered). It is for operators' tooling and for tests that
// drive the Timeout action without a clock; it reports whether r changed.
func (s *Server) TimeoutRun(r core.RunID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep, err := s.stepLocked(core.Command{Op: core.OpTimeout, Run: r})
	if err == nil {
		err = rep.Err
	}
	return rep.Persist, err
}
