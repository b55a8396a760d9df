package wal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Snapshot records state as the result of applying every record up to and including
// upto, and then compacts: it removes the segments whose records all lie at or below
// upto and the previous snapshot, so that a long-running gate keeps its disk bounded.
// It first waits until upto is durable, then writes the snapshot atomically (a
// temporary file, fdatasync, rename, directory fsync). upto must have been appended
// and be after the current snapshot, or Snapshot returns ErrBadSnapshot and writes
// nothing; once Close has begun it returns ErrClosed. A write or sync failure fails
// the log (ErrFailed). Calls are serialised; Append and WaitDurable proceed meanwhile.
func (l *Log) Snapshot(upto LSN, state []byte) error {
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	l.mu.Lock()
	last, cur, err, closing := l.last, l.snapLSN, l.err, l.closing
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if closing {
		// Close releases the directory's lock: another Log may own the directory
		// by now, and a snapshot would write into it and remove its segments.
		return ErrClosed
	}
	if upto == 0 || upto > last || upto <= cur {
		return fmt.Errorf("%w: %d (last appended %d, current snapshot %d)", ErrBadSnapshot, upto, last, cur)
	}
	if err := l.WaitDurable(context.Background(), upto); err != nil {
		return err
	}
	final := walfs.Join(l.dir, snapshotName(upto))
	tmp := final + tmpSuffix
	if err := l.writeSnapshot(tmp, final, encodeSnapshot(upto, state)); err != nil {
		l.mu.Lock()
		l.fail(err)
		err = l.err
		l.mu.Unlock()
		return err
	}
	// The new snapshot is durable: drop what it covers.
	l.mu.Lock()
	prev := l.snapPath
	l.snapLSN, l.snapPath, l.stats.SnapshotLSN = upto, final, upto
	var drop []string
	for len(l.segments) > 1 && l.segments[1].firstLSN <= upto+1 {
		drop = append(drop, l.segments[0].path)
		l.segments = l.segments[1:]
	}
	l.mu.Unlock()
	if prev != "" {
		drop = append(drop, prev)
	}
	if len(drop) == 0 {
		return nil
	}
	for _, p := range drop {
		if err := l.fs.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return l.failWith(&FailedError{Op: "remove", Path: p, Err: err})
		}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return l.failWith(&FailedError{Op: "sync dir", Path: l.dir, Err: err})
	}
	return nil
}

func (l *Log) failWith(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail(err)
	return l.err
}

func (l *Log) writeSnapshot(tmp, final string, b []byte) error {
	f, err := l.fs.Create(tmp)
	if err != nil {
		return &FailedError{Op: "create snapshot", Path: tmp, Err: err}
	}
	n, err := f.Write(b)
	if err == nil && n != len(b) {
		err = fmt.Errorf("short write: %d of %d bytes", n, len(b))
	}
	if err != nil {
		f.Close()
		return &FailedError{Op: "write snapshot", Path: tmp, Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &FailedError{Op: "fdatasync", Path: tmp, Err: err}
	}
	if err := f.Close(); err != nil {
		return &FailedError{Op: "close", Path: tmp, Err: err}
	}
	if err := l.fs.Rename(tmp, final); err != nil {
		return &FailedError{Op: "rename", Path: final, Err: err}
	}
	if err := l.fs.SyncDir(l.dir); err != nil {
		return &FailedError{Op: "sync dir", Path: l.dir, Err: err}
	}
	return nil
}
