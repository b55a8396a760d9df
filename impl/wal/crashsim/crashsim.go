// Package crashsim runs the write-ahead log through simulated machine crashes.
//
// Each cycle is one life of a gate: open the log on a walfs.FaultFS, check what
// recovery found against what earlier lives appended and acknowledged, run
// concurrent writers (append, then wait for durability) and a snapshotter, and crash
// the file system at a random operation (a write, fdatasync, create, rename, remove
// or directory sync), keeping a random part of what was not yet durable. The check
// after every crash: the log recovers without error, every record it replays is the
// one appended at that LSN and they follow the snapshot without a gap (WAL.tla's
// NoInvention), the snapshot state is the state of exactly the records it covers, and
// every acknowledged record is there (NoLoss).
//
// Each life is also an abstract trace (Event: append, write, sync, ack, snapshot,
// directory sync, crash, recover, with their LSNs), handed to Config.Trace; package
// internal/waltrace replays it against spec/tla/WAL.tla.
//
// One seed drives the workload and the crash points and is printed; goroutine
// scheduling still varies between runs, so a seed reproduces a run's shape, not
// necessarily its exact interleaving. Writers: 1 and Snapshots off come closest.
package crashsim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Config is one simulation run.
type Config struct {
	Seed          uint64 // drives every random choice
	Cycles        int    // crash-and-recover cycles
	Writers       int    // concurrent writers per life
	RecordsMax    int    // records appended per life at most (then the life crashes anyway)
	OpsMax        int    // the crash happens within this many file-system operations
	SegmentBytes  int64  // segment size (small, to exercise rollover)
	SnapshotEvery int    // snapshot once this many records follow the last snapshot; 0: never
	PayloadMax    int    // record payload size in bytes, drawn from [0, PayloadMax]
	// Trace, if not nil, receives the abstract trace of each life once its crash is
	// over (its recovery, its steps, its crash), and last the final recovery; an
	// error stops the run.
	Trace func(events []Event) error
	// Logf, if not nil, receives a progress line now and then.
	Logf func(format string, args ...any)
}

// Result sums up a run.
type Result struct {
	Cycles         int    // crash-and-recover cycles completed
	RecordsChecked uint64 // replayed records compared with what was appended, over all recoveries
	AckedChecked   uint64 // acknowledged records proven present, over all recoveries
	Acked          uint64 // acknowledgements (WaitDurable returned nil) over all lives
	TornTails      int    // recoveries that truncated a torn tail
	Snapshots      int    // snapshots written
	SnapshotLoads  int    // recoveries that started from a snapshot
	MaxSegments    int    // most segment files seen after a recovery (the disk bound)
	LastLSN        uint64 // LSN of the last record at the end
	Elapsed        time.Duration
}

// Summary is the one-line summary of a run.
func (r Result) Summary(cfg Config) string {
	return fmt.Sprintf("wal crash-recovery: %d crash cycles, %d replayed records checked, %d acknowledged records re-verified (summed over recoveries), 0 lost, %d torn tails truncated, %d snapshots (%d recoveries from one), max %d segments, seed %d, %.1fs, ok",
		r.Cycles, r.RecordsChecked, r.AckedChecked, r.TornTails, r.Snapshots, r.SnapshotLoads, r.MaxSegments, cfg.Seed, r.Elapsed.Seconds())
}

const dir = "/gate/wal"

// model is what the lives appended: the payload and the running state hash per LSN.
type model struct {
	mu     sync.Mutex
	recs   [][]byte // recs[lsn-1]
	hashes []uint64 // hashes[lsn] = state after records 1..lsn; hashes[0] = initial
	acked  atomic.Uint64
}

func (m *model) add(lsn wal.LSN, p []byte) error {
	if uint64(lsn) != uint64(len(m.recs))+1 {
		return fmt.Errorf("append returned lsn %d, want %d", lsn, len(m.recs)+1)
	}
	m.recs = append(m.recs, p)
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], m.hashes[len(m.hashes)-1])
	h.Write(b[:])
	h.Write(p)
	m.hashes = append(m.hashes, h.Sum64())
	return nil
}

// ack records that every record up to lsn is acknowledged.
func (m *model) ack(lsn wal.LSN) {
	for {
		a := m.acked.Load()
		if uint64(lsn) <= a || m.acked.CompareAndSwap(a, uint64(lsn)) {
			return
		}
	}
}

func state(upto wal.LSN, hash uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(upto))
	binary.LittleEndian.PutUint64(b[8:], hash)
	return b
}

// Run runs cfg and returns the first violation as an error naming seed and cycle.
func Run(cfg Config) (Result, error) {
	start := time.Now()
	s := &sim{
		cfg:  cfg,
		rng:  rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		fsys: walfs.NewFaultFS(),
		m:    &model{hashes: []uint64{0}},
		rec:  &recorder{},
	}
	s.tfs = &tracedFS{fs: s.fsys, rec: s.rec}
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		if err := s.life(cycle); err != nil {
			return s.res, fmt.Errorf("crashsim: seed %d cycle %d: %v", cfg.Seed, cycle, err)
		}
	}
	// The last crash is recovered and checked too.
	if err := s.recoverOnly(); err != nil {
		return s.res, fmt.Errorf("crashsim: seed %d after cycle %d: %v", cfg.Seed, cfg.Cycles, err)
	}
	s.res.Elapsed = time.Since(start)
	return s.res, nil
}

// sim is one run: the file system every life shares, the model of what the lives
// appended and acknowledged, and the result so far.
type sim struct {
	cfg  Config
	rng  *rand.Rand
	fsys *walfs.FaultFS
	tfs  *tracedFS // fsys as the log sees it: the I/O steps of the trace
	rec  *recorder
	m    *model
	res  Result
}

// open opens the log after a crash and checks what it recovered; the recovery
// starts the trace of the life.
func (s *sim) open() (*wal.Log, wal.LSN, error) {
	s.fsys.Restart()
	l, err := wal.Open(dir, wal.Options{FS: s.tfs, SegmentBytes: s.cfg.SegmentBytes})
	if err != nil {
		return nil, 0, fmt.Errorf("safety violation: recovery refused the log: %v; files: %s\nrecent file-system operations:\n  %s", err, listing(s.fsys), strings.Join(s.fsys.Trace(), "\n  "))
	}
	last, replay, err := s.checkRecovery(l)
	if err != nil {
		l.Close()
		return nil, 0, fmt.Errorf("safety violation: %v", err)
	}
	s.rec.start(Event{Action: Recover, Replay: replay}, last)
	return l, last, nil
}

// recoverOnly recovers and checks the log once more, and closes it.
func (s *sim) recoverOnly() error {
	l, _, err := s.open()
	if err != nil {
		return err
	}
	events, err := s.rec.finish(false) // the Open and its recovery alone
	if err == nil && s.cfg.Trace != nil {
		err = s.cfg.Trace(events)
	}
	return errors.Join(err, l.Close())
}

// life is one crash-and-recover cycle: open the log, check what it recovered, then
// write until the crash.
func (s *sim) life(cycle int) error {
	l, last, err := s.open()
	if err != nil {
		return err
	}
	if err := s.runUntilCrash(l); err != nil {
		return fmt.Errorf("safety violation: %v", err)
	}
	events, err := s.rec.finish(true)
	if err == nil && s.cfg.Trace != nil {
		err = s.cfg.Trace(events)
	}
	if err != nil {
		return fmt.Errorf("trace validation: %v", err)
	}
	s.res.Cycles++
	s.res.Acked = s.m.acked.Load()
	if s.cfg.Logf != nil && cycle%max(s.cfg.Cycles/10, 1) == 0 {
		s.cfg.Logf("crashsim: cycle %d/%d, %d records checked, last lsn %d, %d snapshots", cycle, s.cfg.Cycles, s.res.RecordsChecked, last, s.res.Snapshots)
	}
	s.res.LastLSN = uint64(last)
	return nil
}

// checkRecovery checks what l recovered against the model (the snapshot, every
// replayed record, every acknowledged record, the disk bound of compaction) and makes
// the model forget the records the crash took, none of them acknowledged. It returns
// the last recovered LSN and what the replay gave.
func (s *sim) checkRecovery(l *wal.Log) (wal.LSN, *Replay, error) {
	if l.Stats().TornBytes > 0 {
		s.res.TornTails++
	}
	replay, err := s.replay(l)
	if err != nil {
		return 0, nil, err
	}
	snapLSN, last := replay.Snapshot, l.Last()
	if snapLSN > last {
		return 0, nil, fmt.Errorf("snapshot %d after the last record %d", snapLSN, last)
	}
	if end := snapLSN + wal.LSN(len(replay.Records)); end != last {
		return 0, nil, fmt.Errorf("replay ends at %d, the log's last record is %d", end, last)
	}
	// NoLoss: the records replayed follow the snapshot without a gap (replay checks
	// it) up to last, so every acknowledged one is there when last reaches it.
	acked := s.m.acked.Load()
	if uint64(last) < acked {
		return 0, nil, fmt.Errorf("lost acknowledged records: recovered up to %d, acknowledged up to %d", last, acked)
	}
	s.res.AckedChecked += acked
	s.m.recs, s.m.hashes = s.m.recs[:last], s.m.hashes[:last+1]
	n := countSegments(s.fsys)
	s.res.MaxSegments = max(s.res.MaxSegments, n)
	if snapLSN > 0 {
		if bound := segmentBound(s.cfg, last-snapLSN); n > bound {
			return 0, nil, fmt.Errorf("compaction left %d segments for %d records after the snapshot at %d (bound %d)", n, last-snapLSN, snapLSN, bound)
		}
	}
	return last, replay, nil
}

// segmentBound is the most segment files compaction may leave for records after the
// snapshot: a full segment holds at least perSeg records, so they need at most this
// many segments, plus the one holding the snapshot's LSN and the active one.
func segmentBound(cfg Config, records wal.LSN) int {
	recMax := int64(20 + cfg.PayloadMax)
	perSeg := max(1, (cfg.SegmentBytes-32-recMax)/recMax)
	return int((int64(records)+perSeg-1)/perSeg) + 2
}

// replay replays l and checks the snapshot's state and every record against the
// model (NoInvention: a prefix of what was appended, in order, each record the one
// appended at its LSN). It returns what the replay gave.
func (s *sim) replay(l *wal.Log) (*Replay, error) {
	m := s.m
	r := &Replay{}
	next := wal.LSN(1) // without a snapshot, the log starts at 1
	err := l.Replay(func(upto wal.LSN, st []byte) error {
		r.Snapshot = upto
		s.res.SnapshotLoads++
		if int(upto) >= len(m.hashes) {
			return fmt.Errorf("snapshot at %d beyond the %d records ever appended", upto, len(m.recs))
		}
		if want := state(upto, m.hashes[upto]); string(st) != string(want) {
			return fmt.Errorf("snapshot at %d holds another state", upto)
		}
		next = upto + 1
		return nil
	}, func(lsn wal.LSN, p []byte) error {
		if lsn != next {
			return fmt.Errorf("replayed lsn %d, want %d", lsn, next)
		}
		next++
		if int(lsn) > len(m.recs) || string(p) != string(m.recs[lsn-1]) {
			return fmt.Errorf("record %d is not the one appended", lsn)
		}
		s.res.RecordsChecked++
		r.Records = append(r.Records, Record{LSN: lsn, Payload: Digest(p)})
		return nil
	})
	return r, err
}

// runUntilCrash runs the life's writers and snapshotter on l until the crash
// scheduled at a random operation (or until RecordsMax records), closes l, and
// crashes the file system if the writers stopped first.
func (s *sim) runUntilCrash(l *wal.Log) error {
	s.fsys.CrashAtOp(1+int64(s.rng.IntN(s.cfg.OpsMax)), rand.New(rand.NewPCG(s.rng.Uint64(), 1)), nil)
	var wg sync.WaitGroup
	var appended atomic.Int64
	errc := make(chan error, s.cfg.Writers+1)
	for w := 0; w < s.cfg.Writers; w++ {
		wrng := rand.New(rand.NewPCG(s.rng.Uint64(), uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.write(l, wrng, &appended); err != nil {
				errc <- err
			}
		}()
	}
	if s.cfg.SnapshotEvery > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.snapshot(l, &appended); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	l.Close()
	close(errc)
	for err := range errc {
		return err
	}
	if !s.fsys.Crashed() {
		s.fsys.Crash(rand.New(rand.NewPCG(s.rng.Uint64(), 2)))
	}
	return nil
}

// write is one writer: it appends random records (and adds each to the model under
// the model's lock, so that the model's order is the LSN order), waits for each to
// be durable and records the acknowledgement, until the life has appended
// RecordsMax records or the log fails.
func (s *sim) write(l *wal.Log, rng *rand.Rand, appended *atomic.Int64) error {
	m := s.m
	for appended.Add(1) <= int64(s.cfg.RecordsMax) {
		p := make([]byte, rng.IntN(s.cfg.PayloadMax+1))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		m.mu.Lock()
		lsn, err := l.Append(p)
		if err == nil {
			err = m.add(lsn, p)
			if err != nil {
				m.mu.Unlock()
				return err
			}
			s.rec.add(Event{Action: Append, LSN: lsn, Payload: Digest(p)})
		}
		m.mu.Unlock()
		if err == nil {
			err = l.WaitDurable(context.Background(), lsn)
		}
		if err != nil {
			if !errors.Is(err, wal.ErrFailed) {
				return fmt.Errorf("writer: unexpected error %w", err)
			}
			return nil
		}
		m.ack(lsn)
		s.rec.add(Event{Action: Ack, LSN: lsn})
	}
	return nil
}

// snapshot is the snapshotter: once SnapshotEvery durable records follow the last
// snapshot, it snapshots the model's state at the durable LSN, until the log fails
// or the life has appended its records.
func (s *sim) snapshot(l *wal.Log, appended *atomic.Int64) error {
	m := s.m
	for l.Err() == nil && appended.Load() <= int64(s.cfg.RecordsMax) {
		cur := l.Stats().SnapshotLSN
		d := l.Durable()
		if d < cur+wal.LSN(s.cfg.SnapshotEvery) {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		m.mu.Lock()
		st := state(d, m.hashes[d])
		m.mu.Unlock()
		s.rec.setSnapshot(d)
		if err := l.Snapshot(d, st); err != nil {
			if !errors.Is(err, wal.ErrFailed) {
				return fmt.Errorf("snapshot: unexpected error %w", err)
			}
			return nil
		}
		m.mu.Lock()
		s.res.Snapshots++
		m.mu.Unlock()
	}
	return nil
}

func countSegments(fsys *walfs.FaultFS) int {
	names, _ := fsys.ReadDir(dir)
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".wal") {
			n++
		}
	}
	return n
}

// listing names the files of the log's directory and their sizes, for a failure report.
func listing(fsys *walfs.FaultFS) string {
	names, _ := fsys.ReadDir(dir)
	var b strings.Builder
	for _, name := range names {
		fmt.Fprintf(&b, "%s(%d) ", name, fsys.Size(dir+"/"+name))
	}
	return b.String()
}
