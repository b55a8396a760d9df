package wal

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

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

// TestClassifyDamage: the rule that tells a torn tail from corruption, case by case.
func TestClassifyDamage(t *testing.T) {
	var seg []byte
	var offs []int
	for i := 1; i <= 3; i++ {
		offs = append(offs, len(seg))
		seg = appendRecord(seg, LSN(i), payload(LSN(i), 40))
	}
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
	checkDamage(t, []damageCase{
		{"file ends inside the header", seg[:offs[2]+7], offs[2], 3, Torn},
		{"file ends inside the payload", seg[:offs[2]+recordHeaderBytes+3], offs[2], 3, Torn},
		{"payload zero-filled to the end", zeroFrom(seg, offs[2]+recordHeaderBytes+10), offs[2], 3, Torn},
		{"header zero-filled to the end", zeroFrom(seg, offs[2]+9), offs[2], 3, Torn},
		{"zeros after the last record", append(append([]byte(nil), seg...), make([]byte, 64)...), len(seg), 4, Torn},
		{"flipped payload bit in the last record", flip(seg, int64(offs[2]+recordHeaderBytes+1), 0x01), offs[2], 3, Corrupt},
		{"flipped length bit in the last record", flip(seg, int64(offs[2]+recLength), 0x01), offs[2], 3, Corrupt},
		{"flipped bit in a middle record", flip(seg, int64(offs[1]+recordHeaderBytes+1), 0x01), offs[1], 2, Corrupt},
		{"flipped length in a middle record", flip(seg, int64(offs[1]+recLength), 0x01), offs[1], 2, Corrupt},
		{"last record zero-filled after 4 bytes", zeroFrom(seg[:offs[2]], offs[1]+4), offs[1], 2, Torn},
		{"zeroed middle record, intact one after", zeroMid(seg, offs[1], offs[2]), offs[1], 2, Corrupt},
		{"intact record with the wrong lsn", wrongLSN, offs[2], 3, Corrupt},
		{"garbage after the last record", append(append([]byte(nil), seg...), 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17), len(seg), 4, Corrupt},
	})
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
	checkDamage(t, []damageCase{
		{"at 0: file ends inside the header", rec1[:7], 0, 1, Torn},
		{"at 0: file ends inside the payload", rec1[:recordHeaderBytes+5], 0, 1, Torn},
		{"at 0: payload zero-filled", append(append([]byte(nil), rec1[:recordHeaderBytes]...), make([]byte, 40)...), 0, 1, Torn},
		{"at 0: all zeros", make([]byte, 30), 0, 1, Torn},
		{"complete header that does not verify, nothing after", badHeader(0), 0, 1, Corrupt},
		{"intact header with the wrong lsn, cut in the payload", appendRecord(nil, 9, payload(9, 40))[:30], 0, 1, Corrupt},
		{"header of a largest record, cut in the payload", appendRecord(nil, 1, payload(1, RecordBytesMax))[:120], 0, 1, Torn},
		{"complete record, bad payload, zeros after", append(flip(rec1, recordHeaderBytes+5, 0x01), make([]byte, 30)...), 0, 1, Corrupt},
		{"complete header that does not verify, zeros after", badHeader(40), 0, 1, Corrupt},
		{"at len: nothing of the record written", rec1, len(rec1), 2, Torn},
		{"past len", rec1, len(rec1) + 1, 2, Corrupt},
		{"negative offset, all zeros", make([]byte, 10), -1, 1, Corrupt},
		{"negative offset", rec1, -1, 1, Corrupt},
		{"intact record one byte before the damage", empty1, 1, 1, Torn},
		{"intact record one byte after the damage", append([]byte{0xaa}, empty1...), 0, 1, Corrupt},
		{"intact record ending the file", append([]byte{0xaa, 0xaa, 0xaa, 0xaa, 0xaa}, appendRecord(nil, 2, nil)...), 0, 1, Corrupt},
	})
}

// damageCase is an input of ClassifyDamage and the verdict it must give.
type damageCase struct {
	name string
	seg  []byte
	off  int
	lsn  LSN
	want Damage
}

// checkDamage runs ClassifyDamage on each case; a panic fails the case.
func checkDamage(t *testing.T, cases []damageCase) {
	t.Helper()
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
