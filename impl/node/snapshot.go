package node

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// feedMax bounds the records the node hands the snapshotter that it has not applied
// yet. A snapshotter that far behind (a disk that takes minutes to write a snapshot)
// is dropped with an error in the log: snapshots stop until a restart, admits never
// wait for it.
const feedMax = 1 << 22

// feedChunk is how many records one block of the feed holds: the node appends into
// blocks that never move, and the snapshotter hands emptied blocks back.
const feedChunk = 1024

// The snapshotter's pace. It works in slices of at least pacedSliceMin and then
// sleeps pacedIdle times as long, so that it uses at most a fifth of a core: a gate
// whose cores are busy serving must not wait for its own compaction. A snapshot of a
// large state then takes five times its encoding time, during which the feed grows.
const (
	pacedSliceMin = time.Millisecond
	pacedIdle     = 4
	// pacedEffects is how many effects the encoder encodes between two looks at the
	// clock.
	pacedEffects = 1024
)

// fed is one record the node appended, for the shadow.
type fed struct {
	lsn wal.LSN
	cmd core.Command
}

// snapshotter compacts the log off the node's lock: the node hands it every record it
// appends (feedLocked, a slice append under the lock it already holds), and its own
// goroutine applies them to the shadow, a second core at the state after record
// shadowLSN, and encodes the shadow when a snapshot is due.
type snapshotter struct {
	n        *Node
	log      Compactor
	every    uint64
	check    time.Duration
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	feed    [][]fed // the node's lock: blocks of records, oldest first
	fed     int     // the node's lock: records in feed
	spare   [][]fed // the node's lock: emptied blocks
	dropped bool    // the node's lock: fed no more

	// The snapshotter goroutine's own.
	pace      pacer
	shadow    *core.Gate
	shadowLSN wal.LSN
	lastSnap  wal.LSN // the last snapshot's position (0: none)
	entries   int     // runs and effects in the last snapshot this process took
}

func startSnapshotter(n *Node, log Compactor, shadow *core.Gate, last wal.LSN) *snapshotter {
	s := &snapshotter{n: n, log: log, every: n.cfg.SnapshotEvery, check: n.cfg.SnapshotCheck,
		stop: make(chan struct{}), done: make(chan struct{}), shadow: shadow, shadowLSN: last}
	if s.check <= 0 {
		s.check = time.Second
	}
	if st, ok := log.(interface{ Stats() wal.Stats }); ok {
		s.lastSnap = st.Stats().SnapshotLSN
	}
	go s.loop()
	return s
}

func (s *snapshotter) feedLocked(lsn wal.LSN, c core.Command) {
	if s.dropped {
		return
	}
	if s.fed >= feedMax {
		s.n.log.Error("snapshots stop until restart: the snapshotter fell behind", "records", s.fed)
		s.dropLocked()
		return
	}
	if n := len(s.feed); n == 0 || len(s.feed[n-1]) == feedChunk {
		var b []fed
		if k := len(s.spare); k > 0 {
			b, s.spare = s.spare[k-1][:0], s.spare[:k-1]
		} else {
			b = make([]fed, 0, feedChunk)
		}
		s.feed = append(s.feed, b)
	}
	last := len(s.feed) - 1
	s.feed[last] = append(s.feed[last], fed{lsn: lsn, cmd: c})
	s.fed++
}

func (s *snapshotter) dropLocked() {
	s.dropped = true
	s.feed, s.spare, s.fed = nil, nil, 0
}

func (s *snapshotter) close() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
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
		if !s.catchUp() {
			return
		}
		if s.due() {
			s.take()
		}
	}
}

// catchUp applies the records fed so far to the shadow. It reports false once the
// shadow cannot follow (dropped, or a record that does not replay: then the node
// fails closed, since a restart would replay the same record the same way).
func (s *snapshotter) catchUp() bool {
	s.n.mu.Lock()
	blocks, dropped := s.feed, s.dropped
	s.feed, s.fed = nil, 0
	s.n.mu.Unlock()
	if dropped {
		return false
	}
	s.pace.start()
	for _, b := range blocks {
		s.pace.pause()
		for _, f := range b {
			if err := s.apply(f); err != nil {
				s.n.mu.Lock()
				s.n.failLocked(fmt.Errorf("%w: the snapshotter's record %d %v", ErrReplay, f.lsn, err))
				s.n.mu.Unlock()
				return false
			}
		}
		clear(b) // the commands' strings are the node's to free
	}
	s.n.mu.Lock()
	if !s.dropped {
		s.spare = append(s.spare, blocks...)
	}
	s.n.mu.Unlock()
	return true
}

// apply replays one fed record on the shadow; the records come in LSN order.
func (s *snapshotter) apply(f fed) error {
	if f.lsn != s.shadowLSN+1 {
		return fmt.Errorf("follows record %d", s.shadowLSN)
	}
	if err := replayStep(s.shadow, f.cmd); err != nil {
		return err
	}
	s.shadowLSN = f.lsn
	return nil
}

// due: a snapshot is due once at least every records follow the last one, and at
// least as many as the last snapshot held runs and effects, so that each snapshot is
// paid for by as many records as it encodes (Redis rewrites its append-only file on a
// like rule, by size). The disk then holds at most the snapshot, max(every, entries)
// records, what one check interval appends, and a segment.
func (s *snapshotter) due() bool {
	return s.shadowLSN > s.lastSnap && snapshotDue(uint64(s.shadowLSN-s.lastSnap), s.every, s.entries)
}

func snapshotDue(recordsSince, every uint64, entries int) bool {
	return recordsSince >= every && recordsSince >= uint64(entries)
}

// take encodes the shadow and writes it as the snapshot at shadowLSN; the log then
// deletes the segments it covers.
func (s *snapshotter) take() {
	began := time.Now()
	s.pace.start()
	state, err := s.shadow.MarshalBinaryPaced(pacedEffects, s.pace.pause)
	encoded := time.Since(began)
	if err == nil {
		err = s.log.Snapshot(s.shadowLSN, state)
	}
	if err != nil {
		if !errors.Is(err, wal.ErrFailed) && !errors.Is(err, wal.ErrClosed) {
			s.n.log.Error("snapshot", "lsn", s.shadowLSN, "err", err)
		}
		return
	}
	s.lastSnap, s.entries = s.shadowLSN, s.shadow.Entries()
	attrs := []any{"lsn", s.shadowLSN, "bytes", len(state), "encode", encoded.Round(time.Microsecond),
		"took", time.Since(began).Round(time.Microsecond)}
	if st, ok := s.log.(interface{ Stats() wal.Stats }); ok {
		attrs = append(attrs, "segments", st.Stats().Segments)
	}
	s.n.log.Info("snapshot", attrs...)
}

// pacer keeps the snapshotter's share of the CPU: between start and the end of the
// work, each pause after a slice of work of at least pacedSliceMin sleeps pacedIdle
// times the slice.
type pacer struct{ since time.Time }

func (p *pacer) start() { p.since = time.Now() }

func (p *pacer) pause() {
	if worked := time.Since(p.since); worked >= pacedSliceMin {
		time.Sleep(pacedIdle * worked)
		p.since = time.Now()
	}
}
