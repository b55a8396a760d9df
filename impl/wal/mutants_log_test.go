package wal

// Tests written from the survivors of the full mutation run of the log (make
// mutation-wal; docs/verify/mutation.md, "Survivors reviewed (impl/wal, full run)").
// Each checks a property that the log's documentation or docs/wal.md states and that
// no other test pinned down, and names the mutants it kills.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// handleFS wraps a FaultFS and keeps account of the file handles the log opens and
// closes, of the Allocate calls and of every WriteAt; beforeWrite, if set, runs
// before each WriteAt (outside any lock of the file system).
type handleFS struct {
	wrapFS
	mu          sync.Mutex
	open        map[*handleFile]bool
	closedTwice []string
	allocs      int
	writes      []int // sizes of the WriteAt calls, in order
	beforeWrite func(path string, off int64)
	// shortWrite, if set, makes Write on the files it names write one byte less than
	// asked and report no error: a file system that breaks File's contract.
	shortWrite func(path string) bool
}

type handleFile struct {
	walfs.File
	fs     *handleFS
	path   string
	closed bool
}

func newHandleFS() *handleFS {
	h := &handleFS{open: map[*handleFile]bool{}}
	h.wrapFS = wrapFS{FaultFS: walfs.NewFaultFS(), wrap: h.track}
	return h
}

func (h *handleFS) track(path string, f walfs.File) walfs.File {
	hf := &handleFile{File: f, fs: h, path: path}
	h.mu.Lock()
	h.open[hf] = true
	h.mu.Unlock()
	return hf
}

func (f *handleFile) Close() error {
	f.fs.mu.Lock()
	if f.closed {
		f.fs.closedTwice = append(f.fs.closedTwice, f.path)
	}
	f.closed = true
	delete(f.fs.open, f)
	f.fs.mu.Unlock()
	return f.File.Close()
}

func (f *handleFile) Allocate(size int64) error {
	f.fs.mu.Lock()
	f.fs.allocs++
	f.fs.mu.Unlock()
	return f.File.Allocate(size)
}

func (f *handleFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	f.fs.writes = append(f.fs.writes, len(p))
	hook := f.fs.beforeWrite
	f.fs.mu.Unlock()
	if hook != nil {
		hook(f.path, off)
	}
	return f.File.WriteAt(p, off)
}

func (f *handleFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	short := f.fs.shortWrite != nil && f.fs.shortWrite(f.path) && len(p) > 0
	f.fs.mu.Unlock()
	if short {
		return f.File.Write(p[:len(p)-1])
	}
	return f.File.Write(p)
}

// leaks returns the paths of the handles still open and of those closed twice.
func (h *handleFS) leaks() (open, twice []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for f := range h.open {
		open = append(open, f.path)
	}
	return open, append([]string(nil), h.closedTwice...)
}

// segmentRecords decodes the records of a segment file from its header on and
// returns their LSNs and the offset just past the last one.
func segmentRecords(t *testing.T, fsys walfs.FS, path string) (lsns []LSN, end int) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	end = segmentHeaderBytes
	for {
		r, ok := decodeRecord(b, end)
		if !ok {
			return lsns, end
		}
		lsns = append(lsns, r.lsn)
		end = r.end
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
	l := mustOpen(t, h, 1024)
	replayAll(t, l)
	for i := 1; i <= 8; i++ { // 32 + 8 × 124 bytes: segment 1 is full
		appendWait(t, l, payload(LSN(i), 104))
	}
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

// TestOpenSyncsTheRecoveredTail: records that a previous life wrote but could not
// fdatasync (a kill -9, or here a failed fdatasync, leaves them in the page cache)
// are read by recovery and replayed: the gate answers from them. Open makes them
// durable before it returns (docs/wal.md, "Recovering", step 6), so a power loss
// afterwards loses none of what Replay delivered.
//
// Kills: impl/wal/log.go:open:sync-drop (the fdatasync of the recovered active segment).
func TestOpenSyncsTheRecoveredTail(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	for i := 1; i <= 3; i++ {
		appendWait(t, l, payload(LSN(i), 50))
	}
	fsys.Inject(walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix})
	for i := 4; i <= 5; i++ {
		if _, err := l.Append(payload(LSN(i), 50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WaitDurable(context.Background(), 5); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable(5) = %v, want the injected fdatasync failure", err)
	}
	l.Close() // the process ends; the page cache keeps records 4 and 5

	l2 := mustOpen(t, fsys, 0)
	if r := replayAll(t, l2); len(r.lsns) != 5 {
		t.Fatalf("second life replayed %v, want records 1..5 (still in the page cache)", r.lsns)
	}
	fsys.Crash(nil) // power loss before the second life wrote anything
	l2.Close()
	fsys.Restart()

	l3 := mustOpen(t, fsys, 0)
	defer l3.Close()
	r := replayAll(t, l3)
	if len(r.lsns) != 5 {
		t.Fatalf("after the power loss: replayed %v, want 1..5 (the second life answered from them)", r.lsns)
	}
	for i, rec := range r.recs {
		if !bytes.Equal(rec, payload(LSN(i+1), 50)) {
			t.Fatalf("record %d differs", i+1)
		}
	}
}

// TestCleanCloseCutsDurably: a clean Close cuts the active segment to its last record
// (docs/wal.md, "Reserved space") and makes the cut durable: after a power loss the
// last segment still ends at its last record, with no reserved zeros behind it.
//
// Kills: impl/wal/log.go:Log.Close:sync-drop (the fdatasync after the cut).
func TestCleanCloseCutsDurably(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	for i := 1; i <= 3; i++ {
		appendWait(t, l, payload(LSN(i), 70))
	}
	if got := fsys.Size(segPath(1)); got <= int64(segmentHeaderBytes+3*90) {
		t.Fatalf("segment is %d bytes before Close: no space was reserved, the test does not reach the case", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsys.Crash(nil)
	fsys.Restart()
	lsns, end := segmentRecords(t, fsys, segPath(1))
	if len(lsns) != 3 {
		t.Fatalf("records %v after the power loss, want 1..3", lsns)
	}
	if got := fsys.Size(segPath(1)); got != int64(end) {
		t.Fatalf("after Close and a power loss the segment is %d bytes, its last record ends at %d", got, end)
	}
}

// TestFailedLogIsNotSyncedAgain: after a failed fdatasync nothing is retried
// (docs/wal.md, "Failing closed": a retry could report success for data that never
// reached the disk). Close of a failed log only closes its files: no cut, no
// fdatasync.
//
// Kills: impl/wal/log.go:Log.Close:boolean (l.err == nil || l.allocEnd > 0: the cut
// and its fdatasync on a failed log).
func TestFailedLogIsNotSyncedAgain(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	appendWait(t, l, []byte("durable"))
	fsys.Inject(walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix})
	lsn, err := l.Append([]byte("lost"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(context.Background(), lsn); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable = %v, want the fdatasync failure", err)
	}
	syncs, truncs := fsys.Ops(walfs.OpSync), fsys.Ops(walfs.OpTruncate)
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Close = %v, want the log's failure", err)
	}
	if fsys.Ops(walfs.OpSync) != syncs || fsys.Ops(walfs.OpTruncate) != truncs {
		t.Fatalf("Close of a failed log did %d fdatasyncs and %d truncates, want none",
			fsys.Ops(walfs.OpSync)-syncs, fsys.Ops(walfs.OpTruncate)-truncs)
	}
}

// TestFileHandlesClosed: every file handle the log opens is closed exactly once, by
// Close, by the operation that failed, or by an Open that refuses: a failed log or a
// failed Open must not leak descriptors (a gate restarts its log in the same process).
//
// Kills: impl/wal/log.go:Log.createSegment:remove-call (f.Close() after a failed
// header write, fdatasync or directory sync: three mutants) and remove-stmt (l.file =
// nil after a failed fdatasync or directory sync: Close then closed the handle a
// second time), impl/wal/log.go:open:remove-call (f.Close() when the fdatasync of the
// recovered segment fails), impl/wal/log.go:Log.Close:remove-stmt (the Close of the
// active segment), impl/wal/log.go:Log.writeBatch:remove-stmt (l.file = nil once the
// full segment is closed: a failed createSegment then left it for Close to close
// again), impl/wal/snapshot.go:Log.writeSnapshot:remove-call (f.Close() after a failed
// write or fdatasync of the snapshot: two mutants).
func TestFileHandlesClosed(t *testing.T) {
	const seg2 = "00000000000000000002.wal"
	cases := []struct {
		name     string
		fault    *walfs.Fault // injected before the record that starts segment 2
		openFail *walfs.Fault // injected before a reopen
		snapFail *walfs.Fault // injected before a snapshot
	}{
		{name: "clean life"},
		{name: "segment header write fails", fault: &walfs.Fault{Op: walfs.OpWrite, Path: seg2}},
		{name: "segment header fdatasync fails", fault: &walfs.Fault{Op: walfs.OpSync, Path: seg2}},
		{name: "directory sync at a new segment fails", fault: &walfs.Fault{Op: walfs.OpSyncDir}},
		{name: "open: fdatasync of the recovered segment fails", openFail: &walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix}},
		{name: "open: the first segment cannot be written", openFail: &walfs.Fault{Op: walfs.OpWrite}},
		{name: "snapshot write fails", snapFail: &walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix}},
		{name: "snapshot fdatasync fails", snapFail: &walfs.Fault{Op: walfs.OpSync, Path: tmpSuffix}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandleFS()
			l := mustOpen(t, h, 1024)
			replayAll(t, l)
			for i := 1; i <= 8; i++ {
				appendWait(t, l, payload(LSN(i), 104))
			}
			if tc.fault != nil {
				h.Inject(*tc.fault)
				lsn, err := l.Append(payload(9, 104)) // segment 2
				if err != nil {
					t.Fatal(err)
				}
				if err := l.WaitDurable(context.Background(), lsn); !errors.Is(err, ErrFailed) {
					t.Fatalf("WaitDurable = %v, want the injected failure", err)
				}
			}
			if tc.snapFail != nil {
				h.Inject(*tc.snapFail)
				if err := l.Snapshot(8, []byte("state")); !errors.Is(err, ErrFailed) {
					t.Fatalf("Snapshot = %v, want the injected failure", err)
				}
			}
			l.Close()
			if tc.openFail != nil {
				if tc.openFail.Op == walfs.OpWrite { // a fresh directory: Open creates segment 1
					h = newHandleFS()
				}
				h.Inject(*tc.openFail)
				if l2, err := Open(testDir, Options{FS: h, SegmentBytes: 1024}); err == nil {
					l2.Close()
					t.Fatalf("Open succeeded despite the injected failure")
				}
			}
			if open, twice := h.leaks(); len(open) > 0 || len(twice) > 0 {
				t.Fatalf("handles left open: %v; closed twice: %v", open, twice)
			}
		})
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
			l := mustOpen(t, fsys, 0)
			replayAll(t, l)
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

// TestRefusalNamesTheMagic: a file whose magic is wrong is refused with a reason that
// quotes the 8 bytes found there (docs/wal.md: the refusal says what is wrong).
//
// Kills: impl/wal/format.go:decodeSegmentHeader:constant and decodeSnapshot:constant
// mutants of the quoted slice (b[1:8], b[0:9]).
func TestRefusalNamesTheMagic(t *testing.T) {
	for _, tc := range []struct {
		name, file string
	}{
		{"segment", segmentName(1)},
		{"snapshot", snapshotName(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := mustOpen(t, fsys, 0)
			replayAll(t, l)
			appendWait(t, l, []byte("one"))
			if err := l.Snapshot(1, []byte("state")); err != nil {
				t.Fatal(err)
			}
			l.Close()
			p := testDir + "/" + tc.file
			b, err := fsys.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			copy(b, "NOTMAGIC")
			rewrite(t, fsys, p, b)
			_, err = Open(testDir, Options{FS: fsys})
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != p || !strings.HasSuffix(ce.Reason, `bad magic "NOTMAGIC"`) {
				t.Fatalf("Open = %v, want a CorruptError for %s ending in bad magic \"NOTMAGIC\"", err, p)
			}
		})
	}
}

// TestSegmentBoundaries: a segment ends before the record that would take it past
// SegmentBytes (docs/wal.md, "On disk"), so a segment can be filled to exactly
// SegmentBytes, counting its 32-byte header; the first record of a segment stays in
// it even when it alone is larger. The same holds for the segment recovered at Open.
//
// Kills: impl/wal/log.go:Log.Append:boundary (activeLen+size >= segmentBytes: a
// segment never filled exactly; lsn >= activeFst: the oversized first record pushed
// out of its own segment), impl/wal/log.go:open:remove-stmt (activeLen not set for a
// new or a recovered segment; activeFst not set), impl/wal/log.go:open:constant (the
// new first segment listed as starting at LSN 2).
func TestSegmentBoundaries(t *testing.T) {
	const segBytes = 1024 // 32 + 8 × 124: records of 104 bytes fill it exactly
	type want struct {
		seg  uint64
		lsns []LSN
		end  int
	}
	cases := []struct {
		name   string
		reopen int   // records written in a first life, closed cleanly before the rest
		sizes  []int // payload sizes of the records, LSN 1 first
		want   []want
	}{
		{"filled exactly, then one more", 0, []int{104, 104, 104, 104, 104, 104, 104, 104, 0},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7, 8}, 1024}, {2, []LSN{9}, 52}}},
		{"filled exactly across a reopen", 4, []int{104, 104, 104, 104, 104, 104, 104, 104, 0},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7, 8}, 1024}, {2, []LSN{9}, 52}}},
		{"one byte over", 0, []int{104, 104, 104, 104, 104, 104, 104, 105},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7}, 900}, {2, []LSN{8}, 157}}},
		{"oversized first record", 0, []int{2000, 10},
			[]want{{1, []LSN{1}, 2052}, {2, []LSN{2}, 62}}},
		{"second record overflows", 0, []int{500, 600},
			[]want{{1, []LSN{1}, 552}, {2, []LSN{2}, 652}}},
		{"overflow right after a reopen", 1, []int{1500, 10, 0},
			[]want{{1, []LSN{1}, 1552}, {2, []LSN{2, 3}, 82}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := mustOpen(t, fsys, segBytes)
			replayAll(t, l)
			for i, size := range tc.sizes {
				if i == tc.reopen && i > 0 {
					if err := l.Close(); err != nil {
						t.Fatal(err)
					}
					l = mustOpen(t, fsys, segBytes)
					replayAll(t, l)
				}
				appendWait(t, l, payload(LSN(i+1), size))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			names, _ := fsys.ReadDir(testDir)
			var segs []string
			for _, n := range names {
				if strings.HasSuffix(n, segmentSuffix) {
					segs = append(segs, n)
				}
			}
			if len(segs) != len(tc.want) {
				t.Fatalf("segments %v, want %d", segs, len(tc.want))
			}
			for _, w := range tc.want {
				lsns, end := segmentRecords(t, fsys, segPath(w.seg))
				if fmt.Sprint(lsns) != fmt.Sprint(w.lsns) || end != w.end {
					t.Errorf("segment %d: records %v ending at %d, want %v ending at %d", w.seg, lsns, end, w.lsns, w.end)
				}
			}
		})
	}
}

// TestReservationAhead: the active segment's space is reserved 1 MiB at a time past
// the writer (docs/wal.md, "Reserved space"): from its creation, so that even the
// first group commit overwrites zeros, and again at Open for the recovered segment
// (docs/wal.md, "Recovering", step 6). A commit inside the reservation does not grow
// the file. A file system without fallocate is asked once, not at every commit.
//
// Kills: the impl/wal/log.go:_:constant mutants of allocChunkBytes,
// impl/wal/log.go:Log.createSegment:remove-call (no reserve at creation),
// impl/wal/log.go:open:remove-call (no reserve at Open), impl/wal/log.go:Log.reserve:
// remove-stmt (noReserve never set: Allocate asked at every commit).
func TestReservationAhead(t *testing.T) {
	const mib = 1 << 20
	h := newHandleFS()
	l := mustOpen(t, h, 8*mib)
	replayAll(t, l)
	if got := h.Size(segPath(1)); got != segmentHeaderBytes+mib {
		t.Fatalf("new segment is %d bytes, want its header + 1 MiB reserved", got)
	}
	for i := 1; i <= 3; i++ {
		appendWait(t, l, payload(LSN(i), 100))
	}
	if got := h.Size(segPath(1)); got != segmentHeaderBytes+mib {
		t.Fatalf("after three commits the segment is %d bytes, want it unchanged (%d)", got, segmentHeaderBytes+mib)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, end := segmentRecords(t, h, segPath(1))
	l = mustOpen(t, h, 8*mib)
	replayAll(t, l)
	if got := h.Size(segPath(1)); got != int64(end)+mib {
		t.Fatalf("recovered segment is %d bytes after Open, want its %d bytes of records + 1 MiB reserved", got, end)
	}
	l.Close()

	h = newHandleFS()
	h.SetAllocate(false)
	l = mustOpen(t, h, 8*mib)
	replayAll(t, l)
	for i := 1; i <= 3; i++ {
		appendWait(t, l, payload(LSN(i), 100))
	}
	l.Close()
	if h.allocs != 1 {
		t.Fatalf("Allocate asked %d times of a file system without it, want once", h.allocs)
	}
}

// TestDocumentedDefaults: the defaults that docs/wal.md gives: segments of 64 MiB,
// at most 64 MiB waiting for the disk.
//
// Kills: the impl/wal/log.go:_:constant mutants of SegmentBytesDefault and
// PendingBytesMax.
func TestDocumentedDefaults(t *testing.T) {
	if SegmentBytesDefault != 64<<20 || PendingBytesMax != 64<<20 {
		t.Fatalf("SegmentBytesDefault %d, PendingBytesMax %d; docs/wal.md says 64 MiB each", SegmentBytesDefault, PendingBytesMax)
	}
	l := mustOpen(t, walfs.NewFaultFS(), 0)
	defer l.Close()
	if l.segmentBytes != SegmentBytesDefault || l.pendingMax != PendingBytesMax {
		t.Fatalf("Open with zero options: segment %d, pending max %d", l.segmentBytes, l.pendingMax)
	}
}

// TestAppendRefusedIsLSNZero: an Append that appends nothing returns LSN 0, "no
// record" (LSN's documentation), with its error: a record over the limit, a failed
// log, a closed log.
//
// Kills: impl/wal/log.go:Log.Append:constant (return 1 with the error: three mutants).
func TestAppendRefusedIsLSNZero(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	appendWait(t, l, []byte("one"))
	if lsn, err := l.Append(make([]byte, RecordBytesMax+1)); lsn != 0 || !errors.Is(err, ErrRecordTooLarge) {
		t.Errorf("too large: lsn %d, err %v; want 0, ErrRecordTooLarge", lsn, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lsn, err := l.Append([]byte("late")); lsn != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("closed: lsn %d, err %v; want 0, ErrClosed", lsn, err)
	}
	l = mustOpen(t, fsys, 0)
	defer l.Close()
	replayAll(t, l)
	fsys.Inject(walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix})
	lsn, _ := l.Append([]byte("two"))
	if err := l.WaitDurable(context.Background(), lsn); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable = %v, want the injected failure", err)
	}
	if lsn, err := l.Append([]byte("three")); lsn != 0 || !errors.Is(err, ErrFailed) {
		t.Errorf("failed: lsn %d, err %v; want 0, ErrFailed", lsn, err)
	}
}

// TestBackPressureEdges: at most pendingMax bytes wait for the disk; Append does no
// I/O until the next record would take the backlog past it ("beyond it, Append
// writes the backlog itself"), so a backlog of exactly pendingMax waits. A record
// larger than the limit on its own is appended (nothing is pending to write first),
// also right after a commit.
//
// Kills: impl/wal/log.go:Log.Append:boundary (pendBytes >= 0: a commit of nothing, a
// panic; pendBytes+size >= pendingMax: a full backlog written one record early),
// impl/wal/log.go:Log.commitLocked:constant (pendBytes = 1 after a commit).
func TestBackPressureEdges(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	replayAll(t, l)
	const rec = recordHeaderBytes + 30
	l.mu.Lock()
	l.pendingMax = 2 * rec
	l.mu.Unlock()
	writes := func() int64 { return fsys.Ops(walfs.OpWrite) }
	w0 := writes()
	for i := 1; i <= 2; i++ {
		if _, err := l.Append(payload(LSN(i), 30)); err != nil {
			t.Fatal(err)
		}
	}
	if writes() != w0 {
		t.Fatalf("Append wrote with a backlog of exactly pendingMax bytes")
	}
	if _, err := l.Append(payload(3, 30)); err != nil {
		t.Fatal(err)
	}
	if writes() == w0 || l.Durable() != 2 {
		t.Fatalf("the record past pendingMax did not write the backlog first (durable %d)", l.Durable())
	}
	if err := l.WaitDurable(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	for i := 4; i <= 5; i++ { // each alone larger than pendingMax, nothing pending
		lsn, err := l.Append(payload(LSN(i), 500))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(context.Background(), lsn); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplayRechecks: Replay runs once (a second call is ErrReplayed, even before any
// Append) and re-verifies what Open verified: a record replaced since Open by an
// intact record with another LSN is refused, not replayed under the wrong number.
//
// Kills: impl/wal/log.go:Log.Replay:remove-stmt and constant (replayed not set),
// impl/wal/log.go:Log.Replay:boolean (!ok && r.lsn != want).
func TestReplayRechecks(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	for i := 1; i <= 3; i++ {
		appendWait(t, l, payload(LSN(i), 40))
	}
	l.Close()

	l = mustOpen(t, fsys, 0)
	replayAll(t, l)
	if err := l.Replay(nil, nil); !errors.Is(err, ErrReplayed) {
		t.Errorf("second Replay = %v, want ErrReplayed", err)
	}
	l.Close()

	l = mustOpen(t, fsys, 0)
	defer l.Close()
	b, _ := fsys.ReadFile(segPath(1))
	off := segmentHeaderBytes + recordHeaderBytes + 40 // record 2
	swapped := appendRecord(nil, 7, payload(7, 40))
	f, err := fsys.OpenAppend(segPath(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(swapped, int64(off)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r, ok := decodeRecord(b, off); !ok || r.lsn != 2 {
		t.Fatalf("the test expected record 2 at offset %d", off)
	}
	var got []LSN
	err = l.Replay(nil, func(lsn LSN, _ []byte) error { got = append(got, lsn); return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Replay of a record replaced since Open = %v (replayed %v), want ErrCorrupt", err, got)
	}
}

// TestFailureNamesTheFile: the log's failure is the *FailedError of the operation that
// failed, naming it and the segment file (docs/wal.md, "Failing closed"), also when
// the segment was recovered by Open.
//
// Kills: impl/wal/log.go:Log.fail:boolean (a *FailedError wrapped again as "io" on the
// directory), impl/wal/log.go:open:remove-stmt (filePath not set for the recovered
// segment).
func TestFailureNamesTheFile(t *testing.T) {
	for _, reopen := range []bool{false, true} {
		t.Run(fmt.Sprintf("reopen=%v", reopen), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := mustOpen(t, fsys, 0)
			replayAll(t, l)
			if reopen {
				appendWait(t, l, []byte("one"))
				l.Close()
				l = mustOpen(t, fsys, 0)
				replayAll(t, l)
			}
			defer l.Close()
			fsys.Inject(walfs.Fault{Op: walfs.OpWrite, Path: segmentSuffix})
			lsn, _ := l.Append([]byte("two"))
			err := l.WaitDurable(context.Background(), lsn)
			var fe *FailedError
			if !errors.As(err, &fe) || fe.Op != "write" || fe.Path != segPath(1) || !errors.Is(err, walfs.ErrInjected) {
				t.Fatalf("WaitDurable = %v, want the *FailedError of the write to %s", err, segPath(1))
			}
			if l.Err() != err {
				t.Fatalf("Err() = %v, want the same failure", l.Err())
			}
		})
	}
}

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
	l := mustOpen(t, fsys, 1024)
	replayAll(t, l)
	for i := 1; i <= 10; i++ { // segment 1: 1..8, segment 2: 9, 10
		appendWait(t, l, payload(LSN(i), 104))
	}
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

// TestSnapshotShortWrite: a snapshot file that was not written whole is never put in
// place, even by a file system that reports a short write without an error: the
// snapshot fails the log, and the log still opens at its previous state. (A short
// snapshot renamed in would make the next Open refuse the log.)
//
// Kills: impl/wal/snapshot.go:Log.writeSnapshot:negate-cond and remove-stmt (the check
// of n against len(b)).
func TestSnapshotShortWrite(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	replayAll(t, l)
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

// TestBacklogWrittenInChunks: a large backlog is written as chunks of at most
// chunkBytesMax bytes, one write each, never copied into one growing buffer.
//
// Kills: impl/wal/log.go:Log.Append:arith (len - size > chunkBytesMax: chunks grow past
// the limit).
func TestBacklogWrittenInChunks(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	defer l.Close()
	replayAll(t, l)
	var last LSN
	for i := 1; i <= 3000; i++ { // about 3 MiB
		lsn, err := l.Append(payload(LSN(i), 1000))
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	if err := l.WaitDurable(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var data []int
	for _, n := range h.writes {
		if n != segmentHeaderBytes {
			data = append(data, n)
		}
	}
	if len(data) < 3 {
		t.Fatalf("3 MiB written in %d writes, want chunks of at most %d bytes", len(data), chunkBytesMax)
	}
	for _, n := range data {
		if n > chunkBytesMax {
			t.Fatalf("a write of %d bytes, over chunkBytesMax (%d)", n, chunkBytesMax)
		}
	}
}

// holdFirstWrite makes the next record write to a segment wait: it returns a
// channel closed when that write is reached and a function that lets it go on.
func holdFirstWrite(h *handleFS) (reached <-chan struct{}, release func()) {
	r, rel := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.mu.Lock()
	h.beforeWrite = func(path string, off int64) {
		if strings.HasSuffix(path, segmentSuffix) && off >= segmentHeaderBytes {
			once.Do(func() { close(r); <-rel })
		}
	}
	h.mu.Unlock()
	var relOnce sync.Once
	return r, func() { relOnce.Do(func() { close(rel) }) }
}

// TestContextDoneWhileALeaderWrites: a waiter whose context is already done when
// it would sleep (another waiter leads the commit) returns the context's error at
// once, leaves no sleeper counted behind, and its record still becomes durable.
// Unlike TestWaitDurableContext it needs no timing: the leader is held inside its
// write until the waiter has returned, so the mutation runs can keep it (its name
// must not match the -skip pattern TestWaitDurableContext of make mutation-wal).
//
// Kills: impl/wal/log.go:Log.WaitDurable:remove-call (the Lock in the context branch:
// an unlock of an unlocked mutex), remove-stmt and arith (sleeping not decremented,
// or incremented).
func TestContextDoneWhileALeaderWrites(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	defer l.Close()
	replayAll(t, l)
	reached, release := holdFirstWrite(h)
	defer release()
	first, err := l.Append([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	leader := make(chan error, 1)
	go func() { leader <- l.WaitDurable(context.Background(), first) }()
	<-reached // the leader is writing
	// One waiter for a record in the commit in flight, one for a record behind it.
	for _, lsn := range []LSN{first, first + 1} {
		if lsn > first {
			if _, err := l.Append([]byte("behind")); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := l.WaitDurable(ctx, lsn); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitDurable(%d) with a done context = %v, want context.Canceled", lsn, err)
		}
		l.mu.Lock()
		asleep := l.sleeping
		l.mu.Unlock()
		if asleep != 0 {
			t.Fatalf("%d waiters counted asleep after the only one returned", asleep)
		}
	}
	release()
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(context.Background(), first+1); err != nil {
		t.Fatalf("the record still becomes durable: %v", err)
	}
}

// TestCloseWhileALeaderWrites: Close called while a waiter leads a commit waits for
// that commit, then writes what is still pending, and returns nil; every record
// appended before Close is durable and replayed by the next Open.
//
// Kills: impl/wal/log.go:Log.Close:remove-call (the Lock after waiting for the leader:
// an unlock of an unlocked mutex).
func TestCloseWhileALeaderWrites(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	replayAll(t, l)
	reached, release := holdFirstWrite(h)
	defer release()
	first, err := l.Append([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	leader := make(chan error, 1)
	go func() { leader <- l.WaitDurable(context.Background(), first) }()
	<-reached
	if _, err := l.Append([]byte("second")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	// Close has begun once closing is set; with the leader held it then waits for
	// the commit in flight.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
		if closing {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Close did not start")
		}
	}
	release()
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close = %v", err)
	}
	l = mustOpen(t, h, 0)
	defer l.Close()
	if r := replayAll(t, l); fmt.Sprint(r.lsns) != "[1 2]" {
		t.Fatalf("replayed %v, want [1 2]", r.lsns)
	}
}

// TestSpareBuffersBounded: the written chunk buffers kept for reuse are bounded
// (spareBuffersMax), also after a backlog of many chunks was written in one commit:
// the memory a log holds between commits does not grow with its largest backlog.
//
// Kills: impl/wal/log.go:Log.commitLocked:boolean (cap <= 4 MiB || len(spare) < 4:
// every buffer of up to 4 MiB kept, here ten of them).
func TestSpareBuffersBounded(t *testing.T) {
	l := mustOpen(t, walfs.NewFaultFS(), 0)
	defer l.Close()
	replayAll(t, l)
	rec := payload(1, 1000)
	var last LSN
	for range 10 * chunkBytesMax / len(rec) { // ten chunks or more
		lsn, err := l.Append(rec)
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	if err := l.WaitDurable(context.Background(), last); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	n := len(l.spare)
	l.mu.Unlock()
	if n > spareBuffersMax {
		t.Fatalf("%d spare buffers kept after a commit of ten chunks, want at most %d", n, spareBuffersMax)
	}
}

// TestCloseTwice: a second Close (a deferred Close after an explicit one) returns what
// the first returned: nil for a clean log, the failure for a failed one.
//
// Exercises impl/wal/log.go:Log.Close:unlock-drop (the Unlock before a second Close
// waits for the first): that mutant deadlocks, so it times out rather than being
// killed.
func TestCloseTwice(t *testing.T) {
	for _, failed := range []bool{false, true} {
		t.Run(fmt.Sprintf("failed=%v", failed), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := mustOpen(t, fsys, 0)
			replayAll(t, l)
			appendWait(t, l, []byte("one"))
			if failed {
				fsys.Inject(walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix})
				lsn, _ := l.Append([]byte("two"))
				l.WaitDurable(context.Background(), lsn)
			}
			first := l.Close()
			if second := l.Close(); second != first || (first == nil) == failed {
				t.Fatalf("Close = %v, then %v; want the same twice (failed log: %v)", first, second, failed)
			}
		})
	}
}
