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
	// recordHeaderBytes is the size of a record's header: crc, length, lsn.
	recordHeaderBytes = 16
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

// appendRecord encodes one record (see docs/wal.md) onto buf.
func appendRecord(buf []byte, lsn LSN, payload []byte) []byte {
	start := len(buf)
	var h [recordHeaderBytes]byte
	binary.LittleEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.LittleEndian.PutUint64(h[8:16], uint64(lsn))
	buf = append(buf, h[:]...)
	buf = append(buf, payload...)
	crc := crc32.Update(0, castagnoli, buf[start+4:])
	binary.LittleEndian.PutUint32(buf[start:start+4], crc)
	return buf
}

// record is one decoded record header at an offset of a segment.
type record struct {
	lsn     LSN
	payload []byte
	end     int // offset just past the record
}

// decodeRecord reads the record at off. ok is false when the bytes at off are not an
// intact record (too short, length out of range, or checksum mismatch). An intact
// record may still carry an unexpected LSN; the caller checks it.
func decodeRecord(seg []byte, off int) (r record, ok bool) {
	if off < 0 || len(seg)-off < recordHeaderBytes {
		return record{}, false
	}
	h := seg[off : off+recordHeaderBytes]
	n := int(binary.LittleEndian.Uint32(h[4:8]))
	if n > RecordBytesMax || len(seg)-off-recordHeaderBytes < n {
		return record{}, false
	}
	end := off + recordHeaderBytes + n
	if crc32.Update(0, castagnoli, seg[off+4:end]) != binary.LittleEndian.Uint32(h[0:4]) {
		return record{}, false
	}
	lsn := LSN(binary.LittleEndian.Uint64(h[8:16]))
	if lsn == 0 {
		return record{}, false
	}
	return record{lsn: lsn, payload: seg[off+recordHeaderBytes : end], end: end}, true
}

// Damage is the verdict on the first record of a segment that does not verify.
type Damage int

const (
	// Torn means the bytes from the bad record to the end of the segment are what an
	// interrupted append leaves: no intact record follows. Recovery truncates them
	// when the segment is the last one.
	Torn Damage = iota + 1
	// Corrupt means an intact record follows the bad one (or the bad record itself
	// checks out but is out of place): the damage is in the middle of the log, and
	// recovery refuses to open it.
	Corrupt
)

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
// should have had. It returns Corrupt if the record at off is intact but carries
// another LSN, or if any intact record with an LSN that could follow (from lsn up to
// lsn plus the number of minimal records that fit in between) starts after off;
// otherwise Torn. A torn tail is what a crash leaves (an append cut short); data
// after it would have to be written later than the damaged record, which an
// append-only, fsync-ordered log never does.
func ClassifyDamage(seg []byte, off int, lsn LSN) Damage {
	if _, ok := decodeRecord(seg, off); ok {
		return Corrupt
	}
	for pos := off + 1; pos+recordHeaderBytes <= len(seg); pos++ {
		got := LSN(binary.LittleEndian.Uint64(seg[pos+8 : pos+16]))
		window := LSN((pos-off)/recordHeaderBytes) + 1
		if got < lsn || got > lsn+window {
			continue // cheap filter: only an LSN that could follow is worth a checksum
		}
		if _, ok := decodeRecord(seg, pos); ok {
			return Corrupt
		}
	}
	return Torn
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

// encodeSnapshot lays out a snapshot file: header then state.
func encodeSnapshot(upto LSN, state []byte) []byte {
	b := make([]byte, snapshotHeaderBytes+len(state))
	copy(b[0:8], snapshotMagic[:])
	binary.LittleEndian.PutUint32(b[8:12], formatVersion)
	binary.LittleEndian.PutUint64(b[16:24], uint64(upto))
	binary.LittleEndian.PutUint64(b[24:32], uint64(len(state)))
	copy(b[snapshotHeaderBytes:], state)
	binary.LittleEndian.PutUint32(b[12:16], headerCRC(b))
	return b
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
