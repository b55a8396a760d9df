package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// LSN is a record's log sequence number: 1 for the first record ever appended, then
// consecutive. LSN 0 means "no record".
type LSN uint64

// Layout constants. Every integer on disk is little-endian.
const (
	// RecordBytesMax is the largest payload Append accepts.
	RecordBytesMax = 1 << 20
	// recordHeaderBytes is the size of a record's header: header crc, length, lsn,
	// payload crc.
	recordHeaderBytes = 20
	// segmentHeaderBytes is the size of a segment file's header.
	segmentHeaderBytes = 32
	// snapshotHeaderBytes is the size of a snapshot file's header.
	snapshotHeaderBytes = 32
	// formatVersion is the version written in segment and snapshot headers.
	formatVersion = 1
)

var (
	segmentMagic  = [8]byte{'S', 'G', 'W', 'A', 'L', 'S', 'E', 'G'}
	snapshotMagic = [8]byte{'S', 'G', 'W', 'A', 'L', 'S', 'N', 'P'}
	castagnoli    = crc32.MakeTable(crc32.Castagnoli)
)

// Record header fields, at these offsets from the record's start.
const (
	recHeaderCRC  = 0  // uint32: CRC32C of bytes 4..20 (length, lsn, payload crc)
	recLength     = 4  // uint32: payload length
	recLSN        = 8  // uint64: the record's LSN
	recPayloadCRC = 16 // uint32: CRC32C of the payload
)

// appendRecord encodes one record (see docs/wal.md) onto buf.
func appendRecord(buf []byte, lsn LSN, payload []byte) []byte {
	var h [recordHeaderBytes]byte
	binary.LittleEndian.PutUint32(h[recLength:], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[recLSN:], uint64(lsn))
	binary.LittleEndian.PutUint32(h[recPayloadCRC:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[recHeaderCRC:], crc32.Checksum(h[recLength:], castagnoli))
	buf = append(buf, h[:]...)
	return append(buf, payload...)
}

// record is one decoded record of a segment.
type record struct {
	lsn     LSN
	payload []byte
	end     int // offset just past the record
}

// headerOK reports whether a complete record header with a valid header checksum
// starts at off, and returns its length and LSN.
func headerOK(seg []byte, off int) (n int, lsn LSN, ok bool) {
	if off < 0 || len(seg)-off < recordHeaderBytes {
		return 0, 0, false
	}
	h := seg[off : off+recordHeaderBytes]
	if crc32.Checksum(h[recLength:], castagnoli) != binary.LittleEndian.Uint32(h[recHeaderCRC:]) {
		return 0, 0, false
	}
	return int(binary.LittleEndian.Uint32(h[recLength:])), LSN(binary.LittleEndian.Uint64(h[recLSN:])), true
}

// decodeRecord reads the record at off. ok is false when the bytes at off are not an
// intact record (header or payload checksum mismatch, length out of range, cut
// short, LSN 0). An intact record may still carry an unexpected LSN; the caller
// checks it.
func decodeRecord(seg []byte, off int) (r record, ok bool) {
	n, lsn, ok := headerOK(seg, off)
	if !ok || lsn == 0 || n > RecordBytesMax || len(seg)-off-recordHeaderBytes < n {
		return record{}, false
	}
	end := off + recordHeaderBytes + n
	p := seg[off+recordHeaderBytes : end]
	if crc32.Checksum(p, castagnoli) != binary.LittleEndian.Uint32(seg[off+recPayloadCRC:]) {
		return record{}, false
	}
	return record{lsn: lsn, payload: p, end: end}, true
}

// Damage is the verdict on the first record of a segment that does not verify.
type Damage int

const (
	// Torn means the bytes from the bad record to the end of the segment are what an
	// interrupted append leaves: the file ends inside the record, or the record's
	// remainder and everything after it are zero bytes (a crash that extended the
	// file without writing its data), and no intact record follows.
	// Recovery truncates a torn tail of the last segment.
	Torn Damage = iota + 1
	// Corrupt means anything else: an intact record follows the bad one (one whose
	// LSN could follow it at that distance: at most one more per record header that
	// fits in between; an intact record with any other LSN is taken for payload bytes
	// and ignored), or the bad record is complete but does not verify, or it is
	// intact but out of place. The damage is in the log's content, and recovery
	// refuses to open it.
	Corrupt
)

// String returns "torn" or "corrupt".
func (d Damage) String() string {
	switch d {
	case Torn:
		return "torn"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("damage(%d)", int(d))
}

// ClassifyDamage tells a torn tail from corruption. seg is a whole segment file, off
// the offset of its first record that failed to verify, and lsn the LSN that record
// should have had. See Torn and Corrupt for the rule. The header checksum makes the
// rule sharp: a flipped bit in a complete record (its length included) is Corrupt,
// while a write cut short, which can only shorten the file, is Torn.
func ClassifyDamage(seg []byte, off int, lsn LSN) Damage {
	if off < 0 || off > len(seg) {
		return Corrupt
	}
	if _, ok := decodeRecord(seg, off); ok {
		return Corrupt // intact, yet not the record expected here
	}
	// An intact record after the damage means the damage is in the middle.
	for pos := off + 1; pos+recordHeaderBytes <= len(seg); pos++ {
		got := LSN(binary.LittleEndian.Uint64(seg[pos+recLSN:]))
		window := LSN((pos-off)/recordHeaderBytes) + 1
		if got < lsn || got > lsn+window {
			continue // cheap filter: only an LSN that could follow is worth a checksum
		}
		if _, ok := decodeRecord(seg, pos); ok {
			return Corrupt
		}
	}
	// zeroFrom: where the run of zero bytes that ends the file starts (not before off).
	zeroFrom := len(seg)
	for zeroFrom > off && seg[zeroFrom-1] == 0 {
		zeroFrom--
	}
	if len(seg)-off < recordHeaderBytes {
		return Torn // the file ends inside the header
	}
	n, got, ok := headerOK(seg, off)
	if !ok {
		// A complete header that does not verify: torn only if zero-filled.
		if zeroFrom < off+recordHeaderBytes && zeroFrom < len(seg) {
			return Torn
		}
		return Corrupt
	}
	if got != lsn || n > RecordBytesMax {
		return Corrupt
	}
	end := off + recordHeaderBytes + n
	if end > len(seg) {
		return Torn // the file ends inside the payload
	}
	// Complete, header verifies, payload does not: torn only if zero-filled.
	if zeroFrom < end && zeroFrom < len(seg) {
		return Torn
	}
	return Corrupt
}

// segmentHeader is the header of a segment file.
type segmentHeader struct {
	segment  uint64 // segment number, also in the file name
	firstLSN LSN    // LSN of the segment's first record
}

func encodeSegmentHeader(h segmentHeader) []byte {
	b := make([]byte, segmentHeaderBytes)
	copy(b[0:8], segmentMagic[:])
	binary.LittleEndian.PutUint32(b[8:12], formatVersion)
	binary.LittleEndian.PutUint64(b[16:24], h.segment)
	binary.LittleEndian.PutUint64(b[24:32], uint64(h.firstLSN))
	binary.LittleEndian.PutUint32(b[12:16], headerCRC(b))
	return b
}

// headerCRC is the CRC32C of a header with its crc field (bytes 12..16) taken as zero.
func headerCRC(b []byte) uint32 {
	crc := crc32.Update(0, castagnoli, b[0:12])
	crc = crc32.Update(crc, castagnoli, []byte{0, 0, 0, 0})
	return crc32.Update(crc, castagnoli, b[16:])
}

// decodeSegmentHeader checks and decodes a segment header; the error says what is
// wrong, for a CorruptError.
func decodeSegmentHeader(b []byte) (segmentHeader, error) {
	if len(b) < segmentHeaderBytes {
		return segmentHeader{}, fmt.Errorf("header is %d bytes, want %d", len(b), segmentHeaderBytes)
	}
	b = b[:segmentHeaderBytes]
	if [8]byte(b[0:8]) != segmentMagic {
		return segmentHeader{}, fmt.Errorf("bad magic %q", b[0:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != formatVersion {
		return segmentHeader{}, fmt.Errorf("unsupported version %d", v)
	}
	if binary.LittleEndian.Uint32(b[12:16]) != headerCRC(b) {
		return segmentHeader{}, fmt.Errorf("header checksum mismatch")
	}
	return segmentHeader{
		segment:  binary.LittleEndian.Uint64(b[16:24]),
		firstLSN: LSN(binary.LittleEndian.Uint64(b[24:32])),
	}, nil
}

// snapshotHeader is the header of a snapshot file whose state is n bytes with the
// checksum stateCRC; the file's checksum covers the header and the state.
func snapshotHeader(upto LSN, n int64, stateCRC uint32) []byte {
	h := make([]byte, snapshotHeaderBytes)
	copy(h[0:8], snapshotMagic[:])
	binary.LittleEndian.PutUint32(h[8:12], formatVersion)
	binary.LittleEndian.PutUint64(h[16:24], uint64(upto))
	binary.LittleEndian.PutUint64(h[24:32], uint64(n))
	binary.LittleEndian.PutUint32(h[12:16], crc32Combine(headerCRC(h), stateCRC, uint64(n)))
	return h
}

// crc32Combine returns the Castagnoli checksum of a‖b from those of a and of b and
// b's length: a snapshot is checksummed header first, but its state is written, and
// checksummed, before its length is known. It multiplies crcA by x^(8·lenB) modulo
// the polynomial, by repeated squaring of the one-zero-bit operator in GF(2).
func crc32Combine(crcA, crcB uint32, lenB uint64) uint32 {
	var odd, even [32]uint32
	odd[0] = crc32.Castagnoli // the reflected polynomial: one zero bit
	for i, row := 1, uint32(1); i < 32; i, row = i+1, row<<1 {
		odd[i] = row
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	for lenB != 0 {
		gf2Square(&even, &odd) // one zero byte, then 4, 16, ... at each turn
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		lenB >>= 1
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		lenB >>= 1
	}
	return crcA ^ crcB
}

func gf2Times(m *[32]uint32, v uint32) uint32 {
	var sum uint32
	for i := range m {
		if v>>i&1 != 0 {
			sum ^= m[i]
		}
	}
	return sum
}

func gf2Square(square, m *[32]uint32) {
	for i := range m {
		square[i] = gf2Times(m, m[i])
	}
}

// decodeSnapshot checks a snapshot file and returns its LSN and state.
func decodeSnapshot(b []byte) (LSN, []byte, error) {
	if len(b) < snapshotHeaderBytes {
		return 0, nil, fmt.Errorf("snapshot is %d bytes, shorter than its header", len(b))
	}
	if [8]byte(b[0:8]) != snapshotMagic {
		return 0, nil, fmt.Errorf("bad magic %q", b[0:8])
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != formatVersion {
		return 0, nil, fmt.Errorf("unsupported version %d", v)
	}
	n := binary.LittleEndian.Uint64(b[24:32])
	if n != uint64(len(b)-snapshotHeaderBytes) {
		return 0, nil, fmt.Errorf("state length %d does not match file size %d", n, len(b))
	}
	if binary.LittleEndian.Uint32(b[12:16]) != headerCRC(b) {
		return 0, nil, fmt.Errorf("checksum mismatch")
	}
	return LSN(binary.LittleEndian.Uint64(b[16:24])), b[snapshotHeaderBytes:], nil
}

// Failpoint names (see FailpointEnv in builds with the failpoints tag).
const (
	failpointAfterWrite = "wal-after-write"
	failpointAfterSync  = "wal-after-sync"
)
