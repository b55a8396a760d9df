// Package crashsim runs the write-ahead log through simulated machine crashes.
//
// Each cycle is one life of a gate: open the log on a walfs.FaultFS, check what
// recovery found against what earlier lives appended and acknowledged, run
// concurrent writers (append, then wait for durability) and a snapshotter, and crash
// the file system at a random operation (a write, fdatasync, create, rename, remove
// or directory sync), keeping a random part of what was not yet durable. The check
// after every crash: the log recovers without error, every record it replays is the
// one appended at that LSN, the snapshot state is the state of exactly the records
// it covers, and every acknowledged record is there.
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

func state(upto wal.LSN, hash uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, uint64(upto))
	binary.LittleEndian.PutUint64(b[8:], hash)
	return b
}

// Run runs cfg and returns the first violation as an error naming seed and cycle.
func Run(cfg Config) (Result, error) {
	start := time.Now()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	fsys := walfs.NewFaultFS()
	m := &model{hashes: []uint64{0}}
	var res Result
	opts := wal.Options{FS: fsys, SegmentBytes: cfg.SegmentBytes}
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		fail := func(format string, args ...any) (Result, error) {
			return res, fmt.Errorf("crashsim: seed %d cycle %d: safety violation: %s", cfg.Seed, cycle, fmt.Sprintf(format, args...))
		}
		fsys.Restart()
		l, err := wal.Open(dir, opts)
		if err != nil {
			return fail("recovery refused the log: %v; files: %s\nrecent file-system operations:\n  %s", err, listing(fsys), strings.Join(fsys.Trace(), "\n  "))
		}
		st := l.Stats()
		if st.TornBytes > 0 {
			res.TornTails++
		}
		var snapLSN wal.LSN
		var replayErr error
		next := wal.LSN(0)
		err = l.Replay(func(upto wal.LSN, s []byte) error {
			snapLSN = upto
			res.SnapshotLoads++
			if int(upto) >= len(m.hashes) {
				return fmt.Errorf("snapshot at %d beyond the %d records ever appended", upto, len(m.recs))
			}
			if want := state(upto, m.hashes[upto]); string(s) != string(want) {
				return fmt.Errorf("snapshot at %d holds another state", upto)
			}
			next = upto + 1
			return nil
		}, func(lsn wal.LSN, p []byte) error {
			if next == 0 {
				next = lsn
			}
			if lsn != next {
				return fmt.Errorf("replayed lsn %d, want %d", lsn, next)
			}
			next++
			if int(lsn) > len(m.recs) || string(p) != string(m.recs[lsn-1]) {
				return fmt.Errorf("record %d is not the one appended", lsn)
			}
			res.RecordsChecked++
			return nil
		})
		if err != nil {
			replayErr = err
		}
		if replayErr != nil {
			l.Close()
			return fail("%v", replayErr)
		}
		last := l.Last()
		if snapLSN > last {
			l.Close()
			return fail("snapshot %d after the last record %d", snapLSN, last)
		}
		if acked := m.acked.Load(); uint64(last) < acked {
			l.Close()
			return fail("lost acknowledged records: recovered up to %d, acknowledged up to %d", last, acked)
		} else {
			res.AckedChecked += acked
		}
		// Records beyond the recovered end were never acknowledged: forget them.
		m.recs, m.hashes = m.recs[:last], m.hashes[:last+1]
		n := countSegments(fsys)
		res.MaxSegments = max(res.MaxSegments, n)
		if snapLSN > 0 {
			// Compaction bounds the disk: a full segment holds at least perSeg records,
			// so the records after the snapshot need at most this many segments, plus
			// the one holding the snapshot's LSN and the active one.
			recMax := int64(20 + cfg.PayloadMax)
			perSeg := max(1, (cfg.SegmentBytes-32-recMax)/recMax)
			bound := int((int64(last-snapLSN)+perSeg-1)/perSeg) + 2
			if n > bound {
				l.Close()
				return fail("compaction left %d segments for %d records after the snapshot at %d (bound %d)", n, last-snapLSN, snapLSN, bound)
			}
		}

		// This life: writers and a snapshotter, until the crash.
		fsys.CrashAtOp(1+int64(rng.IntN(cfg.OpsMax)), rand.New(rand.NewPCG(rng.Uint64(), 1)), nil)
		var wg sync.WaitGroup
		var appended atomic.Int64
		errc := make(chan error, cfg.Writers+1)
		for w := 0; w < cfg.Writers; w++ {
			wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for appended.Add(1) <= int64(cfg.RecordsMax) {
					p := make([]byte, wrng.IntN(cfg.PayloadMax+1))
					for i := range p {
						p[i] = byte(wrng.Uint32())
					}
					m.mu.Lock()
					lsn, err := l.Append(p)
					if err == nil {
						err = m.add(lsn, p)
						if err != nil {
							m.mu.Unlock()
							errc <- err
							return
						}
					}
					m.mu.Unlock()
					if err == nil {
						err = l.WaitDurable(context.Background(), lsn)
					}
					if err != nil {
						if !errors.Is(err, wal.ErrFailed) {
							errc <- fmt.Errorf("writer: unexpected error %w", err)
						}
						return
					}
					for {
						a := m.acked.Load()
						if uint64(lsn) <= a || m.acked.CompareAndSwap(a, uint64(lsn)) {
							break
						}
					}
				}
			}()
		}
		if cfg.SnapshotEvery > 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for l.Err() == nil && appended.Load() <= int64(cfg.RecordsMax) {
					cur := l.Stats().SnapshotLSN
					d := l.Durable()
					if d < cur+wal.LSN(cfg.SnapshotEvery) {
						time.Sleep(50 * time.Microsecond)
						continue
					}
					m.mu.Lock()
					s := state(d, m.hashes[d])
					m.mu.Unlock()
					if err := l.Snapshot(d, s); err != nil {
						if !errors.Is(err, wal.ErrFailed) {
							errc <- fmt.Errorf("snapshot: unexpected error %w", err)
						}
						return
					}
					m.mu.Lock()
					res.Snapshots++
					m.mu.Unlock()
				}
			}()
		}
		wg.Wait()
		l.Close()
		close(errc)
		for err := range errc {
			return fail("%v", err)
		}
		if !fsys.Crashed() {
			fsys.Crash(rand.New(rand.NewPCG(rng.Uint64(), 2)))
		}
		res.Cycles++
		res.Acked = m.acked.Load()
		if cfg.Logf != nil && cycle%max(cfg.Cycles/10, 1) == 0 {
			cfg.Logf("crashsim: cycle %d/%d, %d records checked, last lsn %d, %d snapshots", cycle, cfg.Cycles, res.RecordsChecked, last, res.Snapshots)
		}
		res.LastLSN = uint64(last)
	}
	res.Elapsed = time.Since(start)
	return res, nil
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
