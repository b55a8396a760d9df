package wal

import (
	"bytes"
	"errors"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// FuzzRecover damages the last segment of a clean log (cut it, flip bytes, append
// bytes) and opens it. Open must not panic; it either refuses with ErrCorrupt or
// recovers a prefix of what was written that keeps every record lying wholly before
// the first damaged byte. Run longer with: go test -fuzz FuzzRecover ./impl/wal
func FuzzRecover(f *testing.F) {
	f.Add(uint16(0), []byte{}, []byte{}, uint16(0))               // untouched
	f.Add(uint16(7), []byte{}, []byte{}, uint16(0))               // cut 7 bytes
	f.Add(uint16(0), []byte{3, 0x10}, []byte{}, uint16(0))        // flip one byte
	f.Add(uint16(0), []byte{}, []byte{0, 0, 0, 0, 0}, uint16(0))  // zeros appended
	f.Add(uint16(30), []byte{200, 1}, []byte{1, 2, 3}, uint16(9)) // all of it
	f.Fuzz(func(t *testing.T, cut uint16, flips []byte, tail []byte, zeroRun uint16) {
		fsys := walfs.NewFaultFS()
		l, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for i := 1; i <= 24; i++ {
			p := payload(LSN(i), 10+i*7%60)
			if _, err := l.Append(p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		names, _ := fsys.ReadDir(testDir)
		last := testDir + "/" + names[len(names)-1]
		seg, _ := fsys.ReadFile(last)
		h, err := decodeSegmentHeader(seg)
		if err != nil {
			t.Fatal(err)
		}
		before := int(h.firstLSN) - 1 // records in earlier segments
		orig := len(seg)
		firstDamage := orig
		if c := int(cut) % (orig - segmentHeaderBytes + 1); c > 0 {
			seg = seg[:orig-c]
			firstDamage = len(seg)
		}
		for i := 0; i+1 < len(flips); i += 2 {
			off := segmentHeaderBytes + int(flips[i])*7%max(1, len(seg)-segmentHeaderBytes)
			if off < len(seg) && flips[i+1] != 0 {
				seg[off] ^= flips[i+1]
				firstDamage = min(firstDamage, off)
			}
		}
		if z := int(zeroRun) % 64; z > 0 {
			seg = append(seg, make([]byte, z)...)
		}
		seg = append(seg, tail...)
		rewrite(t, fsys, last, seg)

		l2, err := Open(testDir, Options{FS: fsys, SegmentBytes: 1024})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: %v: neither recovered nor a typed refusal", err)
			}
			return
		}
		defer l2.Close()
		var got [][]byte
		if err := l2.Replay(nil, func(lsn LSN, rec []byte) error {
			got = append(got, append([]byte(nil), rec...))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < min(len(got), len(want)); i++ {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d is not the one written", i+1)
			}
		}
		if len(got) > len(want) && len(tail) == 0 {
			t.Fatalf("recovered %d records, only %d were written", len(got), len(want))
		}
		// Every record wholly before the first damaged byte must be kept.
		kept := 0
		for off := segmentHeaderBytes; ; kept++ {
			r, ok := decodeRecord(seg[:firstDamage], off)
			if !ok {
				break
			}
			off = r.end
		}
		if len(got) < before+kept {
			t.Fatalf("recovered %d records, but %d lay before the damage", len(got), before+kept)
		}
	})
}
