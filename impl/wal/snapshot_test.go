package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// TestSnapshotBounds: a snapshot must be after the current one (docs: "upto must ...
// be after the current snapshot, or Snapshot returns ErrBadSnapshot and writes
// nothing"), and compaction keeps every record after the snapshot: a segment is
// removed only when all of its records lie at or below upto.
//
// Kills: impl/wal/snapshot.go:Log.Snapshot:boundary (upto < cur: a second snapshot at
// the same LSN accepted), impl/wal/snapshot.go:Log.Snapshot:constant (upto+2: the
// segment holding upto+1 removed, and with it record upto+1).
func TestSnapshotBounds(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 1024)
	fill(t, l, 10, 104) // segment 1: 1..8, segment 2: 9, 10
	if err := l.Snapshot(7, []byte("at 7")); err != nil {
		t.Fatal(err)
	}
	if err := l.Snapshot(7, []byte("at 7 again")); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("second Snapshot(7) = %v, want ErrBadSnapshot", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, fsys, 1024)
	defer l.Close()
	r := replayAll(t, l)
	if r.snapLSN != 7 || string(r.state) != "at 7" || fmt.Sprint(r.lsns) != "[8 9 10]" {
		t.Fatalf("replayed snapshot %d %q and records %v, want 7 \"at 7\" and [8 9 10]", r.snapLSN, r.state, r.lsns)
	}
}

// TestSnapshotEmptyState: a snapshot of an empty state (a gate with nothing in it) is
// a 32-byte file, header only; it is written, verified at Open and replayed like any
// other. So is a snapshot at LSN 1, the smallest.
//
// Kills: impl/wal/format.go:decodeSnapshot:boundary (len(b) <= snapshotHeaderBytes
// refuses it), the decodeSnapshot and encodeSnapshot constant mutants that slice
// b[24:33] (past a 32-byte file), impl/wal/log.go:Log.Replay:constant (snapLSN > 1: the
// snapshot at LSN 1 is not delivered).
func TestSnapshotEmptyState(t *testing.T) {
	for _, state := range [][]byte{nil, {}, []byte("x")} {
		t.Run(fmt.Sprintf("%d bytes", len(state)), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, 0)
			appendWait(t, l, []byte("one"))
			appendWait(t, l, []byte("two"))
			if err := l.Snapshot(1, state); err != nil {
				t.Fatalf("Snapshot(1): %v", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l2 := mustOpen(t, fsys, 0)
			defer l2.Close()
			called := false
			err := l2.Replay(func(upto LSN, got []byte) error {
				called = true
				if upto != 1 || !bytes.Equal(got, state) {
					t.Errorf("snapshot %d %q, want 1 %q", upto, got, state)
				}
				return nil
			}, func(lsn LSN, rec []byte) error {
				if lsn != 2 || string(rec) != "two" {
					t.Errorf("record %d %q, want 2 \"two\"", lsn, rec)
				}
				return nil
			})
			if err != nil || !called {
				t.Fatalf("Replay: err %v, snapshot delivered %v", err, called)
			}
		})
	}
}

// TestSnapshotShortWrite: a snapshot file that was not written whole is never put in
// place, even by a file system that reports a short write without an error: the
// snapshot fails the log, and the log still opens at its previous state. (A short
// snapshot renamed in would make the next Open refuse the log.)
//
// Kills: impl/wal/snapshot.go:Log.writeSnapshot:negate-cond and remove-stmt (the check
// of n against len(b)).
func TestSnapshotShortWrite(t *testing.T) {
	h := newHandleFS()
	l := openEmpty(t, h, 0)
	appendWait(t, l, []byte("one"))
	h.mu.Lock()
	h.shortWrite = func(path string) bool { return strings.HasSuffix(path, tmpSuffix) }
	h.mu.Unlock()
	if err := l.Snapshot(1, []byte("state")); !errors.Is(err, ErrFailed) {
		t.Fatalf("Snapshot with a short write = %v, want ErrFailed", err)
	}
	l.Close()
	h.mu.Lock()
	h.shortWrite = nil
	h.mu.Unlock()
	l = mustOpen(t, h, 0)
	defer l.Close()
	if r := replayAll(t, l); r.snapLSN != 0 || fmt.Sprint(r.lsns) != "[1]" {
		t.Fatalf("replayed snapshot %d and records %v, want no snapshot and [1]", r.snapLSN, r.lsns)
	}
}

// TestSnapshotAfterCloseRefused: Close lets go of the directory's lock, so another Log
// may own the directory. A Snapshot on the closed Log must refuse with ErrClosed and
// touch nothing there, or it would write a snapshot into the new owner's directory
// and remove its segments (`serve` reaches this when a compaction races its
// shutdown).
func TestSnapshotAfterCloseRefused(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 1024)
	fill(t, l, 10, 104) // two segments
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	owner := mustOpen(t, fsys, 1024)
	defer owner.Close()
	replayAll(t, owner)
	creates, removes := fsys.Ops(walfs.OpCreate), fsys.Ops(walfs.OpRemove)
	if err := l.Snapshot(9, []byte("state")); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot after Close: %v, want ErrClosed", err)
	}
	if c, r := fsys.Ops(walfs.OpCreate)-creates, fsys.Ops(walfs.OpRemove)-removes; c != 0 || r != 0 {
		t.Errorf("the closed Log created %d files and removed %d in a directory it no longer holds", c, r)
	}
}

// TestSnapshotDuringRolloverSurvivesPowerLoss: a snapshot taken while a batch is
// being written into a new segment may remove every older segment (the new one
// starts right after the snapshot's LSN); a power loss right then must leave a log
// that opens at the snapshot. It does only if the new segment's header was durable
// before the segment was listed (createSegment: "makes file and directory entry
// durable before any record goes in"); otherwise the new segment is found empty and
// removed, and the snapshot is left without any segment: the log refuses to open and
// every acknowledged record is out of reach.
//
// Kills: impl/wal/log.go:Log.createSegment:sync-drop (the fdatasync of the header).
func TestSnapshotDuringRolloverSurvivesPowerLoss(t *testing.T) {
	h := newHandleFS()
	l := openEmpty(t, h, 1024)
	fill(t, l, 8, 104) // 32 + 8 × 124 bytes: segment 1 is full
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.mu.Lock()
	h.beforeWrite = func(path string, off int64) {
		if path == segPath(2) && off == segmentHeaderBytes {
			once.Do(func() { close(reached); <-release })
		}
	}
	h.mu.Unlock()
	lsn, err := l.Append(payload(9, 104))
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- l.WaitDurable(context.Background(), lsn) }()
	select {
	case <-reached: // segment 2 exists, its first record is about to be written
	case err := <-waited:
		t.Fatalf("record 9 did not start segment 2 (segments %d, WaitDurable %v)", l.Stats().Segments, err)
	}
	state := []byte("state after record 8")
	if err := l.Snapshot(8, state); err != nil {
		t.Fatalf("Snapshot(8): %v", err)
	}
	if h.Size(segPath(1)) != -1 {
		t.Fatalf("segment 1 was not compacted away: the test does not reach the case")
	}
	h.Crash(nil) // power loss: only what was made durable remains
	close(release)
	if err := <-waited; err == nil {
		t.Fatalf("WaitDurable(%d) = nil across a crash before its fdatasync", lsn)
	}
	l.Close()
	h.Restart()

	l2, err := Open(testDir, Options{FS: h, SegmentBytes: 1024})
	if err != nil {
		t.Fatalf("Open after the power loss: %v", err)
	}
	defer l2.Close()
	r := replayAll(t, l2)
	if r.snapLSN != 8 || !bytes.Equal(r.state, state) || len(r.lsns) != 0 || l2.Last() != 8 {
		t.Fatalf("recovered snapshot %d (%q), records %v, last %d; want snapshot 8, no record, last 8",
			r.snapLSN, r.state, r.lsns, l2.Last())
	}
}

// TestDiskBoundedByCompaction: with a snapshot every snapEvery records, the bytes on
// disk stay within snapshot + the records since the previous snapshot + two segments,
// however many records go through the log; without compaction they would grow with it.
func TestDiskBoundedByCompaction(t *testing.T) {
	const (
		segBytes   = 4096
		recPayload = 100
		snapEvery  = 500
		records    = 20000
		stateBytes = 2000
	)
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, segBytes)
	defer l.Close()
	replayAll(t, l)
	recBytes := int64(recordHeaderBytes + recPayload)
	bound := int64(snapshotHeaderBytes+stateBytes) + 2*snapEvery*recBytes + 2*segBytes
	var maxBytes int64
	maxSegs := 0
	rec := make([]byte, recPayload)
	for i := 1; i <= records; i++ {
		lsn, err := l.Append(rec)
		if err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			if err := l.WaitDurable(context.Background(), lsn); err != nil {
				t.Fatal(err)
			}
		}
		if i%snapEvery == 0 {
			// The most the disk holds: just before the snapshot that compacts.
			b, segs := diskUsage(t, fsys)
			maxBytes, maxSegs = max(maxBytes, b), max(maxSegs, segs)
			if b > bound {
				t.Fatalf("after %d records: %d bytes on disk, bound %d", i, b, bound)
			}
			if err := l.Snapshot(lsn, make([]byte, stateBytes)); err != nil {
				t.Fatal(err)
			}
		}
	}
	written := int64(records) * recBytes
	t.Logf("%d records (%d bytes written), snapshot every %d: at most %d bytes and %d segments on disk (bound %d bytes)",
		records, written, snapEvery, maxBytes, maxSegs, bound)
	if maxBytes*10 > written {
		t.Fatalf("compaction kept %d of %d bytes", maxBytes, written)
	}
}

func diskUsage(t *testing.T, fsys *walfs.FaultFS) (bytes int64, segments int) {
	t.Helper()
	names, err := fsys.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		bytes += fsys.Size(testDir + "/" + n)
		if strings.HasSuffix(n, segmentSuffix) {
			segments++
		}
	}
	return bytes, segments
}
