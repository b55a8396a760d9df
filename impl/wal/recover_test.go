package wal

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// buildLog writes n acknowledged records of size bytes with 1 KiB segments, closes
// the log, and returns the file system and the offsets of every record per segment.
func buildLog(t *testing.T, n, size int) (*walfs.FaultFS, map[string][]int) {
	t.Helper()
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 1024)
	replayAll(t, l)
	for i := 1; i <= n; i++ {
		appendWait(t, l, payload(LSN(i), size))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	offsets := map[string][]int{}
	names, _ := fsys.ReadDir(testDir)
	for _, name := range names {
		b, _ := fsys.ReadFile(testDir + "/" + name)
		for off := segmentHeaderBytes; off < len(b); {
			r, ok := decodeRecord(b, off)
			if !ok {
				t.Fatalf("%s: bad record at %d in a clean log", name, off)
			}
			offsets[name] = append(offsets[name], off)
			off = r.end
		}
	}
	return fsys, offsets
}

func segPath(n uint64) string { return testDir + "/" + segmentName(n) }

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
		l := mustOpen(t, fsys, 1024)
		replayAll(t, l)
		if err := l.Snapshot(20, []byte("state")); err != nil {
			t.Fatal(err)
		}
		l.Close()
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
		l := mustOpen(t, fsys, 1024)
		replayAll(t, l)
		if err := l.Snapshot(12, []byte("state")); err != nil {
			t.Fatal(err)
		}
		l.Close()
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

func rewrite(t *testing.T, fsys *walfs.FaultFS, path string, content []byte) {
	t.Helper()
	if err := fsys.Remove(path); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fsys.SyncDir(testDir)
}

// TestClassifyDamage: the rule that tells a torn tail from corruption, case by case.
func TestClassifyDamage(t *testing.T) {
	var seg []byte
	var offs []int
	for i := 1; i <= 3; i++ {
		offs = append(offs, len(seg))
		seg = appendRecord(seg, LSN(i), payload(LSN(i), 40))
	}
	flip := func(b []byte, at int) []byte { c := append([]byte(nil), b...); c[at] ^= 0x01; return c }
	zeroFrom := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		for i := at; i < len(c); i++ {
			c[i] = 0
		}
		return c
	}
	zeroMid := func(b []byte, from, to int) []byte {
		c := append([]byte(nil), b...)
		clear(c[from:to])
		return c
	}
	wrongLSN := append(append([]byte(nil), seg[:offs[2]]...), appendRecord(nil, 9, payload(9, 40))...)
	cases := []struct {
		name string
		seg  []byte
		off  int
		lsn  LSN
		want Damage
	}{
		{"file ends inside the header", seg[:offs[2]+7], offs[2], 3, Torn},
		{"file ends inside the payload", seg[:offs[2]+recordHeaderBytes+3], offs[2], 3, Torn},
		{"payload zero-filled to the end", zeroFrom(seg, offs[2]+recordHeaderBytes+10), offs[2], 3, Torn},
		{"header zero-filled to the end", zeroFrom(seg, offs[2]+9), offs[2], 3, Torn},
		{"zeros after the last record", append(append([]byte(nil), seg...), make([]byte, 64)...), len(seg), 4, Torn},
		{"flipped payload bit in the last record", flip(seg, offs[2]+recordHeaderBytes+1), offs[2], 3, Corrupt},
		{"flipped length bit in the last record", flip(seg, offs[2]+recLength), offs[2], 3, Corrupt},
		{"flipped bit in a middle record", flip(seg, offs[1]+recordHeaderBytes+1), offs[1], 2, Corrupt},
		{"flipped length in a middle record", flip(seg, offs[1]+recLength), offs[1], 2, Corrupt},
		{"last record zero-filled after 4 bytes", zeroFrom(seg[:offs[2]], offs[1]+4), offs[1], 2, Torn},
		{"zeroed middle record, intact one after", zeroMid(seg, offs[1], offs[2]), offs[1], 2, Corrupt},
		{"intact record with the wrong lsn", wrongLSN, offs[2], 3, Corrupt},
		{"garbage after the last record", append(append([]byte(nil), seg...), 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), len(seg), 4, Corrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassifyDamage(tc.seg, tc.off, tc.lsn); got != tc.want {
				t.Fatalf("ClassifyDamage = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSegmentHeaderRoundTrip guards the header codec.
func TestSegmentHeaderRoundTrip(t *testing.T) {
	h := segmentHeader{segment: 7, firstLSN: 12345}
	b := encodeSegmentHeader(h)
	got, err := decodeSegmentHeader(b)
	if err != nil || got != h {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	binary.LittleEndian.PutUint64(b[24:], 1)
	if _, err := decodeSegmentHeader(b); err == nil {
		t.Fatal("a changed first LSN passed the header checksum")
	}
}
