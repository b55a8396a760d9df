package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// TestCorruptionRefused: a damaged byte anywhere a crash cannot explain stops Open
// with a *CorruptError that names the file and the offset.
func TestCorruptionRefused(t *testing.T) {
	cases := []struct {
		name   string
		damage func(fs *walfs.FaultFS, offs map[string][]int) (path string, off int64)
	}{
		{"payload byte of a middle record", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			o := offs[segmentName(3)][2]
			return segPath(3), int64(o + recordHeaderBytes + 5)
		}},
		{"length field", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			return segPath(3), int64(offs[segmentName(3)][1] + recLength + 2)
		}},
		{"header checksum", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			return segPath(3), int64(offs[segmentName(3)][0] + recHeaderCRC)
		}},
		{"lsn field", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			return segPath(3), int64(offs[segmentName(3)][1] + recLSN)
		}},
		{"last record of a full segment", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			o := offs[segmentName(1)]
			return segPath(1), int64(o[len(o)-1] + recordHeaderBytes)
		}},
		{"last record of the log, complete", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			o := offs[segmentName(4)]
			return segPath(4), int64(o[len(o)-1] + recordHeaderBytes + 3)
		}},
		{"length of the last record of the log", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			o := offs[segmentName(4)]
			return segPath(4), int64(o[len(o)-1] + recLength + 1)
		}},
		{"segment header", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			return segPath(2), 20
		}},
		{"segment magic of the last segment", func(fs *walfs.FaultFS, offs map[string][]int) (string, int64) {
			return segPath(4), 0
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys, offs := buildLog(t, 30, 90)
			if len(offs) != 4 {
				t.Fatalf("want 4 segments, got %d", len(offs))
			}
			path, off := tc.damage(fsys, offs)
			if err := fsys.Corrupt(path, off, 0x10); err != nil {
				t.Fatal(err)
			}
			_, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
			var ce *CorruptError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("Open: %v, want a *CorruptError", err)
			}
			if ce.Path != path || !strings.HasPrefix(err.Error(), "soundgate/wal: corrupt log: "+path) {
				t.Fatalf("error %q does not name %s", err, path)
			}
			if ce.Offset < 0 || ce.Offset > off {
				t.Fatalf("error names offset %d, damage at %d", ce.Offset, off)
			}
			// Refusing changes nothing: a second Open refuses the same way.
			if _, err2 := Open(testDir, Options{FS: fsys, SegmentBytes: 1024}); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("second Open: %v, first %v", err2, err)
			}
			t.Log(err)
		})
	}
}

// TestStructuralCorruption: missing segments and bad snapshots are refused.
func TestStructuralCorruption(t *testing.T) {
	t.Run("missing middle segment", func(t *testing.T) {
		fsys, _ := buildLog(t, 30, 90)
		if err := fsys.Remove(segPath(2)); err != nil {
			t.Fatal(err)
		}
		_, err := Open(testDir, Options{FS: fsys})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "segment 2 is missing") {
			t.Fatalf("Open: %v", err)
		}
	})
	t.Run("bad snapshot", func(t *testing.T) {
		fsys, _ := buildLog(t, 30, 90)
		snapshotAt(t, fsys, 1024, 20, []byte("state"))
		p := testDir + "/" + snapshotName(20)
		if err := fsys.Corrupt(p, snapshotHeaderBytes+1, 1); err != nil {
			t.Fatal(err)
		}
		_, err := Open(testDir, Options{FS: fsys})
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Path != p {
			t.Fatalf("Open: %v, want a *CorruptError naming %s", err, p)
		}
	})
	t.Run("first segment after the snapshot removed", func(t *testing.T) {
		fsys, _ := buildLog(t, 30, 90)
		snapshotAt(t, fsys, 1024, 12, []byte("state"))
		names, _ := fsys.ReadDir(testDir)
		for _, n := range names {
			if strings.HasSuffix(n, segmentSuffix) {
				fsys.Remove(testDir + "/" + n) // the oldest remaining segment
				break
			}
		}
		if _, err := Open(testDir, Options{FS: fsys}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Open: %v, want ErrCorrupt (records after the snapshot are gone)", err)
		}
	})
}

// TestOpenRefusals: every damage docs/wal.md ("Recovering") says Open refuses, in a
// directory built by hand, gives a *CorruptError with exactly the file, the offset
// (-1: the file as a whole) and the reason, and changes nothing on disk: not even a
// leftover .tmp file, which a successful Open removes, is touched.
//
// Kills: the impl/wal/open.go constant mutants of every Offset (in recoverDir,
// loadSnapshot, recovered.scanSegments, checkSegmentStart, recovered.scanRecords);
// recovered.scanSegments:boundary 9243717c (a complete 32-byte header of the last
// segment that does not verify is corrupt, not a header cut short);
// checkSegmentStart:constant 108239cb (a first record one past the snapshot's
// successor); recovered.scanSegments:negate-cond 333467f3 and constant 50b7b45b
// (first LSN 0); checkSegmentStart:boolean 4007dd0e (the second segment's first
// record not checked); recovered.scanRecords:boolean 35b09eba, negate-cond d329e771
// and remove-stmt f5ebbf6d (an intact record with the wrong LSN);
// recovered.scanRecords:boolean d26a6297 and remove-stmt d243ab06 (the reason of a
// bad record in a segment that is not the last); recoverDir:constant 1eb7c595 (a
// snapshot at LSN 1 without segments); recoverDir:arith 48180a13 and constant
// 58b7b689 (the segment named when the log ends before its snapshot);
// parseNumber:constant f79d7cc5 (a short name taken for segment 0).
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
			l := openEmpty(t, fsys, 0)
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

// TestForeignFilesIgnored: a file that is neither a segment (*.wal), a snapshot
// (snap-*.snap) nor a leftover (*.tmp) is no part of the log: Open neither refuses
// nor removes it.
//
// Kills: impl/wal/open.go:sortNames:boolean 18656322 (a name with only the snapshot
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

// TestTornTail: cutting the log anywhere inside its last record, or zero-filling it,
// is a torn tail: Open truncates it and keeps every record before it. Where the
// file system can reserve space, Open reserves it again after the cut: the torn bytes
// must be gone (zeros), the size is the reservation's.
func TestTornTail(t *testing.T) {
	fsys0, offs := buildLog(t, 30, 90)
	last := offs[segmentName(4)]
	lastOff := last[len(last)-1]
	b, _ := fsys0.ReadFile(segPath(4))
	full := len(b)
	for cut := lastOff + 1; cut < full; cut++ {
		for _, fill := range []string{"cut", "zero-filled", "cut, no reservation"} {
			fsys, _ := buildLog(t, 30, 90)
			alloc := fill != "cut, no reservation"
			fsys.SetAllocate(alloc)
			seg, _ := fsys.ReadFile(segPath(4))
			seg = seg[:cut]
			if fill == "zero-filled" {
				seg = append(seg, make([]byte, full-cut+100)...)
			}
			rewrite(t, fsys, segPath(4), seg)
			l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
			if err != nil {
				t.Fatalf("%s at %d: Open: %v", fill, cut, err)
			}
			r := replayAll(t, l)
			if len(r.lsns) != 29 {
				t.Fatalf("%s at %d: recovered %d records, want 29", fill, cut, len(r.lsns))
			}
			if st := l.Stats(); st.TornBytes == 0 {
				t.Fatalf("%s at %d: Stats.TornBytes = 0, want the torn tail's size", fill, cut)
			}
			after, _ := fsys.ReadFile(segPath(4))
			switch {
			case !alloc && len(after) != lastOff:
				t.Fatalf("%s at %d: segment is %d bytes after repair, want %d", fill, cut, len(after), lastOff)
			case alloc && (len(after) < lastOff || !allZero(after[lastOff:])):
				t.Fatalf("%s at %d: after repair the segment (%d bytes) keeps bytes of the torn record past %d", fill, cut, len(after), lastOff)
			}
			if lsn := appendWait(t, l, []byte("next")); lsn != 30 {
				t.Fatalf("next lsn %d, want 30", lsn)
			}
			l.Close()
		}
	}
}

// TestTornTailRepair: a torn tail at various places of the last segment (inside a
// record's header, inside its payload, a whole record's worth of zero-filled bytes
// after a cut) is cut at the start of that record; Stats.TornBytes is the number of
// bytes cut; the records before it replay; the repair closes its file handle.
//
// Kills: impl/wal/open.go:recovered.scanRecords:arith 512d3c65 (TornBytes),
// repair:remove-stmt 30ec2269 (the handle of the truncated file not closed).
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

// TestTornSegmentHeader: a crash right after a new segment was created leaves it
// without a complete header; recovery removes it.
func TestTornSegmentHeader(t *testing.T) {
	for cut := 0; cut < segmentHeaderBytes; cut++ {
		fsys, _ := buildLog(t, 30, 90)
		hdr := encodeSegmentHeader(segmentHeader{segment: 5, firstLSN: 31})
		f, err := fsys.Create(segPath(5))
		if err != nil {
			t.Fatal(err)
		}
		f.Write(hdr[:cut])
		f.Close()
		l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if r := replayAll(t, l); len(r.lsns) != 30 {
			t.Fatalf("cut %d: %d records", cut, len(r.lsns))
		}
		appendWait(t, l, []byte("next"))
		l.Close()
	}
}

// TestRepairIsDurable: what Open's repair removes (a leftover .tmp, a snapshot older
// than the newest, a segment the snapshot covers, a last segment whose header was
// cut short) stays removed after a power loss right after Open: repair syncs the
// directory (docs/wal.md, Recovering, step 5). The replay and Stats.TornBytes are
// checked too.
//
// Kills: impl/wal/open.go:sortNames:slice-write 138d157a (.tmp kept);
// recoverDir:slice-write b097b322 (older snapshot kept); recoverDir:constant fc4a681c
// and boundary fa0a5cba (a covered first segment of two, whose successor starts
// right after the snapshot, kept); recovered.scanSegments:remove-stmt fd9153fe
// (TornBytes of a removed header); repair:remove-stmt 3447fe9b and 3447fe9b~2,
// constant e89918e6 and negate-cond bdc8a288 (no directory sync).
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

// TestOpenSyncsTheRecoveredTail: records that a previous life wrote but could not
// fdatasync (a kill -9, or here a failed fdatasync, leaves them in the page cache)
// are read by recovery and replayed: the gate answers from them. Open makes them
// durable before it returns (docs/wal.md, "Recovering", step 6), so a power loss
// afterwards loses none of what Replay delivered.
//
// Kills: impl/wal/log.go:open:sync-drop (the fdatasync of the recovered active segment).
func TestOpenSyncsTheRecoveredTail(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	fill(t, l, 3, 50)
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
