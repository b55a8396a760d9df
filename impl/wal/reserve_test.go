package wal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// The log reserves the active segment's space ahead of its writes (File.Allocate),
// so that group commits overwrite zeros instead of growing the file. These tests pin
// what that changes on disk and in recovery.

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
	l := openEmpty(t, h, 8*mib)
	if got := h.Size(segPath(1)); got != segmentHeaderBytes+mib {
		t.Fatalf("new segment is %d bytes, want its header + 1 MiB reserved", got)
	}
	fill(t, l, 3, 100)
	if got := h.Size(segPath(1)); got != segmentHeaderBytes+mib {
		t.Fatalf("after three commits the segment is %d bytes, want it unchanged (%d)", got, segmentHeaderBytes+mib)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	_, end := segmentRecords(t, h, segPath(1))
	l = openEmpty(t, h, 8*mib)
	if got := h.Size(segPath(1)); got != int64(end)+mib {
		t.Fatalf("recovered segment is %d bytes after Open, want its %d bytes of records + 1 MiB reserved", got, end)
	}
	l.Close()

	h = newHandleFS()
	h.SetAllocate(false)
	l = openEmpty(t, h, 8*mib)
	fill(t, l, 3, 100)
	l.Close()
	if h.allocs != 1 {
		t.Fatalf("Allocate asked %d times of a file system without it, want once", h.allocs)
	}
}

// TestReservationFollowsTheWrites: the space of the active segment stays reserved
// ahead of the write position (allocChunkBytes at a time) also after the first
// chunk is used up: after each commit the file is longer than its records.
//
// Kills: impl/wal/log.go:Log.writeBatch:remove-call bfb32544 and arith 5ef1e2cf (no
// new reservation once the first is written over: the file grows write by write).
func TestReservationFollowsTheWrites(t *testing.T) {
	const size = 100 << 10
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 8<<20)
	defer l.Close()
	replayAll(t, l)
	end := int64(segmentHeaderBytes)
	for i := 1; i <= 25; i++ { // about 2.5 MiB: past two reservations
		appendWait(t, l, payload(LSN(i), size))
		end += recordHeaderBytes + size
		if got := fsys.Size(segPath(1)); got <= end || got > end+allocChunkBytes {
			t.Fatalf("after record %d (records end at %d) the segment is %d bytes, want space reserved ahead, at most %d", i, end, got, allocChunkBytes)
		}
	}
}

// TestReservedTailIsACleanEnd: after a crash, the reserved zeros after the last
// record are the log's clean end: nothing is torn, nothing is cut, every durable
// record is replayed, and the log goes on where it stopped.
func TestReservedTailIsACleanEnd(t *testing.T) {
	for _, segBytes := range []int64{0, 4096} { // the default (64 MiB), and one that rolls over
		fsys := walfs.NewFaultFS()
		l := openEmpty(t, fsys, segBytes)
		const n = 100
		fill(t, l, n, 60)
		fsys.Crash(nil) // keep exactly the durable state
		fsys.Restart()
		active := lastSegment(t, fsys)
		b, _ := fsys.ReadFile(active)
		if len(b) == 0 || b[len(b)-1] != 0 {
			t.Fatalf("segBytes %d: the active segment %s (%d bytes) has no reserved zeros after a crash", segBytes, active, len(b))
		}
		l = mustOpen(t, fsys, segBytes)
		r := replayAll(t, l)
		if len(r.lsns) != n || r.lsns[n-1] != n {
			t.Fatalf("segBytes %d: replayed %d records, want %d", segBytes, len(r.lsns), n)
		}
		if st := l.Stats(); st.TornBytes != 0 {
			t.Fatalf("segBytes %d: TornBytes = %d for reserved zeros, want 0", segBytes, st.TornBytes)
		}
		if lsn := appendWait(t, l, []byte("next")); lsn != n+1 {
			t.Fatalf("segBytes %d: next LSN %d, want %d", segBytes, lsn, n+1)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = mustOpen(t, fsys, segBytes)
		if r := replayAll(t, l); len(r.lsns) != n+1 || string(r.recs[n]) != "next" {
			t.Fatalf("segBytes %d: after the restart, %d records", segBytes, len(r.lsns))
		}
		l.Close()
	}
}

// TestReservedZerosAreTheCleanEnd: zero bytes after the last record of the last
// segment (reserved space never written) are the clean end of the log, whatever
// their number: nothing is cut and Stats.TornBytes stays 0. allZero itself is
// checked at the lengths around its 8-byte stride.
func TestReservedZerosAreTheCleanEnd(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 16, 17, 100} {
		t.Run(fmt.Sprintf("%d zeros", n), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			fsys.SetAllocate(false)
			seg := append(segFile(1, 1, 1, 2), make([]byte, n)...)
			putFiles(t, fsys, map[string][]byte{segmentName(1): seg})
			l := mustOpen(t, fsys, 1024)
			if got := l.Stats().TornBytes; got != 0 {
				t.Errorf("Stats.TornBytes = %d, want 0", got)
			}
			if r := replayAll(t, l); fmt.Sprint(r.lsns) != "[1 2]" {
				t.Errorf("replayed %v, want [1 2]", r.lsns)
			}
			if got := fsys.Size(segPath(1)); got != int64(len(seg)) {
				t.Errorf("segment is %d bytes after Open, want %d (nothing cut)", got, len(seg))
			}
			l.Close()
		})
	}
	for n := 0; n <= 17; n++ {
		z := make([]byte, n)
		if !allZero(z) {
			t.Errorf("allZero(%d zeros) = false", n)
		}
		for i := range n {
			b := bytes.Clone(z)
			b[i] = 1
			if allZero(b) {
				t.Errorf("allZero(%d bytes, byte %d set) = true", n, i)
			}
		}
	}
}

// TestOnlyTheLastSegmentIsReserved: a segment is cut to its last record before the
// next one is created, and a clean Close cuts the active one; so zeros at the end of
// a segment that is not the last are damage (a crash cannot leave them).
func TestOnlyTheLastSegmentIsReserved(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 1024)
	fill(t, l, 40, 90)
	check := func(when string, wantSegments int) {
		t.Helper()
		names, _ := fsys.ReadDir(testDir)
		segs := 0
		for _, name := range names {
			if filepath.Ext(name) != segmentSuffix {
				continue
			}
			segs++
			b, _ := fsys.ReadFile(testDir + "/" + name)
			off := segmentHeaderBytes
			for off < len(b) {
				r, ok := decodeRecord(b, off)
				if !ok {
					break
				}
				off = r.end
			}
			lastSeg := testDir+"/"+name == lastSegment(t, fsys)
			if off != len(b) && (!lastSeg || !allZero(b[off:])) {
				t.Fatalf("%s: %s has %d bytes after its last record at %d", when, name, len(b)-off, off)
			}
		}
		if segs != wantSegments {
			t.Fatalf("%s: %d segments, want %d", when, segs, wantSegments)
		}
	}
	check("running", 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{segmentName(5)} {
		b, _ := fsys.ReadFile(testDir + "/" + name)
		if len(b) > 0 && b[len(b)-1] == 0 {
			t.Fatalf("after Close, %s still ends in reserved zeros", name)
		}
	}
	check("closed", 5)
	// Zeros appended to a segment that is not the last: refused.
	b, _ := fsys.ReadFile(segPath(2))
	rewrite(t, fsys, segPath(2), append(b, make([]byte, 100)...))
	if _, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("zeros after the last record of segment 2 of 5: Open = %v, want ErrCorrupt", err)
	}
}

// TestCleanCloseCutsDurably: a clean Close cuts the active segment to its last record
// (docs/wal.md, "Reserved space") and makes the cut durable: after a power loss the
// last segment still ends at its last record, with no reserved zeros behind it.
//
// Kills: impl/wal/log.go:Log.Close:sync-drop (the fdatasync after the cut).
func TestCleanCloseCutsDurably(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	fill(t, l, 3, 70)
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

// TestReserveIsBestEffort: where the file system cannot reserve space the log writes
// as before, and a reservation refused for a full disk does not fail the log (the
// write that really needs the space does).
func TestReserveIsBestEffort(t *testing.T) {
	fsys := walfs.NewFaultFS()
	fsys.SetAllocate(false)
	l := openEmpty(t, fsys, 0)
	fill(t, l, 10, 50)
	if got := fsys.Size(segPath(1)); got != segmentHeaderBytes+10*(recordHeaderBytes+50) {
		t.Fatalf("without reservation the segment is %d bytes, want exactly its records", got)
	}
	l.Close()

	fsys = walfs.NewFaultFS()
	fsys.SetCapacity(8 << 10) // far less than a reservation chunk
	l = openEmpty(t, fsys, 0)
	fill(t, l, 20, 100)
	if fsys.Ops(walfs.OpAllocate) == 0 {
		t.Fatal("the log never tried to reserve space")
	}
	for {
		lsn, err := l.Append(payload(99, 100))
		if err == nil {
			err = l.WaitDurable(t.Context(), lsn)
		}
		if err != nil {
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("disk full: %v, want ErrFailed", err)
			}
			break
		}
	}
	l.Close()
}

// TestReserveOnDisk: on the real file system the active segment is reserved ahead
// (its size runs ahead of its records) and a clean Close cuts it to its records.
func TestReserveOnDisk(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	replayAll(t, l)
	fill(t, l, 10, 50)
	path := filepath.Join(dir, segmentName(1))
	content := int64(segmentHeaderBytes + 10*(recordHeaderBytes+50))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.allocEnd == 0 {
		t.Logf("this file system cannot reserve space (no fallocate): segment is %d bytes", fi.Size())
		if fi.Size() != content {
			t.Fatalf("segment is %d bytes, want %d", fi.Size(), content)
		}
	} else if fi.Size() != allocChunkBytes+segmentHeaderBytes {
		t.Fatalf("segment is %d bytes while open, want the reservation %d", fi.Size(), allocChunkBytes+segmentHeaderBytes)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ = os.Stat(path); fi.Size() != content {
		t.Fatalf("after Close the segment is %d bytes, want its %d bytes of records", fi.Size(), content)
	}
}

// lastSegment returns the path of the newest segment file.
func lastSegment(t *testing.T, fsys walfs.FS) string {
	t.Helper()
	names, _ := fsys.ReadDir(testDir)
	last := ""
	for _, name := range names {
		if filepath.Ext(name) == segmentSuffix {
			last = testDir + "/" + name
		}
	}
	if last == "" {
		t.Fatal("no segment file")
	}
	return last
}
