package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/impl/metrics"
	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Limits and defaults.
const (
	// SegmentBytesDefault is the segment size used when Options.SegmentBytes is 0.
	SegmentBytesDefault = 64 << 20
	// segmentBytesMin is the smallest segment size Open accepts.
	segmentBytesMin = 1 << 10
	// chunkBytesMax is the size of one buffer of pending records (one write each).
	chunkBytesMax = 1 << 20
	// spareBuffersMax is how many written chunk buffers are kept for reuse.
	spareBuffersMax = 4
	// PendingBytesMax bounds the bytes appended and not yet handed to the disk:
	// beyond it, Append writes the backlog itself or waits for the writer (back-pressure).
	PendingBytesMax = 64 << 20
	// allocChunkBytes is how far ahead of the write position the active segment's
	// space is reserved (File.Allocate), so that group commits overwrite reserved
	// zeros instead of growing the file: an fdatasync then has no new size to write
	// back. Reserving a chunk at a time, not the whole segment, keeps a young log
	// small and bounds the zeros recovery reads past the last record.
	allocChunkBytes = 1 << 20
)

// Options configure Open. The zero value is the real file system and default sizes.
type Options struct {
	// FS is the file system; nil means the operating system's (walfs.OS).
	FS walfs.FS
	// SegmentBytes is the size at which the log starts a new segment file; 0 means
	// SegmentBytesDefault. A record is never split: a segment ends before the record
	// that would take it past this size.
	SegmentBytes int64
}

// Stats are counters of the log since Open.
type Stats struct {
	Records     uint64 // records appended
	Bytes       uint64 // bytes of records written to segments (segment headers not counted)
	Syncs       uint64 // fdatasync calls by the committer (group commits)
	Wakeups     uint64 // times a WaitDurable woke from its sleep: once per waiter when commits serve only their own waiters
	Segments    int    // segment files on disk
	SnapshotLSN LSN    // LSN of the current snapshot, 0 if none
	TornBytes   int64  // bytes of a torn tail that Open truncated (0: clean tail)
}

// Histograms are distributions of the log since Open. They are atomics
// (impl/metrics): reading them takes no lock, and the log updates them at the cost
// of a clock reading and two atomic adds per fdatasync.
type Histograms struct {
	// Fdatasync is the seconds each fdatasync of a segment took: a group commit's,
	// a full segment's before the next one starts, a new segment's header, the
	// recovered tail's at Open. Not a snapshot's.
	Fdatasync *metrics.Histogram
	// CommitRecords is the records each group commit made durable: its count is the
	// group commits (Stats.Syncs), its sum the records they made durable.
	CommitRecords *metrics.Histogram
	// Snapshot is the seconds from BeginSnapshot to the end of a Commit that
	// succeeded: the state's writing (paced: it waits for its encoder and keeps to a
	// fifth of the disk's time) and the compaction after it.
	Snapshot *metrics.Histogram
}

// The histograms' upper bounds.
var (
	fdatasyncBounds = []time.Duration{25 * time.Microsecond, 50 * time.Microsecond, 100 * time.Microsecond,
		250 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2500 * time.Microsecond,
		5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
		2500 * time.Millisecond, 5 * time.Second, 10 * time.Second}
	commitRecordsBounds = []int64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	snapshotBounds      = []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
		250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second,
		10 * time.Second, 25 * time.Second, 50 * time.Second, 100 * time.Second, 250 * time.Second, 500 * time.Second}
)

func newHistograms() Histograms {
	return Histograms{Fdatasync: metrics.NewDurationHistogram(fdatasyncBounds...),
		CommitRecords: metrics.NewHistogram(1, commitRecordsBounds...),
		Snapshot:      metrics.NewDurationHistogram(snapshotBounds...)}
}

// position is an LSN of the log that is written under its mutex and read without
// it, so that a reader of a position never waits for an appender or the committer.
type position struct{ v atomic.Uint64 }

func (p *position) load() LSN   { return LSN(p.v.Load()) }
func (p *position) store(n LSN) { p.v.Store(uint64(n)) }

// chunk is a run of encoded records bound for one segment.
type chunk struct {
	newSegment bool   // start segment seg before writing data
	seg        uint64 // segment number
	firstLSN   LSN    // first record of data
	last       LSN    // last record of data
	data       []byte
}

// Log is an open write-ahead log. Its methods are safe for concurrent use.
type Log struct {
	fs           walfs.FS
	dir          string
	segmentBytes int64

	mu         sync.Mutex
	work       *sync.Cond // wakes the committer: a leader handed over, or closing
	space      *sync.Cond // signals appenders blocked on PendingBytesMax
	pending    []chunk
	pendBytes  int
	pendingMax int      // PendingBytesMax; smaller in tests
	spare      [][]byte // recycled chunk buffers
	// A waiter sleeps on the channel of the commit that will make its record
	// durable, so that a commit wakes only the waiters it serves: syncCh is closed
	// when the commit in flight (records up to syncUpto) ends, nextCh when the one
	// after it ends. Both are closed when the log fails or closes. (A single channel
	// would wake the next batch's waiters at every commit, only to sleep again.)
	syncCh    chan struct{} // nil while no commit is in flight
	nextCh    chan struct{}
	syncUpto  LSN
	sleeping  int      // waiters asleep on syncCh or nextCh (tests look at it)
	last      position // last appended
	durable   position // last on stable storage
	err       error    // sticky *FailedError
	closing   bool
	syncing   bool // a leader (a waiter or the committer) is writing a batch
	handoff   bool // a leader left records behind: the committer should write them
	closed    bool
	appended  bool // Append was called: no Replay any more
	replayed  bool
	segments  []segment // on disk, oldest first; the last is active
	activeLen int64     // bytes in the segment being filled by Append, written or pending
	activeSeg uint64    // number of the segment being filled by Append
	activeFst LSN       // first LSN of the segment being filled by Append
	snapLSN   LSN
	snapState []byte // held until Replay
	stats     Stats
	hist      Histograms // set by open, then only read

	file     walfs.File // active segment; used only by the committer (and Open/Close)
	filePath string     // its path
	// writeOff and allocEnd belong to whoever writes (the leader or the committer,
	// one at a time: l.syncing) and to Open: the offset of the next record in the
	// active file, and how far its space is reserved (0: not reserved, or the file
	// system cannot).
	writeOff  int64
	allocEnd  int64
	noReserve bool // the file system cannot reserve space
	done      chan struct{}
	snapMu    sync.Mutex // serialises Snapshot calls
	snapPath  string
	snapBytes int64     // the size of the file at snapPath
	lock      io.Closer // the directory's lock, released by Close
}

// Open opens (creating if needed) the log in dir and recovers it: it verifies every
// segment and the newest snapshot, truncates a torn tail of the last segment, and
// refuses a damaged log with a *CorruptError. Call Replay next to read the snapshot
// and the records, then Append.
func Open(dir string, opts Options) (*Log, error) {
	fsys := opts.FS
	if fsys == nil {
		fsys = walfs.OS{}
	}
	segBytes := opts.SegmentBytes
	if segBytes == 0 {
		segBytes = SegmentBytesDefault
	}
	if segBytes < segmentBytesMin {
		return nil, fmt.Errorf("soundgate/wal: segment size %d bytes is below the minimum %d", segBytes, segmentBytesMin)
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("soundgate/wal: create %s: %w", dir, err)
	}
	lock, err := fsys.Lock(walfs.Join(dir, lockName))
	if errors.Is(err, walfs.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("soundgate/wal: lock %s: %w", dir, err)
	}
	l, err := open(fsys, dir, segBytes, lock)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return l, nil
}

// lockName is the file whose lock says that a process has the log open.
const lockName = "LOCK"

func open(fsys walfs.FS, dir string, segBytes int64, lock io.Closer) (*Log, error) {
	rec, junk, err := recoverDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	if err := repair(fsys, dir, rec, junk); err != nil {
		return nil, err
	}
	l := &Log{
		fs: fsys, dir: dir, segmentBytes: segBytes,
		nextCh:   make(chan struct{}),
		segments: rec.segments, snapLSN: rec.snapLSN, snapState: rec.state, snapPath: rec.snapPath,
		snapBytes: int64(snapshotHeaderBytes + len(rec.state)),
		done:      make(chan struct{}), lock: lock, pendingMax: PendingBytesMax, hist: newHistograms(),
	}
	l.last.store(rec.lastLSN)
	l.durable.store(rec.lastLSN)
	l.work = sync.NewCond(&l.mu)
	l.space = sync.NewCond(&l.mu)
	if len(l.segments) == 0 {
		if err := l.createSegment(1, rec.lastLSN+1); err != nil {
			return nil, err
		}
		l.segments = append(l.segments, segment{num: 1, firstLSN: rec.lastLSN + 1, path: walfs.Join(dir, segmentName(1)), end: segmentHeaderBytes})
		l.activeLen = segmentHeaderBytes
	} else {
		l.filePath = l.segments[len(l.segments)-1].path
		s := l.segments[len(l.segments)-1]
		f, err := fsys.OpenAppend(s.path)
		if err != nil {
			return nil, fmt.Errorf("soundgate/wal: open active segment: %w", err)
		}
		// After a kill -9 (not a power loss) the tail that recovery just read may still
		// be only in the page cache. Replay treats it as durable and the gate answers
		// from it, so make it so now: sync before anything rests on it.
		l.file = f
		l.writeOff = s.end
		l.reserve(s.end)
		if err := l.fdatasync(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("soundgate/wal: sync the recovered active segment: %w", err)
		}
		l.activeLen = s.end
	}
	l.activeSeg = l.segments[len(l.segments)-1].num
	l.activeFst = l.segments[len(l.segments)-1].firstLSN
	l.stats.SnapshotLSN = l.snapLSN
	l.stats.TornBytes = rec.tornBytes
	go l.commitLoop()
	return l, nil
}

// createSegment creates segment num starting at firstLSN, writes its header and makes
// file and directory entry durable before any record goes in.
func (l *Log) createSegment(num uint64, firstLSN LSN) error {
	p := walfs.Join(l.dir, segmentName(num))
	f, err := l.fs.Create(p)
	if err != nil {
		return &FailedError{Op: "create segment", Path: p, Err: err}
	}
	if _, err := f.WriteAt(encodeSegmentHeader(segmentHeader{segment: num, firstLSN: firstLSN}), 0); err != nil {
		f.Close()
		return &FailedError{Op: "write segment header", Path: p, Err: err}
	}
	l.file, l.filePath = f, p
	l.writeOff, l.allocEnd = segmentHeaderBytes, 0
	l.reserve(segmentHeaderBytes)
	if err := l.fdatasync(f); err != nil {
		f.Close()
		l.file = nil
		return &FailedError{Op: "fdatasync", Path: p, Err: err}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		f.Close()
		l.file = nil
		return &FailedError{Op: "sync dir", Path: l.dir, Err: err}
	}
	return nil
}

// reserve makes sure the active file's space is reserved past need (the end of the
// bytes about to be written), a chunk at a time and not beyond the segment size
// unless a record needs it. Reserving is an optimisation only: when it fails (no
// fallocate, a full disk) the log writes without it, and the write or the fdatasync
// reports a real failure. Called by the writer (or Open), without mu.
func (l *Log) reserve(need int64) {
	if need <= l.allocEnd || l.noReserve {
		return
	}
	end := max(min(l.writeOff+allocChunkBytes, l.segmentBytes), need)
	if err := l.file.Allocate(end); err != nil {
		// Unsupported: never again. Anything else (a full disk): try again next time.
		l.noReserve = errors.Is(err, walfs.ErrAllocateUnsupported)
		return
	}
	l.allocEnd = end
}

// Replay calls snapshot with the newest snapshot, if there is one, and then record
// for every intact record after it, in LSN order. It must be called at most once,
// before the first Append. An error from a callback stops Replay and is returned.
func (l *Log) Replay(snapshot func(upto LSN, state []byte) error, record func(lsn LSN, rec []byte) error) error {
	l.mu.Lock()
	if l.replayed || l.appended {
		l.mu.Unlock()
		return ErrReplayed
	}
	l.replayed = true
	snapLSN, state := l.snapLSN, l.snapState
	l.snapState = nil
	segs := append([]segment(nil), l.segments...)
	l.mu.Unlock()
	if snapLSN > 0 && snapshot != nil {
		if err := snapshot(snapLSN, state); err != nil {
			return err
		}
	}
	for _, s := range segs {
		b, err := l.fs.ReadFile(s.path)
		if err != nil {
			return fmt.Errorf("soundgate/wal: replay %s: %w", s.path, err)
		}
		if int64(len(b)) < s.end {
			return &CorruptError{Path: s.path, Offset: int64(len(b)), Reason: "segment shrank since Open"}
		}
		want := s.firstLSN
		for off := segmentHeaderBytes; off < int(s.end); {
			r, ok := decodeRecord(b, off)
			if !ok || r.lsn != want {
				return &CorruptError{Path: s.path, Offset: int64(off), Reason: "record changed since Open"}
			}
			if r.lsn > snapLSN && record != nil {
				if err := record(r.lsn, r.payload); err != nil {
					return err
				}
			}
			want++
			off = r.end
		}
	}
	return nil
}

// Append adds rec to the log and returns its LSN. It copies rec, does no I/O and
// returns at once, except as back-pressure: when PendingBytesMax bytes already wait
// for the disk, it writes them itself (or waits for the writer in progress).
// Records are numbered in the order of Append calls. The record is durable once
// WaitDurable(lsn) returns nil. A failed or closed log returns its error and
// appends nothing, as does a record over RecordBytesMax (ErrRecordTooLarge).
func (l *Log) Append(rec []byte) (LSN, error) {
	if len(rec) > RecordBytesMax {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrRecordTooLarge, len(rec), RecordBytesMax)
	}
	size := recordHeaderBytes + len(rec)
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.err == nil && !l.closing && l.pendBytes > 0 && l.pendBytes+size > l.pendingMax {
		if !l.syncing {
			l.commitLocked() // nobody is writing: make room now
			continue
		}
		l.space.Wait()
	}
	if l.err != nil {
		return 0, l.err
	}
	if l.closing {
		return 0, ErrClosed
	}
	l.appended = true
	lsn := l.last.load() + 1
	if l.activeLen+int64(size) > l.segmentBytes && lsn > l.activeFst {
		// The record would overflow a segment that holds records: start the next.
		l.activeSeg++
		l.activeFst = lsn
		l.activeLen = segmentHeaderBytes
		l.pending = append(l.pending, chunk{newSegment: true, seg: l.activeSeg, firstLSN: lsn, data: l.buffer()})
	} else if n := len(l.pending); n == 0 || len(l.pending[n-1].data)+size > chunkBytesMax {
		// A new chunk for the same segment: buffers stay small and reusable, and a
		// large backlog is never copied to grow one slice.
		l.pending = append(l.pending, chunk{seg: l.activeSeg, firstLSN: lsn, data: l.buffer()})
	}
	c := &l.pending[len(l.pending)-1]
	c.data = appendRecord(c.data, lsn, rec)
	c.last = lsn
	l.last.store(lsn)
	l.activeLen += int64(size)
	l.pendBytes += size
	l.stats.Records++
	return lsn, nil
}

func (l *Log) buffer() []byte {
	if n := len(l.spare); n > 0 {
		b := l.spare[n-1]
		l.spare = l.spare[:n-1]
		return b[:0]
	}
	return make([]byte, 0, 64<<10)
}

// WaitDurable returns nil once the record lsn is on stable storage. It returns the
// log's *FailedError if the log failed before lsn became durable, ErrClosed if it was
// closed first, ctx's error if ctx ends first (the record may still become durable),
// and ErrNotAppended for an LSN never appended. Many waiters share one fdatasync.
//
// When nobody is writing, the caller writes and fdatasyncs everything appended so far
// itself (it leads), so a lone request pays one write and one fdatasync and no
// hand-off to another goroutine; while it leads, ctx is not looked at (one fdatasync
// at most). Records appended meanwhile go to the committer goroutine, which writes
// batch after batch, without a gap, for as long as records keep coming.
func (l *Log) WaitDurable(ctx context.Context, lsn LSN) error {
	l.mu.Lock()
	for {
		switch {
		case lsn <= l.durable.load():
			l.mu.Unlock()
			return nil
		case l.err != nil:
			err := l.err
			l.mu.Unlock()
			return err
		case lsn > l.last.load():
			l.mu.Unlock()
			return fmt.Errorf("%w: %d (last appended %d)", ErrNotAppended, lsn, l.last.load())
		case l.closed:
			l.mu.Unlock()
			return ErrClosed
		case !l.syncing:
			l.commitLocked()
			continue
		}
		ch := l.nextCh
		if lsn <= l.syncUpto {
			ch = l.syncCh // the commit in flight writes it
		}
		l.sleeping++
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			l.sleeping--
			l.mu.Unlock()
			return ctx.Err()
		}
		l.mu.Lock()
		l.sleeping--
		l.stats.Wakeups++
	}
}

// Durable returns the LSN up to which every record is on stable storage.
func (l *Log) Durable() LSN { return l.durable.load() }

// Last returns the LSN of the last record appended (or recovered).
func (l *Log) Last() LSN { return l.last.load() }

// Err returns the log's sticky *FailedError, or nil while the log is healthy.
func (l *Log) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Stats returns the log's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Segments = len(l.segments)
	return s
}

// Histograms returns the log's distributions; reading them takes no lock.
func (l *Log) Histograms() Histograms { return l.hist }

// Close writes and syncs what was appended, stops the committer and closes the active
// segment, after waiting for a Snapshot in progress. It returns the log's sticky
// error if the log failed. Later calls to Append, WaitDurable and Snapshot return
// ErrClosed (or the failure).
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		<-l.done
		return l.Err()
	}
	l.closing = true
	l.space.Broadcast()
	for l.err == nil && (len(l.pending) > 0 || l.syncing) {
		if !l.syncing {
			l.commitLocked()
			continue
		}
		ch := l.syncCh // a leader is writing: wait for it
		l.mu.Unlock()
		<-ch
		l.mu.Lock()
	}
	l.work.Broadcast()
	l.mu.Unlock()
	<-l.done
	// A Snapshot in progress finishes before the directory's lock is let go; later
	// ones see closing and refuse.
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	close(l.nextCh) // waiters see closed
	l.nextCh = make(chan struct{})
	var cerr error
	if l.file != nil {
		if l.err == nil && l.allocEnd > 0 {
			// A clean close leaves no reserved zeros behind: only a crash does.
			cerr = errors.Join(l.file.Truncate(l.writeOff), l.file.Sync())
		}
		cerr = errors.Join(cerr, l.file.Close())
		l.file = nil
	}
	if l.lock != nil {
		cerr = errors.Join(cerr, l.lock.Close())
		l.lock = nil
	}
	if l.err != nil {
		return l.err
	}
	if cerr != nil {
		return fmt.Errorf("soundgate/wal: close: %w", cerr)
	}
	return nil
}

// fail makes err the log's sticky error and wakes every waiter. Called with mu held.
func (l *Log) fail(err error) {
	if l.err != nil {
		return
	}
	var fe *FailedError
	if !errors.As(err, &fe) {
		fe = &FailedError{Op: "io", Path: l.dir, Err: err}
	}
	l.err = fe
	if l.syncCh != nil {
		close(l.syncCh)
		l.syncCh = nil
	}
	close(l.nextCh)
	l.nextCh = make(chan struct{})
	l.space.Broadcast()
}

// commitLoop is the committer. A waiter that finds nobody writing leads its own
// batch (WaitDurable); when records were appended while it wrote, it hands over to
// the committer, which then writes whatever was appended while the previous
// fdatasync ran, batch after batch with no gap, until no record is left. No timer
// anywhere: a record is written as soon as someone waits for it.
func (l *Log) commitLoop() {
	defer close(l.done)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		for !l.closing && !l.handoff {
			l.work.Wait()
		}
		if l.closing {
			return // Close flushes
		}
		l.handoff = false
		for len(l.pending) > 0 && !l.syncing && l.err == nil {
			l.commitLocked()
		}
	}
}

// commitLocked writes and fdatasyncs everything appended so far (one group commit),
// then publishes the new durable LSN and wakes the waiters. Called with mu held, no
// leader writing and records pending; mu is released during the I/O and held again
// on return. Only one leader at a time touches the active segment (l.syncing).
func (l *Log) commitLocked() {
	if l.syncing || len(l.pending) == 0 {
		panic("soundgate/wal: commit without pending records or with a leader writing")
	}
	l.syncing = true
	batch := l.pending
	// The waiters of the next commit are this one's: everything pending is in it.
	l.syncCh, l.nextCh = l.nextCh, make(chan struct{})
	l.syncUpto = batch[len(batch)-1].last
	l.pending = nil
	l.pendBytes = 0
	l.space.Broadcast()
	l.mu.Unlock()

	err := l.writeBatch(batch)

	l.mu.Lock()
	l.syncing = false
	l.space.Broadcast()
	if err != nil {
		l.fail(err)
		return
	}
	// Persist before reply: durable advances only after the fdatasync.
	last := batch[len(batch)-1].last
	if last <= l.durable.load() {
		panic("soundgate/wal: durable LSN would not advance")
	}
	l.durable.store(last) // on disk, even if the log failed meanwhile (a snapshot's write)
	l.stats.Syncs++
	l.hist.CommitRecords.Observe(int64(last - batch[0].firstLSN + 1))
	if l.syncCh != nil { // nil if fail closed it while we wrote
		close(l.syncCh)
		l.syncCh = nil
	}
	if len(l.pending) > 0 {
		// Appended while we wrote, and their waiters sleep on nextCh: the committer
		// writes them now, whoever led this commit.
		l.handoff = true
		l.work.Signal()
	}
	for _, c := range batch {
		if cap(c.data) <= 4<<20 && len(l.spare) < spareBuffersMax {
			l.spare = append(l.spare, c.data)
		}
	}
}

// writeBatch writes the chunks in order, starting new segments where they say so,
// and fdatasyncs. A segment is synced before the next one is created, so that only
// the last segment can ever have a torn tail.
func (l *Log) writeBatch(batch []chunk) error {
	for _, c := range batch {
		if c.newSegment {
			path, size := l.filePath, l.writeOff
			// Cut the reserved zeros off: only the last segment may end in them
			// (recovery treats a segment that is not the last strictly).
			if err := l.file.Truncate(size); err != nil {
				return &FailedError{Op: "truncate", Path: path, Err: err}
			}
			if err := l.fdatasync(l.file); err != nil {
				return &FailedError{Op: "fdatasync", Path: path, Err: err}
			}
			if err := l.file.Close(); err != nil {
				return &FailedError{Op: "close", Path: path, Err: err}
			}
			l.file = nil
			if err := l.createSegment(c.seg, c.firstLSN); err != nil {
				return err
			}
			l.mu.Lock()
			l.segments[len(l.segments)-1].end = size // for compaction to shrink it
			l.segments = append(l.segments, segment{num: c.seg, firstLSN: c.firstLSN, path: walfs.Join(l.dir, segmentName(c.seg))})
			l.mu.Unlock()
		}
		path := l.filePath
		l.reserve(l.writeOff + int64(len(c.data)))
		n, err := l.file.WriteAt(c.data, l.writeOff)
		l.writeOff += int64(n)
		if err == nil && n != len(c.data) {
			err = fmt.Errorf("short write: %d of %d bytes", n, len(c.data))
		}
		if err != nil {
			return &FailedError{Op: "write", Path: path, Err: err}
		}
		l.mu.Lock()
		l.stats.Bytes += uint64(n)
		l.mu.Unlock()
		failpoint(failpointAfterWrite)
	}
	if err := l.fdatasync(l.file); err != nil {
		return &FailedError{Op: "fdatasync", Path: l.filePath, Err: err}
	}
	failpoint(failpointAfterSync)
	return nil
}

// fdatasync syncs a segment file, and counts how long it took in Histograms.Fdatasync.
func (l *Log) fdatasync(f walfs.File) error {
	began := time.Now()
	err := f.Sync()
	l.hist.Fdatasync.ObserveDuration(time.Since(began))
	return err
}
