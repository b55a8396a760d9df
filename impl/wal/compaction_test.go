package wal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

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

// TestSnapshotAfterCloseRefused: Close lets go of the directory's lock, so another Log
// may own the directory. A Snapshot on the closed Log must refuse with ErrClosed and
// touch nothing there: before, it wrote a snapshot and removed a segment of the
// directory's new owner (found by the mutation review; `serve` could reach it when a
// compaction raced its shutdown).
func TestSnapshotAfterCloseRefused(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 1024)
	replayAll(t, l)
	for i := 1; i <= 10; i++ { // two segments
		appendWait(t, l, payload(LSN(i), 104))
	}
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
