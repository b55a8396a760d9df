package node

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/wal"
)

// The snapshotter's pace. It works in slices of at least pacedSliceMin and then
// sleeps pacedIdle times as long, so that it uses at most a fifth of a core: a gate
// whose cores are busy serving must not wait for its own compaction. A snapshot of a
// large state then takes five times its encoding time.
const (
	pacedSliceMin = time.Millisecond
	pacedIdle     = 4
)

// cutBudget is about how many runs and effects one core.Cut.Take copies under the
// node's lock: the longest the snapshotter holds it (a larger run is copied a slice
// of it at a time). A variable for the tests, which make it small to interleave
// admits with a cut.
var cutBudget = 4096

// encodeBudget is how many runs and effects the snapshotter encodes between two
// pauses: a pause yields the core, so that on a machine of few cores a goroutine
// that serves never waits long behind the encoding of a large run.
const encodeBudget = 1024

// snapshotChunk is about how many bytes of a snapshot the snapshotter hands to the
// log at a time.
const snapshotChunk = 1 << 20

// tookPiece, if set, is called after each piece of a cut is copied, off the lock: the
// tests apply commands there, between two pieces.
var tookPiece func()

// snapshotter compacts the log: when a snapshot is due it begins a core.Cut under the
// node's lock, at the state after the last record appended, copies the cut a piece at
// a time under the lock and encodes the pieces off it, paced, while the node keeps
// serving; the log then replaces the records the snapshot covers.
type snapshotter struct {
	n        *Node
	log      Compactor
	every    uint64
	check    time.Duration
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	// The snapshotter goroutine's own.
	pace     pacer
	lastSnap wal.LSN // the last snapshot's position (0: none)
	entries  int     // runs and effects in the last snapshot this process took
}

func startSnapshotter(n *Node, log Compactor) *snapshotter {
	s := &snapshotter{n: n, log: log, every: n.cfg.SnapshotEvery, check: n.cfg.SnapshotCheck,
		stop: make(chan struct{}), done: make(chan struct{})}
	if s.check <= 0 {
		s.check = time.Second
	}
	if st, ok := log.(interface{ Stats() wal.Stats }); ok {
		s.lastSnap = st.Stats().SnapshotLSN
	}
	go s.loop()
	return s
}

func (s *snapshotter) close() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
}

func (s *snapshotter) stopping() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *snapshotter) loop() {
	defer close(s.done)
	t := time.NewTicker(s.check)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.n.mu.Lock()
		last, failed := s.n.lastLSN, s.n.failed != nil
		s.n.mu.Unlock()
		if failed {
			return // the log is gone until a restart
		}
		if last > s.lastSnap && snapshotDue(uint64(last-s.lastSnap), s.every, s.entries) {
			s.take()
		}
	}
}

// snapshotDue: a snapshot is due once at least every records follow the last one,
// and at least as many as the last snapshot held runs and effects, so that each
// snapshot is paid for by as many records as it encodes (Redis rewrites its
// append-only file on a like rule, by size). The disk then holds at most the
// snapshot, max(every, entries) records, what one check interval appends, and a
// segment.
func snapshotDue(recordsSince, every uint64, entries int) bool {
	return recordsSince >= every && recordsSince >= uint64(entries)
}

// take writes a snapshot of the state after the last record appended; the log then
// deletes the segments it covers. The state goes to the log in chunks of about
// snapshotChunk bytes, so that no buffer grows with it. It gives up, writing
// nothing, if the node fails or closes meanwhile.
func (s *snapshotter) take() {
	began := time.Now()
	s.n.mu.Lock()
	if s.n.failed != nil {
		s.n.mu.Unlock()
		return
	}
	upto, cut := s.n.lastLSN, s.n.gate.BeginCut()
	s.n.mu.Unlock()
	defer func() {
		s.n.mu.Lock()
		cut.End()
		s.n.mu.Unlock()
	}()
	w, err := s.log.BeginSnapshot(upto)
	if err != nil {
		s.failed(upto, err)
		return
	}
	defer w.Abort() // after Commit or a failed Write, nothing

	buf := cut.AppendHeader(make([]byte, 0, snapshotChunk+snapshotChunk/4))
	written := 0
	s.pace.start()
	for more := true; more; {
		if s.stopping() {
			return
		}
		buf, more = cut.AppendRetired(buf, encodeBudget)
		if len(buf) >= snapshotChunk {
			if _, err := w.Write(buf); err != nil {
				s.failed(upto, err)
				return
			}
			written, buf = written+len(buf), buf[:0]
			s.pace.pause()
		}
	}
	for more := true; more; {
		if s.stopping() {
			return
		}
		s.n.mu.Lock()
		more = cut.Take(cutBudget)
		s.n.mu.Unlock()
		if more && tookPiece != nil {
			tookPiece()
		}
		for part := more; part || !more && len(buf) > 0; {
			if part {
				buf, part = cut.AppendTaken(buf, encodeBudget)
			}
			if len(buf) >= snapshotChunk || !more && len(buf) > 0 {
				if _, err := w.Write(buf); err != nil {
					s.failed(upto, err)
					return
				}
				written, buf = written+len(buf), buf[:0]
			}
			s.pace.pause()
		}
	}
	encoded := time.Since(began)
	if a := s.n.cfg.Audit; a != nil {
		if err := a.Sync(upto); err != nil { // the log would forget what the trail lacks
			s.failed(upto, fmt.Errorf("the audit trail: %w", err))
			return
		}
	}
	if err := w.Commit(); err != nil {
		s.failed(upto, err)
		return
	}
	s.lastSnap, s.entries = upto, cut.Entries()
	attrs := []any{"lsn", upto, "bytes", written, "entries", s.entries,
		"encode", encoded.Round(time.Microsecond), "took", time.Since(began).Round(time.Microsecond)}
	if st, ok := s.log.(interface{ Stats() wal.Stats }); ok {
		attrs = append(attrs, "segments", st.Stats().Segments)
	}
	s.n.log.Info("snapshot", attrs...)
}

// failed logs a snapshot's failure, unless the log failed or closed: the node
// reports those itself.
func (s *snapshotter) failed(upto wal.LSN, err error) {
	if !errors.Is(err, wal.ErrFailed) && !errors.Is(err, wal.ErrClosed) {
		s.n.log.Error("snapshot", "lsn", upto, "err", err)
	}
}

// pacer keeps the snapshotter's share of the CPU: between start and the end of the
// work, each pause after a slice of work of at least pacedSliceMin sleeps pacedIdle
// times the slice, and any other pause yields the core to whatever waits for one.
type pacer struct{ since time.Time }

func (p *pacer) start() { p.since = time.Now() }

func (p *pacer) pause() {
	if worked := time.Since(p.since); worked >= pacedSliceMin {
		time.Sleep(pacedIdle * worked)
		p.since = time.Now()
	} else {
		runtime.Gosched()
	}
}
