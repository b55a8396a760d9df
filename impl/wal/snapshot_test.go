package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// TestCRC32Combine: the checksum of a‖b from those of a and b is the checksum of the
// concatenation, for lengths of b across the bits the combination squares through.
func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 255, 1000, 4097, 65536 + 3, 1 << 20} {
		a, b := make([]byte, rng.IntN(100)), make([]byte, n)
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.Checksum(append(append([]byte(nil), a...), b...), castagnoli)
		if got := crc32Combine(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), uint64(n)); got != want {
			t.Errorf("len(b) %d: combine %08x, checksum of a‖b %08x", n, got, want)
		}
	}
}

// TestSnapshotInPieces: a snapshot written in pieces is the file Snapshot writes of
// their concatenation, and it is what Replay restores; an aborted one leaves no file
// and the log goes on; Close waits for a snapshot in progress, and a write after
// Close began ends the snapshot with ErrClosed and leaves no file.
func TestSnapshotInPieces(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys walfs.FS, dir string) {
		l := mustOpenIn(t, fsys, dir, 1024)
		replayAll(t, l)
		fill(t, l, 20, 104)

		aborted, err := l.BeginSnapshot(5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := aborted.Write([]byte("never")); err != nil {
			t.Fatal(err)
		}
		aborted.Abort()
		aborted.Abort() // a second Abort does nothing
		if names := listDir(t, fsys, dir); strings.Contains(names, tmpSuffix) || strings.Contains(names, snapshotName(5)) {
			t.Fatalf("an aborted snapshot left %s", names)
		}

		pieces := [][]byte{[]byte("first "), nil, bytes.Repeat([]byte("middle "), 1000), []byte("last")}
		w, err := l.BeginSnapshot(12)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			if n, err := w.Write(p); err != nil || n != len(p) {
				t.Fatalf("Write = %d, %v", n, err)
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		state := bytes.Join(pieces, nil)
		got, err := fsys.ReadFile(walfs.Join(dir, snapshotName(12)))
		if err != nil {
			t.Fatal(err)
		}
		if want := encodeSnapshot(12, state); !bytes.Equal(got, want) {
			t.Fatalf("the file written in pieces differs from the one written whole (%d and %d bytes)", len(got), len(want))
		}
		if n, err := w.Write([]byte("x")); n != 0 || !errors.Is(err, ErrClosed) {
			t.Fatalf("Write after Commit = %d, %v, want 0, ErrClosed", n, err)
		}
		appendWait(t, l, payload(21, 104))

		// Close waits for the snapshot in progress; its next Write sees closing.
		late, err := l.BeginSnapshot(21)
		if err != nil {
			t.Fatal(err)
		}
		closed := make(chan error)
		go func() { closed <- l.Close() }()
		waitClosing(t, l)
		if n, err := late.Write([]byte("late")); n != 0 || !errors.Is(err, ErrClosed) {
			t.Fatalf("Write once Close began = %d, %v, want 0, ErrClosed", n, err)
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if names := listDir(t, fsys, dir); strings.Contains(names, tmpSuffix) {
			t.Fatalf("a snapshot ended by Close left %s", names)
		}

		l = mustOpenIn(t, fsys, dir, 1024)
		defer l.Close()
		r := replayAll(t, l)
		if r.snapLSN != 12 || !bytes.Equal(r.state, state) {
			t.Fatalf("replayed the snapshot at %d (%d bytes), want 12 (%d bytes)", r.snapLSN, len(r.state), len(state))
		}
		if len(r.lsns) != 9 || r.lsns[0] != 13 {
			t.Fatalf("replayed records %v, want 13..21", r.lsns)
		}
	})
}

func listDir(t *testing.T, fsys walfs.FS, dir string) string {
	t.Helper()
	n, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(n, " ")
}

// waitClosing waits until Close has begun on l.
func waitClosing(t *testing.T, l *Log) {
	t.Helper()
	for range 5000 {
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
		if closing {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("Close did not begin")
}

// opCounter counts the Syncs and Truncates of the files of a wrapFS by kind: the
// snapshot being written (".tmp") and snapshots in place (".snap"). It can also make
// each Write and Truncate take a while, as a disk's do.
type opCounter struct {
	mu      sync.Mutex
	counts  map[string]int
	sizes   []int64 // of the snapshots' truncations, in order
	syncsAt []int64 // bytes written to a ".tmp" file at each of its Syncs, in order

	writeTakes, truncateTakes time.Duration
}

type countedFile struct {
	walfs.File
	c       *opCounter
	kind    string
	written int64
}

func (f *countedFile) Write(p []byte) (int, error) {
	time.Sleep(f.c.writeTakes)
	n, err := f.File.Write(p)
	f.written += int64(n)
	return n, err
}

func (c *opCounter) wrap(path string, f walfs.File) walfs.File {
	kind := "segment"
	switch {
	case strings.HasSuffix(path, tmpSuffix):
		kind = "tmp"
	case strings.HasSuffix(path, snapshotSuffix):
		kind = "snap"
	}
	return &countedFile{File: f, c: c, kind: kind}
}

func (c *opCounter) add(op string) {
	c.mu.Lock()
	c.counts[op]++
	c.mu.Unlock()
}

func (c *opCounter) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

func (f *countedFile) Sync() error {
	f.c.add("sync " + f.kind)
	if f.kind == "tmp" {
		f.c.mu.Lock()
		f.c.syncsAt = append(f.c.syncsAt, f.written)
		f.c.mu.Unlock()
	}
	return f.File.Sync()
}

func (f *countedFile) Truncate(size int64) error {
	time.Sleep(f.c.truncateTakes)
	f.c.add("truncate " + f.kind)
	if f.kind == "snap" {
		f.c.mu.Lock()
		f.c.sizes = append(f.c.sizes, size)
		f.c.mu.Unlock()
	}
	return f.File.Truncate(size)
}

func (f *countedFile) Close() error { f.c.add("close " + f.kind); return f.File.Close() }

// TestSnapshotWritesBack: a snapshot Write waits for the disk once a
// snapshotSyncBytes of it is unsynced, so that a record's fdatasync never waits for
// more than that much of a snapshot; and a superseded snapshot larger than
// shrinkStep is truncated a step at a time before it is removed. A truncation that
// fails leaves the work to Remove and fails nothing.
func TestSnapshotWritesBack(t *testing.T) {
	c := &opCounter{counts: map[string]int{}}
	fsys := &wrapFS{FaultFS: walfs.NewFaultFS(), wrap: c.wrap}
	l := openEmpty(t, fsys, 1024)
	fill(t, l, 3, 104)

	// Pieces of 0.6 syncs' worth: the syncs fall at each multiple of
	// snapshotSyncBytes of the state, inside the pieces, and once more at Commit.
	piece := make([]byte, snapshotSyncBytes*3/5)
	w, err := l.BeginSnapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := w.Write(piece); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	h := int64(snapshotHeaderBytes)
	if want := []int64{h + snapshotSyncBytes, h + 2*snapshotSyncBytes, h + 4*int64(len(piece))}; !slices.Equal(c.syncsAt, want) {
		t.Fatalf("the snapshot was synced with %v bytes written, want %v", c.syncsAt, want)
	}

	// Superseded snapshots of 2 steps and 1 byte, and of 2 steps exactly: truncated
	// to every multiple of the step below their size, largest first. The first is
	// superseded after a restart, by a log that knows its size from recovery.
	snapshotOf := func(upto LSN, size int) {
		t.Helper()
		if err := l.Snapshot(upto, make([]byte, size-snapshotHeaderBytes)); err != nil {
			t.Fatal(err)
		}
	}
	snapshotOf(2, 2*shrinkStep+1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openEmpty(t, fsys, 1024)
	defer l.Close()
	snapshotOf(3, 2*shrinkStep)
	appendWait(t, l, payload(4, 104))
	snapshotOf(4, 2*shrinkStep+1)
	appendWait(t, l, payload(5, 104))
	fsys.Inject(walfs.Fault{Op: walfs.OpTruncate, Path: snapshotName(4), Err: syscall.EIO})
	snapshotOf(5, snapshotHeaderBytes+5) // a failed truncation fails nothing
	if want := []int64{2 * shrinkStep, shrinkStep, shrinkStep, 2 * shrinkStep}; !slices.Equal(c.sizes, want) {
		t.Fatalf("superseded snapshots truncated to %v, want %v (the last failing)", c.sizes, want)
	}
	if names := listDir(t, fsys, testDir); strings.Count(names, snapshotSuffix) != 1 || !strings.Contains(names, snapshotName(5)) {
		t.Fatalf("superseded snapshots left: %s", names)
	}
	if got, want := c.get("close tmp"), 5; got != want {
		t.Fatalf("the files of %d snapshots were closed %d times", want, got)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestCompactionShrinksSegments: a covered segment larger than shrinkStep is shrunk
// before it is removed, under a temporary name made durable first; a crash at any
// operation of the snapshot and its compaction leaves a log that opens, with either
// the records or the snapshot that covers them. (A segment cut short under its own
// name would be corrupt: Open reads every segment strictly.)
func TestCompactionShrinksSegments(t *testing.T) {
	const records, size = 40, 64 << 10 // segment 1 holds about 2 MiB of them
	state := []byte("state after every record")
	build := func(fsys walfs.FS) *Log {
		l := openEmpty(t, fsys, 2*shrinkStep)
		fill(t, l, records, size)
		if l.Stats().Segments < 2 {
			t.Fatalf("%d segments: the test does not reach the case", l.Stats().Segments)
		}
		return l
	}

	c := &opCounter{counts: map[string]int{}}
	clean := &wrapFS{FaultFS: walfs.NewFaultFS(), wrap: c.wrap}
	l := build(clean)
	if err := l.Snapshot(records, state); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if c.get("truncate tmp") == 0 {
		t.Fatalf("segment 1 was removed without being shrunk")
	}
	if names := listDir(t, clean, testDir); strings.Contains(names, segmentName(1)) || strings.Contains(names, tmpSuffix) {
		t.Fatalf("left after compaction: %s", names)
	}

	// Each crash point with several random crash states: which directory changes
	// and which truncations survive.
	const seeds = 8
	for i := int64(0); ; i++ {
		k := 1 + i/seeds
		if k > 1000 {
			t.Fatalf("a snapshot still crashes at its operation %d", k)
		}
		fsys := walfs.NewFaultFS()
		l := build(fsys)
		fsys.CrashAtOp(k, rand.New(rand.NewPCG(uint64(i), 1)), nil)
		err := l.Snapshot(records, state)
		crashed := fsys.Crashed()
		l.Close()
		fsys.Restart()
		l2, openErr := Open(testDir, Options{FS: fsys, SegmentBytes: 2 * shrinkStep})
		if openErr != nil {
			t.Fatalf("crash at operation %d of the snapshot (Snapshot: %v): Open: %v", k, err, openErr)
		}
		r := replayAll(t, l2)
		l2.Close()
		snapshotted := r.snapLSN == records && bytes.Equal(r.state, state) && len(r.lsns) == 0
		replayed := r.snapLSN == 0 && len(r.lsns) == records
		if !snapshotted && !replayed {
			t.Fatalf("crash at operation %d: recovered snapshot %d and %d records, want snapshot %d or all %d records",
				k, r.snapLSN, len(r.lsns), records, records)
		}
		if !crashed {
			break // the snapshot and its compaction ran to the end
		}
	}
}

// TestSnapshotPacesItsWrites: after each snapshotSyncBytes made durable, a snapshot
// Write sleeps snapshotSyncIdle times as long as writing and syncing them took, so
// that the snapshot keeps at most a fifth of the disk's time; bytes not yet synced
// cost no pause. Compaction's truncations pause alike.
func TestSnapshotPacesItsWrites(t *testing.T) {
	const writeTakes, syncTakes = 10 * time.Millisecond, 20 * time.Millisecond
	c := &opCounter{counts: map[string]int{}}
	fsys := &wrapFS{FaultFS: walfs.NewFaultFS(), wrap: c.wrap}
	l := openEmpty(t, fsys, 1024)
	defer l.Close()
	fill(t, l, 1, 104)
	c.writeTakes = writeTakes
	fsys.SetSyncDelay(syncTakes)
	w, err := l.BeginSnapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	syncs := fsys.Ops(walfs.OpSync)
	if _, err := w.Write(make([]byte, snapshotSyncBytes-1)); err != nil {
		t.Fatal(err)
	}
	if got := fsys.Ops(walfs.OpSync) - syncs; got != 0 {
		t.Fatalf("a Write short of snapshotSyncBytes synced %d times", got)
	}
	// Two pieces (the sync falls between them): the pause is 4x the two writes
	// of the synced bytes and the sync.
	began := time.Now()
	if _, err := w.Write(make([]byte, 2)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if got := fsys.Ops(walfs.OpSync) - syncs; got != 1 {
		t.Fatalf("the Write that completes snapshotSyncBytes synced %d times, want 1", got)
	}
	if want := 2*writeTakes + syncTakes + snapshotSyncIdle*(2*writeTakes+syncTakes); took < want {
		t.Fatalf("the Write with a sync took %v, want at least %v (two writes, the sync and its pause)", took, want)
	}
	w.Abort()

	// A superseded snapshot of two steps and a byte: two truncations, each paused.
	const truncateTakes = 10 * time.Millisecond
	c.writeTakes = 0
	fsys.SetSyncDelay(0)
	appendWait(t, l, payload(2, 104))
	if err := l.Snapshot(1, make([]byte, 2*shrinkStep+1-snapshotHeaderBytes)); err != nil {
		t.Fatal(err)
	}
	c.truncateTakes = truncateTakes
	began = time.Now()
	if err := l.Snapshot(2, []byte("small")); err != nil {
		t.Fatal(err)
	}
	if want := 2 * (1 + snapshotSyncIdle) * truncateTakes; time.Since(began) < want {
		t.Fatalf("the compaction of two truncations took %v, want at least %v (each and its pause)", time.Since(began), want)
	}
	if got := c.get("truncate snap"); got != 2 {
		t.Fatalf("%d truncations of the superseded snapshot, want 2", got)
	}
}

// TestSnapshotWriterFaults: each file operation of a snapshot that fails fails the
// log with a FailedError naming it and wrapping the cause; a failing Write returns
// 0 bytes; and however the snapshot ends, the next one, or Close, may go on.
func TestSnapshotWriterFaults(t *testing.T) {
	big := make([]byte, snapshotSyncBytes) // its Write syncs
	for _, tc := range []struct {
		name  string
		fault walfs.Fault
		at    string // "begin", "write" or "commit": the call that fails
		op    string // the FailedError's Op
	}{
		{"create", walfs.Fault{Op: walfs.OpCreate, Path: tmpSuffix}, "begin", "create snapshot"},
		{"header's place", walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix}, "begin", "write snapshot"},
		{"state", walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix, Skip: 1}, "write", "write snapshot"},
		{"short state", walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix, Skip: 1, ShortBytes: 3}, "write", "write snapshot"},
		{"write back", walfs.Fault{Op: walfs.OpSync, Path: tmpSuffix}, "write", "fdatasync"},
		{"header", walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix, Skip: 2}, "commit", "write snapshot"},
		{"final fdatasync", walfs.Fault{Op: walfs.OpSync, Path: tmpSuffix, Skip: 1}, "commit", "fdatasync"},
		{"rename", walfs.Fault{Op: walfs.OpRename, Path: snapshotSuffix}, "commit", "rename"},
		{"directory sync", walfs.Fault{Op: walfs.OpSyncDir}, "commit", "sync dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, 1024)
			defer l.Close()
			fill(t, l, 3, 104)
			fault := tc.fault
			fault.Err = syscall.EIO
			fsys.Inject(fault)
			failedIn, err := "begin", error(nil)
			w, err := l.BeginSnapshot(2)
			if err == nil {
				var n int
				failedIn, n, err = "write", 0, nil
				if n, err = w.Write(big); err != nil && n != 0 {
					t.Errorf("a failed Write returned %d bytes, want 0", n)
				}
				if err == nil {
					failedIn, err = "commit", w.Commit()
				}
			}
			if failedIn != tc.at {
				t.Fatalf("failed in %s, want in %s: %v", failedIn, tc.at, err)
			}
			var fe *FailedError
			if !errors.Is(err, ErrFailed) || !errors.As(err, &fe) || fe.Op != tc.op || !errors.Is(err, syscall.EIO) {
				t.Fatalf("error %v, want ErrFailed with op %q wrapping EIO", err, tc.op)
			}
			if !l.snapMu.TryLock() {
				t.Fatal("the failed snapshot still holds the log's snapshot lock")
			}
			l.snapMu.Unlock()
		})
	}
}
