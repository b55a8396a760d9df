package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Tests written from the survivors of the clean full mutation run of impl/wal
// (docs/verify/mutation.md, "Survivors of the clean impl/wal run"): what Open refuses
// and the exact *CorruptError it returns, what its repair removes, cuts and makes
// durable, and what writeBatch counts, checks and reserves.

// recPayloadBytes is the payload size of the records of the hand-built directories,
// so that record k (counting from 0) of a segment starts at recOff(k).
const recPayloadBytes = 40

func recOff(k int) int64 {
	return int64(segmentHeaderBytes + k*(recordHeaderBytes+recPayloadBytes))
}

// segFile lays out a segment file by hand: a header naming segment num and first,
// then one record of recPayloadBytes for each LSN in lsns, in that order.
func segFile(num uint64, first LSN, lsns ...LSN) []byte {
	b := encodeSegmentHeader(segmentHeader{segment: num, firstLSN: first})
	for _, lsn := range lsns {
		b = appendRecord(b, lsn, payload(lsn, recPayloadBytes))
	}
	return b
}

// flip returns a copy of b with the bits of mask flipped in the byte at off.
func flip(b []byte, off int64, mask byte) []byte {
	c := bytes.Clone(b)
	c[off] ^= mask
	return c
}

// putFiles writes the files (base name -> content) into testDir on fsys and makes
// them and their directory entries durable.
func putFiles(t *testing.T, fsys walfs.FS, files map[string][]byte) {
	t.Helper()
	if err := fsys.MkdirAll(testDir); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		f, err := fsys.Create(walfs.Join(testDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 {
			if _, err := f.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
}

// dirContent returns every file of testDir with its content.
func dirContent(t *testing.T, fsys walfs.FS) map[string]string {
	t.Helper()
	names, err := fsys.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := fsys.ReadFile(walfs.Join(testDir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func dirNames(t *testing.T, fsys walfs.FS) string {
	t.Helper()
	n, err := fsys.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(n, " ")
}

// TestOpenRefusals: every damage docs/wal.md ("Recovering") says Open refuses, in a
// directory built by hand, gives a *CorruptError with exactly the file, the offset
// (-1: the file as a whole) and the reason, and changes nothing on disk: not even a
// leftover .tmp file, which a successful Open removes, is touched.
//
// Kills: the impl/wal/open.go:recoverDir:constant mutants of every Offset; boundary
// 9201b615 (a complete 32-byte header of the last segment that does not verify is
// corrupt, not a header cut short); constant b1fa8339 (a first record one past the
// snapshot's successor); negate-cond 43242664 and constant 32a0d620 (first LSN 0);
// constant 71347735 (the second segment's first record not checked); boolean
// 07ad28be, negate-cond 64926d81 and remove-stmt 458cc83c (an intact record with the
// wrong LSN); boolean 1bb270ae and remove-stmt fe274101 (the reason of a bad record
// in a segment that is not the last); constant 1eb7c595 (a snapshot at LSN 1 without
// segments); arith 48180a13 and constant 58b7b689 (the segment named when the log
// ends before its snapshot); parseNumber:constant f79d7cc5 (a short name taken for
// segment 0).
func TestOpenRefusals(t *testing.T) {
	seg := func(n uint64) string { return segmentName(n) }
	snap := func(l LSN) string { return snapshotName(l) }
	state := []byte("state")
	cases := []struct {
		name   string
		files  map[string][]byte
		path   string // base name of the file the error names
		offset int64
		reason string
	}{
		{"segment name not 20 digits", map[string][]byte{"7.wal": segFile(1, 1, 1)},
			"7.wal", -1, "segment file name is not a 20-digit number"},
		{"segment name of 21 digits", map[string][]byte{"0" + seg(1): segFile(1, 1, 1)},
			"0" + seg(1), -1, "segment file name is not a 20-digit number"},
		{"snapshot name not 20 digits", map[string][]byte{"snap-1.snap": encodeSnapshot(1, state), seg(1): segFile(1, 1, 1)},
			"snap-1.snap", -1, "snapshot file name is not a 20-digit number"},
		{"missing segment", map[string][]byte{seg(1): segFile(1, 1, 1, 2), seg(3): segFile(3, 3, 3)},
			seg(3), -1, "segment 2 is missing"},
		{"snapshot does not verify", map[string][]byte{snap(2): flip(encodeSnapshot(2, state), snapshotHeaderBytes+1, 1), seg(1): segFile(1, 1, 1, 2, 3)},
			snap(2), 0, "checksum mismatch"},
		{"snapshot holds another lsn than its name", map[string][]byte{snap(2): encodeSnapshot(3, state), seg(1): segFile(1, 1, 1, 2, 3)},
			snap(2), 16, "snapshot holds lsn 3, its name says 2"},
		{"header names another segment", map[string][]byte{seg(1): segFile(1, 1, 1, 2), seg(2): segFile(3, 3, 3)},
			seg(2), 16, "header names segment 3"},
		{"gap after the start of the log", map[string][]byte{seg(1): segFile(1, 2, 2)},
			seg(1), 24, "first record 2 leaves a gap after the snapshot at 0"},
		{"gap after the snapshot", map[string][]byte{snap(3): encodeSnapshot(3, state), seg(1): segFile(1, 5, 5)},
			seg(1), 24, "first record 5 leaves a gap after the snapshot at 3"},
		{"first lsn 0", map[string][]byte{seg(1): segFile(1, 0)},
			seg(1), 24, "first lsn is 0"},
		{"second segment does not follow", map[string][]byte{seg(1): segFile(1, 1, 1, 2), seg(2): segFile(2, 4, 4)},
			seg(2), 24, "first record 4 does not follow 2"},
		{"bad record in a segment that is not the last", map[string][]byte{
			seg(1): flip(segFile(1, 1, 1, 2, 3), recOff(1)+recordHeaderBytes+3, 0x10), seg(2): segFile(2, 4, 4)},
			seg(1), recOff(1), "record does not verify in a segment that is not the last"},
		{"complete bad record in the last segment", map[string][]byte{
			seg(1): flip(segFile(1, 1, 1, 2, 3), recOff(1)+recordHeaderBytes+3, 0x10)},
			seg(1), recOff(1), "record does not verify and is not a torn tail (it is complete, or intact records follow it)"},
		{"record with the wrong lsn, last segment", map[string][]byte{seg(1): segFile(1, 1, 1, 3)},
			seg(1), recOff(1), "record carries lsn 3, want 2"},
		{"record with the wrong lsn, not the last segment", map[string][]byte{seg(1): segFile(1, 1, 1, 3), seg(2): segFile(2, 3, 3)},
			seg(1), recOff(1), "record carries lsn 3, want 2"},
		{"snapshot without any segment", map[string][]byte{snap(4): encodeSnapshot(4, state)},
			snap(4), -1, "snapshot without any segment"},
		{"snapshot at lsn 1 without any segment", map[string][]byte{snap(1): encodeSnapshot(1, state)},
			snap(1), -1, "snapshot without any segment"},
		{"log ends before its snapshot", map[string][]byte{snap(5): encodeSnapshot(5, state), seg(1): segFile(1, 1, 1, 2, 3)},
			seg(1), -1, "log ends at lsn 3, before its snapshot at 5"},
		{"log of two segments ends before its snapshot", map[string][]byte{snap(5): encodeSnapshot(5, state), seg(1): segFile(1, 1, 1, 2), seg(2): segFile(2, 3, 3)},
			seg(2), -1, "log ends at lsn 3, before its snapshot at 5"},
		{"complete header of the last segment does not verify", map[string][]byte{seg(1): segFile(1, 1, 1, 2), seg(2): flip(segFile(2, 3), 12, 1)},
			seg(2), 0, "header checksum mismatch"},
		{"header cut short in a segment that is not the last", map[string][]byte{seg(1): segFile(1, 1)[:20], seg(2): segFile(2, 1, 1)},
			seg(1), 0, "header is 20 bytes, want 32"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			tc.files["leftover.tmp"] = []byte("half a snapshot")
			putFiles(t, fsys, tc.files)
			before := dirContent(t, fsys)
			l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
			if err == nil {
				l.Close()
				t.Fatalf("Open succeeded, want a refusal: %s", tc.reason)
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v, want a *CorruptError", err)
			}
			want := CorruptError{Path: walfs.Join(testDir, tc.path), Offset: tc.offset, Reason: tc.reason}
			if *ce != want {
				t.Fatalf("Open refused with %+v, want %+v", *ce, want)
			}
			if after := dirContent(t, fsys); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("a refusing Open changed the directory:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// TestForeignFilesIgnored: a file that is neither a segment (*.wal), a snapshot
// (snap-*.snap) nor a leftover (*.tmp) is no part of the log: Open neither refuses
// nor removes it.
//
// Kills: impl/wal/open.go:recoverDir:boolean b2a743b2 (a name with only the snapshot
// prefix or only its suffix taken for a snapshot).
func TestForeignFilesIgnored(t *testing.T) {
	fsys := walfs.NewFaultFS()
	putFiles(t, fsys, map[string][]byte{
		segmentName(1):   segFile(1, 1, 1, 2),
		"notes.snap":     []byte("x"),
		"snap-notes.txt": []byte("y"),
	})
	l := mustOpen(t, fsys, 1024)
	if r := replayAll(t, l); fmt.Sprint(r.lsns) != "[1 2]" {
		t.Fatalf("replayed %v, want [1 2]", r.lsns)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := dirNames(t, fsys), segmentName(1)+" notes.snap snap-notes.txt"; got != want {
		t.Fatalf("directory holds %q, want %q", got, want)
	}
}

// TestRepairIsDurable: what Open's repair removes (a leftover .tmp, a snapshot older
// than the newest, a segment the snapshot covers, a last segment whose header was
// cut short) stays removed after a power loss right after Open: repair syncs the
// directory (docs/wal.md, Recovering, step 5). The replay and Stats.TornBytes are
// checked too.
//
// Kills: impl/wal/open.go:recoverDir:slice-write 1b401e1d (.tmp kept) and b097b322
// (older snapshot kept); constant fc4a681c and boundary fa0a5cba (a covered first
// segment of two, whose successor starts right after the snapshot, kept);
// remove-stmt 8e48ee57 (TornBytes of a removed header); repair:remove-stmt 3447fe9b
// and 3447fe9b~2, constant e89918e6 and negate-cond bdc8a288 (no directory sync).
func TestRepairIsDurable(t *testing.T) {
	state := []byte("state")
	cases := []struct {
		name    string
		files   map[string][]byte
		left    string // the directory after Open and a power loss
		replay  string // LSNs replayed
		snapLSN LSN
		torn    int64
	}{
		{"leftover tmp", map[string][]byte{segmentName(1): segFile(1, 1, 1, 2), "snap-00000000000000000002.snap.tmp": []byte("half")},
			segmentName(1), "[1 2]", 0, 0},
		{"older snapshot", map[string][]byte{snapshotName(1): encodeSnapshot(1, state), snapshotName(2): encodeSnapshot(2, state), segmentName(1): segFile(1, 1, 1, 2, 3)},
			segmentName(1) + " " + snapshotName(2), "[3]", 2, 0},
		{"segment the snapshot covers", map[string][]byte{snapshotName(3): encodeSnapshot(3, state), segmentName(1): segFile(1, 1, 1, 2, 3), segmentName(2): segFile(2, 4, 4, 5)},
			segmentName(2) + " " + snapshotName(3), "[4 5]", 3, 0},
		{"last segment's header cut short", map[string][]byte{segmentName(1): segFile(1, 1, 1, 2), segmentName(2): segFile(2, 3)[:10]},
			segmentName(1), "[1 2]", 0, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			putFiles(t, fsys, tc.files)
			l := mustOpen(t, fsys, 1024)
			if got := l.Stats().TornBytes; got != tc.torn {
				t.Errorf("Stats.TornBytes = %d, want %d", got, tc.torn)
			}
			r := replayAll(t, l)
			if fmt.Sprint(r.lsns) != tc.replay || r.snapLSN != tc.snapLSN {
				t.Errorf("replayed snapshot %d and %v, want %d and %s", r.snapLSN, r.lsns, tc.snapLSN, tc.replay)
			}
			fsys.Crash(nil) // keeps exactly what was made durable
			l.Close()
			fsys.Restart()
			if got := dirNames(t, fsys); got != tc.left {
				t.Fatalf("after Open and a power loss the directory holds %q, want %q", got, tc.left)
			}
		})
	}
}

// TestRepairRemoveFails: a leftover that cannot be removed stops Open with the cause
// (a repair is not skipped silently); one that is already gone is no failure.
//
// Kills: impl/wal/open.go:repair:boolean 893ea85b.
func TestRepairRemoveFails(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		fails bool
	}{
		{"removal fails", walfs.ErrInjected, true},
		{"already gone", fs.ErrNotExist, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			putFiles(t, fsys, map[string][]byte{segmentName(1): segFile(1, 1, 1), "x.tmp": nil})
			fsys.Inject(walfs.Fault{Op: walfs.OpRemove, Path: tmpSuffix, Err: tc.cause})
			l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
			if !tc.fails {
				if err != nil {
					t.Fatalf("Open: %v, want success", err)
				}
				l.Close()
				return
			}
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded although a leftover could not be removed")
			}
			if !errors.Is(err, tc.cause) || !strings.Contains(err.Error(), "remove leftover x.tmp") {
				t.Fatalf("Open: %v, want the removal's failure", err)
			}
		})
	}
}

// TestTornTailRepair: a torn tail at various places of the last segment (inside a
// record's header, inside its payload, a whole record's worth of zero-filled bytes
// after a cut) is cut at the start of that record; Stats.TornBytes is the number of
// bytes cut; the records before it replay; the repair closes its file handle.
//
// Kills: impl/wal/open.go:recoverDir:arith 51f5abb0 (TornBytes), repair:remove-stmt
// 30ec2269 (the handle of the truncated file not closed).
func TestTornTailRepair(t *testing.T) {
	full := segFile(1, 1, 1, 2, 3)
	cases := []struct {
		name string
		seg  []byte
	}{
		{"cut inside the last record's header", full[:recOff(2)+7]},
		{"cut inside the last record's payload", full[:recOff(2)+recordHeaderBytes+5]},
		{"payload zero-filled", append(bytes.Clone(full[:recOff(2)+recordHeaderBytes+5]), make([]byte, 100)...)},
		{"header zero-filled after a cut", append(bytes.Clone(full[:recOff(2)+3]), make([]byte, 57)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandleFS()
			h.SetAllocate(false) // the size after Open is the cut's
			putFiles(t, h, map[string][]byte{segmentName(1): tc.seg})
			l := mustOpen(t, h, 1024)
			if got, want := l.Stats().TornBytes, int64(len(tc.seg))-recOff(2); got != want {
				t.Errorf("Stats.TornBytes = %d, want %d", got, want)
			}
			if r := replayAll(t, l); fmt.Sprint(r.lsns) != "[1 2]" {
				t.Errorf("replayed %v, want [1 2]", r.lsns)
			}
			if got := h.Size(segPath(1)); got != recOff(2) {
				t.Errorf("segment is %d bytes after Open, want the cut at %d", got, recOff(2))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if open, twice := h.leaks(); len(open) > 0 || len(twice) > 0 {
				t.Fatalf("handles left open: %v; closed twice: %v", open, twice)
			}
		})
	}
}

// TestTornTailCutIsDurable: repair fdatasyncs the segment it truncated (docs/wal.md:
// "truncate the segment there and fdatasync"), so the cut survives a power loss even
// when Open fails right after the repair (here: the active segment cannot be opened).
//
// Kills: impl/wal/open.go:repair:sync-drop 29c95687.
func TestTornTailCutIsDurable(t *testing.T) {
	fsys := walfs.NewFaultFS()
	full := segFile(1, 1, 1, 2, 3)
	putFiles(t, fsys, map[string][]byte{segmentName(1): full[:len(full)-5]})
	fsys.Inject(walfs.Fault{Op: walfs.OpOpenAppend, Skip: 1}) // the repair's open succeeds, Open's fails
	if l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024}); err == nil {
		l.Close()
		t.Fatal("Open succeeded despite the injected failure")
	}
	fsys.Crash(nil)
	fsys.Restart()
	if got := fsys.Size(segPath(1)); got != recOff(2) {
		t.Fatalf("after a power loss the segment is %d bytes, want the cut at %d made durable", got, recOff(2))
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

// shortWriteFile writes records to a segment one byte short and reports no error
// (WriteAt): a file system that breaks File's contract.
type shortWriteFile struct{ walfs.File }

func (f shortWriteFile) WriteAt(p []byte, off int64) (int, error) {
	if off >= segmentHeaderBytes && len(p) > 0 {
		return f.File.WriteAt(p[:len(p)-1], off)
	}
	return f.File.WriteAt(p, off)
}

// TestShortWriteFails: a write that stores fewer bytes than asked without an error
// fails the log (ErrFailed, naming the short write) instead of acknowledging a record
// that is not on disk.
//
// Kills: impl/wal/log.go:Log.writeBatch:remove-stmt 9be77926.
func TestShortWriteFails(t *testing.T) {
	fsys := &wrapFS{FaultFS: walfs.NewFaultFS(), wrap: func(_ string, f walfs.File) walfs.File { return shortWriteFile{f} }}
	l := mustOpen(t, fsys, 1024)
	defer l.Close()
	replayAll(t, l)
	lsn, err := l.Append(payload(1, 50))
	if err != nil {
		t.Fatal(err)
	}
	err = l.WaitDurable(context.Background(), lsn)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "short write: 69 of 70 bytes") {
		t.Fatalf("WaitDurable = %v, want ErrFailed for a short write", err)
	}
	if d := l.Durable(); d != 0 {
		t.Fatalf("Durable = %d after a short write, want 0", d)
	}
}

// TestStatsBytes: Stats.Bytes grows by exactly the bytes of the records written
// (header and payload of each).
//
// Kills: impl/wal/log.go:Log.writeBatch:remove-stmt 9b715ea5 and arith e3e1cfd4.
func TestStatsBytes(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 1<<20)
	defer l.Close()
	replayAll(t, l)
	var want uint64
	for i, size := range []int{0, 1, 100, 5000} {
		appendWait(t, l, payload(LSN(i+1), size))
		want += uint64(recordHeaderBytes + size)
		if got := l.Stats().Bytes; got != want {
			t.Fatalf("after record %d Stats.Bytes = %d, want %d", i+1, got, want)
		}
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

// TestAppendWaitsForTheWriter: an Append over the pending bound while another
// goroutine writes a batch waits for that write (back-pressure) and returns once it
// is done; it does not hold the log's lock while it waits.
//
// Kills: impl/wal/log.go:Log.Append:wait-drop 8429e4d7 (it spins holding the lock,
// and the writer can never finish).
func TestAppendWaitsForTheWriter(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 1<<20) // not closed on failure: Close would block on a lock held forever
	replayAll(t, l)
	l.mu.Lock()
	l.pendingMax = 300
	l.mu.Unlock()
	reached, release := holdFirstWrite(h)
	defer release()
	first, err := l.Append(payload(1, 100))
	if err != nil {
		t.Fatal(err)
	}
	led := make(chan error, 1)
	go func() { led <- l.WaitDurable(context.Background(), first) }()
	<-reached // the leader holds the batch of record 1 inside its write
	if _, err := l.Append(payload(2, 200)); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() {
		_, err := l.Append(payload(3, 200)) // 220 + 220 bytes pending: over the bound
		appended <- err
	}()
	select {
	case err := <-appended:
		t.Fatalf("Append over the bound returned (%v) while the writer held its batch", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	for _, ch := range []chan error{led, appended} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second): // under the mutation run's per-mutant timeout (about 15 s)
			t.Fatal("the writer or the waiting Append did not finish after the write was let go")
		}
	}
	if err := l.WaitDurable(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
