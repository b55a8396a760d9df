package wal

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Snapshot records state as the result of applying every record up to and including
// upto, and then compacts: it removes the segments whose records all lie at or below
// upto and the previous snapshot, so that a long-running gate keeps its disk bounded.
// It is BeginSnapshot, one Write of state and Commit; see them for the rules.
func (l *Log) Snapshot(upto LSN, state []byte) error {
	w, err := l.BeginSnapshot(upto)
	if err != nil {
		return err
	}
	if _, err := w.Write(state); err != nil {
		return err
	}
	return w.Commit()
}

// SnapshotWriter receives a snapshot's state in pieces, so that a large state is
// never held in one buffer: Write each piece in order, then Commit (or Abort).
type SnapshotWriter interface {
	// Write appends p to the state. A failure fails the log (ErrFailed) and ends
	// the snapshot; once Close has begun it returns ErrClosed and ends it.
	Write(p []byte) (int, error)
	// Commit makes the snapshot durable and atomic (its header, fdatasync, rename,
	// directory fsync), then removes what it covers. A failure fails the log.
	Commit() error
	// Abort ends the snapshot without writing it; after Commit or a failed Write it
	// does nothing.
	Abort()
}

// BeginSnapshot starts a snapshot of the state after every record up to and
// including upto. It first waits until upto is durable. upto must have been
// appended and be after the current snapshot, or it returns ErrBadSnapshot and
// writes nothing; once Close has begun it returns ErrClosed. Snapshots are
// serialised and Close waits for the one in progress, which must therefore end
// (Commit or Abort); Append and WaitDurable proceed meanwhile.
func (l *Log) BeginSnapshot(upto LSN) (SnapshotWriter, error) {
	l.snapMu.Lock()
	w, err := l.beginSnapshot(upto)
	if err != nil {
		l.snapMu.Unlock()
		return nil, err
	}
	return w, nil
}

// beginSnapshot is BeginSnapshot under l.snapMu, which a writer it returns keeps.
func (l *Log) beginSnapshot(upto LSN) (*snapshotWriter, error) {
	began := time.Now()
	if err := l.snapshotAllowed(upto); err != nil {
		return nil, err
	}
	if err := l.WaitDurable(context.Background(), upto); err != nil {
		return nil, err
	}
	w := &snapshotWriter{l: l, upto: upto, final: walfs.Join(l.dir, snapshotName(upto)), began: began}
	w.tmp = w.final + tmpSuffix
	f, err := l.fs.Create(w.tmp)
	if err != nil {
		return nil, l.failWith(&FailedError{Op: "create snapshot", Path: w.tmp, Err: err})
	}
	w.f = f
	// The header's place; Commit writes it once the length and checksum are known.
	header := make([]byte, snapshotHeaderBytes)
	n, err := f.Write(header)
	if err = full(n, len(header), err); err != nil {
		f.Close()
		return nil, l.failWith(&FailedError{Op: "write snapshot", Path: w.tmp, Err: err})
	}
	return w, nil
}

func (l *Log) snapshotAllowed(upto LSN) error {
	l.mu.Lock()
	last, cur, err, closing := l.last.load(), l.snapLSN, l.err, l.closing
	l.mu.Unlock()
	switch {
	case err != nil:
		return err
	case closing:
		// Close releases the directory's lock: another Log may own the directory
		// by now, and a snapshot would write into it and remove its segments.
		return ErrClosed
	case upto == 0 || upto > last || upto <= cur:
		return fmt.Errorf("%w: %d (last appended %d, current snapshot %d)", ErrBadSnapshot, upto, last, cur)
	}
	return nil
}

// The snapshot's share of the disk. Write makes every snapshotSyncBytes of a
// snapshot durable (fdatasync) and then sleeps snapshotSyncIdle times as long as
// writing and syncing them took: a record's fdatasync shares the device and waits
// behind at most that much of a snapshot, and a snapshot keeps at most a fifth of
// the disk's time, however fast it is encoded.
const (
	snapshotSyncBytes = 256 << 10
	snapshotSyncIdle  = 4
)

// snapshotWriter writes the temporary file of one snapshot; it holds l.snapMu from
// BeginSnapshot until it ends.
type snapshotWriter struct {
	l          *Log
	upto       LSN
	tmp, final string
	f          walfs.File
	crc        uint32        // the state's checksum so far (Castagnoli)
	n          int64         // the state's bytes so far
	synced     int64         // of which fdatasync has returned
	busy       time.Duration // spent writing the bytes not yet synced
	ended      bool
	began      time.Time // when BeginSnapshot began it (Histograms.Snapshot)
}

func (w *snapshotWriter) Write(p []byte) (int, error) {
	if w.ended {
		return 0, ErrClosed
	}
	if w.l.isClosing() {
		w.Abort()
		return 0, ErrClosed
	}
	for rest := p; len(rest) > 0; {
		piece := rest[:min(int64(len(rest)), snapshotSyncBytes-(w.n-w.synced))]
		rest = rest[len(piece):]
		began := time.Now()
		n, err := w.f.Write(piece)
		if err = full(n, len(piece), err); err != nil {
			return 0, w.failed(&FailedError{Op: "write snapshot", Path: w.tmp, Err: err})
		}
		w.crc = crc32.Update(w.crc, castagnoli, piece)
		w.n += int64(len(piece))
		w.busy += time.Since(began)
		if w.n-w.synced < snapshotSyncBytes {
			continue
		}
		began = time.Now()
		if err := w.f.Sync(); err != nil {
			return 0, w.failed(&FailedError{Op: "fdatasync", Path: w.tmp, Err: err})
		}
		time.Sleep(snapshotSyncIdle * (w.busy + time.Since(began)))
		w.synced, w.busy = w.n, 0
	}
	return len(p), nil
}

// full returns err, or an error for a write of n bytes of want that reported none.
func full(n, want int, err error) error {
	if err == nil && n != want {
		err = fmt.Errorf("short write: %d of %d bytes", n, want)
	}
	return err
}

func (l *Log) isClosing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closing
}

func (w *snapshotWriter) Commit() error {
	if w.ended {
		return ErrClosed
	}
	if err := w.writeFile(); err != nil {
		return w.failed(err)
	}
	defer w.end() // compaction too is done before the next snapshot, or Close
	if err := w.l.compact(w.upto, w.final, snapshotHeaderBytes+w.n); err != nil {
		return err
	}
	w.l.hist.Snapshot.ObserveDuration(time.Since(w.began))
	return nil
}

// writeFile completes the temporary file with its header and puts it in place.
func (w *snapshotWriter) writeFile() error {
	h := snapshotHeader(w.upto, w.n, w.crc)
	n, err := w.f.WriteAt(h, 0)
	if err = full(n, len(h), err); err != nil {
		return &FailedError{Op: "write snapshot", Path: w.tmp, Err: err}
	}
	if err := w.f.Sync(); err != nil {
		return &FailedError{Op: "fdatasync", Path: w.tmp, Err: err}
	}
	f := w.f
	w.f = nil // closed here, not again by end
	if err := f.Close(); err != nil {
		return &FailedError{Op: "close", Path: w.tmp, Err: err}
	}
	if err := w.l.fs.Rename(w.tmp, w.final); err != nil {
		return &FailedError{Op: "rename", Path: w.final, Err: err}
	}
	if err := w.l.fs.SyncDir(w.l.dir); err != nil {
		return &FailedError{Op: "sync dir", Path: w.l.dir, Err: err}
	}
	return nil
}

func (w *snapshotWriter) Abort() {
	if w.ended {
		return
	}
	w.end()
	// A temporary file left behind is removed at the next Open.
	_ = w.l.fs.Remove(w.tmp)
}

// failed ends the snapshot on err, which fails the log, and returns the log's error.
func (w *snapshotWriter) failed(err error) error {
	w.end()
	return w.l.failWith(err)
}

// end closes the file if it is open and lets the next snapshot, or Close, go on.
func (w *snapshotWriter) end() {
	w.ended = true
	if w.f != nil {
		w.f.Close()
	}
	w.l.snapMu.Unlock()
}

// compact makes the snapshot at upto, durable in final (size bytes), the current one
// and removes what it covers, the previous snapshot and the segments whose records
// all lie at or below upto, each shrunk first.
func (l *Log) compact(upto LSN, final string, size int64) error {
	l.mu.Lock()
	var drop []segment // the previous snapshot (num 0) and the segments covered
	if l.snapPath != "" {
		drop = append(drop, segment{path: l.snapPath, end: l.snapBytes})
	}
	l.snapLSN, l.snapPath, l.snapBytes, l.stats.SnapshotLSN = upto, final, size, upto
	for len(l.segments) > 1 && l.segments[1].firstLSN <= upto+1 {
		drop = append(drop, l.segments[0])
		l.segments = l.segments[1:]
	}
	l.mu.Unlock()
	if len(drop) == 0 {
		return nil
	}
	// A segment is shrunk under a temporary name, made durable first: Open reads
	// every segment strictly, and one cut short is corrupt, but it removes temporary
	// files unread. (Open reads no snapshot but the newest.)
	renamed := false
	for i, f := range drop {
		if f.num == 0 || f.end <= shrinkStep {
			continue
		}
		tmp := f.path + tmpSuffix
		if err := l.fs.Rename(f.path, tmp); err != nil {
			return l.failWith(&FailedError{Op: "rename", Path: tmp, Err: err})
		}
		drop[i].path, renamed = tmp, true
	}
	if renamed {
		if err := l.fs.SyncDir(l.dir); err != nil {
			return l.failWith(&FailedError{Op: "sync dir", Path: l.dir, Err: err})
		}
	}
	for _, f := range drop {
		l.shrink(f.path, f.end)
		if err := l.fs.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return l.failWith(&FailedError{Op: "remove", Path: f.path, Err: err})
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failWith(&FailedError{Op: "sync dir", Path: l.dir, Err: err})
	}
	return nil
}

// shrinkStep is how much of a file that compaction removes shrink frees at a time.
const shrinkStep = 1 << 20

// shrink truncates a file that compaction removes (a superseded snapshot or a
// covered segment), of size bytes, a step at a time before it is removed, each step
// followed by a pause as for a snapshot's Write: the file system frees a large
// file's blocks in one transaction (and, mounted with discard, discards them on the
// device), which a record's fdatasync would otherwise wait for. The file is no part
// of the log any more (Open removes an older snapshot, whole or not, and the
// segments a snapshot covers), so a failure here only leaves the work to Remove.
func (l *Log) shrink(path string, size int64) {
	steps := (size - 1) / shrinkStep // the multiples of shrinkStep below size
	if steps < 1 {
		return
	}
	f, err := l.fs.OpenAppend(path)
	if err != nil {
		return
	}
	defer f.Close()
	for i := range steps {
		began := time.Now()
		if f.Truncate((steps-i)*shrinkStep) != nil {
			return
		}
		time.Sleep(snapshotSyncIdle * time.Since(began))
	}
}

func (l *Log) failWith(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail(err)
	return l.err
}
