package wal

// Tests written from the mutation score of the log (docs/verify/mutation.md, `make
// mutation-wal`): each one checks a behaviour that the log's documentation or
// docs/wal.md requires and that no other test pinned down, and names the surviving
// mutants it kills. A mutant id is stable (file:Func:operator:hash); `go run
// ./cmd/mutate -only ID -test ./impl/wal/ ./impl/wal/` re-runs one.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"testing"
)

// TestFailedErrorMessage: the message of a *FailedError names the operation, the file
// and the cause, and names the file once when the cause is a *fs.PathError about the
// same file. A cause that is not a *fs.PathError (a short write) is printed as it is.
//
// Kills: impl/wal/errors.go:FailedError.Error:boolean (&& made ||: a nil *PathError
// dereferenced for a plain cause).
func TestFailedErrorMessage(t *testing.T) {
	plain := errors.New("short write: 3 of 9 bytes")
	cases := []struct {
		name string
		err  *FailedError
		want string
	}{
		{"plain cause", &FailedError{Op: "write", Path: "/wal/1.wal", Err: plain},
			"soundgate/wal: log failed: write /wal/1.wal: short write: 3 of 9 bytes"},
		{"path error about the same file", &FailedError{Op: "fdatasync", Path: "/wal/1.wal",
			Err: &fs.PathError{Op: "sync", Path: "/wal/1.wal", Err: errors.New("eio")}},
			"soundgate/wal: log failed: fdatasync /wal/1.wal: eio"},
		{"path error about another file", &FailedError{Op: "sync dir", Path: "/wal",
			Err: &fs.PathError{Op: "sync", Path: "/other", Err: errors.New("eio")}},
			"soundgate/wal: log failed: sync dir /wal: sync /other: eio"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDamageString: the verdicts print as docs/wal.md names them.
//
// Kills: impl/wal/format.go:Damage.String:early-return.
func TestDamageString(t *testing.T) {
	for d, want := range map[Damage]string{Torn: "torn", Corrupt: "corrupt", 0: "damage(0)", 7: "damage(7)"} {
		if got := d.String(); got != want {
			t.Errorf("Damage(%d).String() = %q, want %q", int(d), got, want)
		}
	}
}

// TestDecodeRecordBounds: decodeRecord refuses what its documentation says it refuses
// even when both checksums match (LSN 0, a length over RecordBytesMax), and accepts a
// record of exactly RecordBytesMax bytes, the largest Append takes.
//
// Kills: impl/wal/format.go:decodeRecord boolean mutants (the LSN 0 and the length
// checks joined with &&) and the boundary mutant n >= RecordBytesMax.
func TestDecodeRecordBounds(t *testing.T) {
	cases := []struct {
		name string
		lsn  LSN
		size int
		ok   bool
	}{
		{"lsn 0", 0, 10, false},
		{"largest payload", 7, RecordBytesMax, true},
		{"payload over the limit", 7, RecordBytesMax + 1, false},
		{"empty payload", 7, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seg := appendRecord(make([]byte, segmentHeaderBytes), tc.lsn, payload(tc.lsn, tc.size))
			r, ok := decodeRecord(seg, segmentHeaderBytes)
			if ok != tc.ok {
				t.Fatalf("decodeRecord ok = %v, want %v", ok, tc.ok)
			}
			if ok && (r.lsn != tc.lsn || len(r.payload) != tc.size || r.end != len(seg)) {
				t.Fatalf("decodeRecord = lsn %d, %d bytes, end %d; want lsn %d, %d bytes, end %d",
					r.lsn, len(r.payload), r.end, tc.lsn, tc.size, len(seg))
			}
		})
	}
}

// TestClassifyDamageEdges: the rule of ClassifyDamage at the edges of its input. The
// offset may be anywhere from 0 (a bare run of records) to len(seg) (the damaged
// record has no byte in the file: torn); outside that range the verdict is Corrupt,
// and an intact record that starts before the damage does not "follow" it.
//
// Kills: impl/wal/format.go:ClassifyDamage boundary, negate-cond and boolean mutants of
// the offset guard (off <= 0, off < 1, off >= len(seg), && for ||), the loop start
// off - 1 and off + 2, the zero scan zeroFrom >= off (reads seg[-1]), the torn-header
// checks len(seg)-off <= recordHeaderBytes, zeroFrom <= off+recordHeaderBytes and || for
// &&, the header checks got != lsn && n > RecordBytesMax and n >= RecordBytesMax, the
// payload check zeroFrom <= end, the loop bound pos+recordHeaderBytes < len(seg), and impl/wal/format.go:headerOK boundary mutant off < 1.
func TestClassifyDamageEdges(t *testing.T) {
	rec1 := appendRecord(nil, 1, payload(1, 40))
	flipAt := func(b []byte, at int) []byte { c := append([]byte(nil), b...); c[at] ^= 0x01; return c }
	// badHeader is rec1's complete header with its last byte set (so that the header
	// checksum fails and the header does not end in zeros), followed by zeros bytes.
	badHeader := func(zeros int) []byte {
		h := append([]byte(nil), rec1[:recordHeaderBytes]...)
		h[recordHeaderBytes-1] ^= 0xff
		if h[recordHeaderBytes-1] == 0 {
			h[recordHeaderBytes-1] = 1
		}
		return append(h, make([]byte, zeros)...)
	}
	empty1 := appendRecord(nil, 1, nil) // 20 bytes
	cases := []struct {
		name string
		seg  []byte
		off  int
		lsn  LSN
		want Damage
	}{
		{"at 0: file ends inside the header", rec1[:7], 0, 1, Torn},
		{"at 0: file ends inside the payload", rec1[:recordHeaderBytes+5], 0, 1, Torn},
		{"at 0: payload zero-filled", append(append([]byte(nil), rec1[:recordHeaderBytes]...), make([]byte, 40)...), 0, 1, Torn},
		{"at 0: all zeros", make([]byte, 30), 0, 1, Torn},
		{"complete header that does not verify, nothing after", badHeader(0), 0, 1, Corrupt},
		{"intact header with the wrong lsn, cut in the payload", appendRecord(nil, 9, payload(9, 40))[:30], 0, 1, Corrupt},
		{"header of a largest record, cut in the payload", appendRecord(nil, 1, payload(1, RecordBytesMax))[:120], 0, 1, Torn},
		{"complete record, bad payload, zeros after", append(flipAt(rec1, recordHeaderBytes+5), make([]byte, 30)...), 0, 1, Corrupt},
		{"complete header that does not verify, zeros after", badHeader(40), 0, 1, Corrupt},
		{"at len: nothing of the record written", rec1, len(rec1), 2, Torn},
		{"past len", rec1, len(rec1) + 1, 2, Corrupt},
		{"negative offset, all zeros", make([]byte, 10), -1, 1, Corrupt},
		{"negative offset", rec1, -1, 1, Corrupt},
		{"intact record one byte before the damage", empty1, 1, 1, Torn},
		{"intact record one byte after the damage", append([]byte{0xaa}, empty1...), 0, 1, Corrupt},
		{"intact record ending the file", append([]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa}, appendRecord(nil, 2, nil)...), 0, 1, Corrupt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got Damage
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("ClassifyDamage panicked: %v", p)
					}
				}()
				got = ClassifyDamage(tc.seg, tc.off, tc.lsn)
			}()
			if got != tc.want {
				t.Fatalf("ClassifyDamage = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestClassifyDamageEmbeddedRecord: a record torn inside its payload is Torn, unless
// an intact record that could follow it lies in the bytes after the damage: then it
// is Corrupt. A log writes records in LSN order and each takes at least
// recordHeaderBytes, so a record found d bytes after the damaged one (LSN lsn) can
// carry lsn .. lsn+d/recordHeaderBytes+1; every such LSN must count. The intact
// record here sits inside the cut payload (a payload may hold any bytes), the one
// place where it can follow a tail that otherwise reads as torn.
//
// Kills: impl/wal/format.go:ClassifyDamage mutants of the LSN filter that narrow it
// (got <= lsn, got >= lsn, got >= lsn+window, window - 1) and the one that reads the
// LSN at pos-recLSN.
func TestClassifyDamageEmbeddedRecord(t *testing.T) {
	const lsn = 5
	for _, tc := range []struct {
		name   string
		filler int // payload bytes before the embedded record
		inner  LSN
		want   Damage
	}{
		{"no embedded record", -1, 0, Torn},
		{"same lsn right after the header", 0, lsn, Corrupt},
		{"next lsn right after the header", 0, lsn + 1, Corrupt},
		{"farthest lsn that can follow at 20 bytes", 0, lsn + 2, Corrupt},
		{"next lsn 45 bytes in", 25, lsn + 1, Corrupt},
		{"farthest lsn that can follow at 65 bytes", 45, lsn + 4, Corrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p []byte
			cut := recordHeaderBytes + 30
			if tc.filler >= 0 {
				p = bytes.Repeat([]byte{0x5a}, tc.filler)
				p = appendRecord(p, tc.inner, []byte("inner"))
				cut = recordHeaderBytes + len(p) + 3
			}
			p = append(p, bytes.Repeat([]byte{0x33}, 40)...)
			seg := append(make([]byte, segmentHeaderBytes), appendRecord(nil, lsn, p)...)
			seg = seg[:segmentHeaderBytes+cut] // the file ends inside the payload
			if got := ClassifyDamage(seg, segmentHeaderBytes, lsn); got != tc.want {
				t.Fatalf("ClassifyDamage = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCorruptErrorMessage: the message names the offset when the damage has one (0
// included: a bad segment header is at offset 0) and leaves it out for the file as a
// whole (-1).
//
// Kills: impl/wal/errors.go:CorruptError.Error boundary, negate-cond and constant
// mutants of the Offset < 0 test.
func TestCorruptErrorMessage(t *testing.T) {
	cases := []struct {
		off  int64
		want string
	}{
		{-1, "soundgate/wal: corrupt log: /wal/x.wal: missing"},
		{0, "soundgate/wal: corrupt log: /wal/x.wal at offset 0: bad magic"},
		{16, "soundgate/wal: corrupt log: /wal/x.wal at offset 16: bad lsn"},
	}
	reasons := map[int64]string{-1: "missing", 0: "bad magic", 16: "bad lsn"}
	for _, tc := range cases {
		e := &CorruptError{Path: "/wal/x.wal", Offset: tc.off, Reason: reasons[tc.off]}
		if got := e.Error(); got != tc.want {
			t.Errorf("Offset %d: Error() = %q, want %q", tc.off, got, tc.want)
		}
		if !errors.Is(e, ErrCorrupt) {
			t.Errorf("Offset %d: errors.Is(ErrCorrupt) is false", tc.off)
		}
	}
}

// TestOnDiskLayout: the bytes of a segment header, a record and a snapshot file are
// the ones docs/wal.md draws (a log written by one build must open in the next), built
// here from the drawing, not from the package's constants: magic, version 1, a
// 20-byte record header, 32-byte file headers, little-endian integers, CRC32C. Records
// are at most 1 MiB (docs/wal.md, "On disk").
//
// Kills: the impl/wal/format.go:_:constant mutants of RecordBytesMax, recordHeaderBytes,
// segmentHeaderBytes, snapshotHeaderBytes and formatVersion (a layout changed on both
// the write and the read side survives every round trip).
func TestOnDiskLayout(t *testing.T) {
	if RecordBytesMax != 1<<20 {
		t.Fatalf("RecordBytesMax = %d, docs/wal.md says 1 MiB", RecordBytesMax)
	}
	le := binary.LittleEndian
	crc := func(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
	fileHeader := func(magic string, a, b uint64, tail []byte) []byte {
		h := make([]byte, 32, 32+len(tail))
		copy(h, magic)
		le.PutUint32(h[8:], 1)
		le.PutUint64(h[16:], a)
		le.PutUint64(h[24:], b)
		h = append(h, tail...)
		le.PutUint32(h[12:], crc(h)) // the crc field is zero while it is computed
		return h
	}
	if got, want := encodeSegmentHeader(segmentHeader{segment: 3, firstLSN: 41}), fileHeader("SGWALSEG", 3, 41, nil); !bytes.Equal(got, want) {
		t.Errorf("segment header\n got % x\nwant % x", got, want)
	}
	state := []byte("gate state")
	if got, want := encodeSnapshot(41, state), fileHeader("SGWALSNP", 41, uint64(len(state)), state); !bytes.Equal(got, want) {
		t.Errorf("snapshot\n got % x\nwant % x", got, want)
	}
	p := []byte("a record")
	want := make([]byte, 20, 20+len(p))
	le.PutUint32(want[4:], uint32(len(p)))
	le.PutUint64(want[8:], 41)
	le.PutUint32(want[16:], crc(p))
	le.PutUint32(want[0:], crc(want[4:20]))
	want = append(want, p...)
	if got := appendRecord(nil, 41, p); !bytes.Equal(got, want) {
		t.Errorf("record\n got % x\nwant % x", got, want)
	}
}
