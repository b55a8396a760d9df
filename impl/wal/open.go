package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

const (
	segmentSuffix  = ".wal"
	snapshotPrefix = "snap-"
	snapshotSuffix = ".snap"
	tmpSuffix      = ".tmp"
)

func segmentName(n uint64) string { return fmt.Sprintf("%020d%s", n, segmentSuffix) }
func snapshotName(l LSN) string {
	return fmt.Sprintf("%s%020d%s", snapshotPrefix, uint64(l), snapshotSuffix)
}
func parseNumber(s string) (uint64, bool) {
	if len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// segment is one segment file of the log.
type segment struct {
	num      uint64
	firstLSN LSN
	path     string
	end      int64 // bytes of intact content at open (the replay bound); a segment's size once the next one begins
}

// recovered is what Open found on disk.
type recovered struct {
	snapLSN   LSN
	snapPath  string
	state     []byte
	segments  []segment
	lastLSN   LSN    // last intact record (or the snapshot's LSN if later; see Open)
	tornAt    int64  // offset where the last segment's torn tail starts, -1 if none
	tornSeg   string // path of a last segment whose header is torn: remove it
	tornBytes int64  // bytes cut by the repair
}

// recoverDir scans dir, verifies every snapshot and segment, and decides what to
// repair. It changes nothing on disk.
func recoverDir(fsys walfs.FS, dir string) (*recovered, []string, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("soundgate/wal: read %s: %w", dir, err)
	}
	segNums, snaps, junk, err := sortNames(dir, names)
	if err != nil {
		return nil, nil, err
	}
	rec := &recovered{tornAt: -1}
	// The newest snapshot counts; older ones are leftovers of a compaction.
	if len(snaps) > 0 {
		newest := snaps[len(snaps)-1]
		for _, s := range snaps[:len(snaps)-1] {
			junk = append(junk, snapshotName(s))
		}
		if err := rec.loadSnapshot(fsys, dir, newest); err != nil {
			return nil, nil, err
		}
	}
	if err := rec.scanSegments(fsys, dir, segNums); err != nil {
		return nil, nil, err
	}
	// Segments whose records the snapshot covers are leftovers of a compaction that a
	// crash interrupted: finish it.
	for len(rec.segments) > 1 && rec.segments[1].firstLSN <= rec.snapLSN+1 {
		junk = append(junk, segmentName(rec.segments[0].num))
		rec.segments = rec.segments[1:]
	}
	if len(rec.segments) == 0 && rec.snapLSN > 0 {
		return nil, nil, &CorruptError{Path: rec.snapPath, Offset: -1, Reason: "snapshot without any segment"}
	}
	if rec.lastLSN < rec.snapLSN {
		return nil, nil, &CorruptError{Path: rec.segments[len(rec.segments)-1].path, Offset: -1,
			Reason: fmt.Sprintf("log ends at lsn %d, before its snapshot at %d", rec.lastLSN, rec.snapLSN)}
	}
	return rec, junk, nil
}

// sortNames sorts the entries of dir (sorted by name) into segment numbers, snapshot
// LSNs and leftover temporary files; other names are no part of the log. A segment or
// snapshot whose number is not 20 digits is a *CorruptError.
func sortNames(dir string, names []string) (segNums []uint64, snaps []LSN, junk []string, err error) {
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			junk = append(junk, name)
		case strings.HasSuffix(name, segmentSuffix):
			n, ok := parseNumber(strings.TrimSuffix(name, segmentSuffix))
			if !ok {
				return nil, nil, nil, &CorruptError{Path: walfs.Join(dir, name), Offset: -1, Reason: "segment file name is not a 20-digit number"}
			}
			segNums = append(segNums, n)
		case strings.HasPrefix(name, snapshotPrefix) && strings.HasSuffix(name, snapshotSuffix):
			n, ok := parseNumber(strings.TrimSuffix(strings.TrimPrefix(name, snapshotPrefix), snapshotSuffix))
			if !ok {
				return nil, nil, nil, &CorruptError{Path: walfs.Join(dir, name), Offset: -1, Reason: "snapshot file name is not a 20-digit number"}
			}
			snaps = append(snaps, LSN(n))
		}
	}
	return segNums, snaps, junk, nil
}

// loadSnapshot reads and verifies the snapshot of LSN upto into rec.
func (rec *recovered) loadSnapshot(fsys walfs.FS, dir string, upto LSN) error {
	p := walfs.Join(dir, snapshotName(upto))
	b, err := fsys.ReadFile(p)
	if err != nil {
		return fmt.Errorf("soundgate/wal: read %s: %w", p, err)
	}
	got, state, err := decodeSnapshot(b)
	if err != nil {
		return &CorruptError{Path: p, Offset: 0, Reason: err.Error()}
	}
	if got != upto {
		return &CorruptError{Path: p, Offset: 16, Reason: fmt.Sprintf("snapshot holds lsn %d, its name says %d", got, upto)}
	}
	rec.snapLSN, rec.snapPath, rec.state = got, p, state
	return nil
}

// scanSegments verifies the segments numbered segNums, oldest first, into rec: each
// one's intact end, a torn tail or torn header of the last one, and the last intact LSN.
func (rec *recovered) scanSegments(fsys walfs.FS, dir string, segNums []uint64) error {
	var prevLast LSN
	for i, num := range segNums {
		last := i == len(segNums)-1
		p := walfs.Join(dir, segmentName(num))
		if i > 0 && num != segNums[i-1]+1 {
			return &CorruptError{Path: p, Offset: -1, Reason: fmt.Sprintf("segment %d is missing", segNums[i-1]+1)}
		}
		b, err := fsys.ReadFile(p)
		if err != nil {
			return fmt.Errorf("soundgate/wal: read %s: %w", p, err)
		}
		h, herr := decodeSegmentHeader(b)
		if herr != nil {
			if last && len(b) < segmentHeaderBytes {
				// Created, header not yet durable when the machine stopped: it holds
				// no record. Recovery removes it.
				rec.tornSeg = p
				rec.tornBytes = int64(len(b))
				break
			}
			return &CorruptError{Path: p, Offset: 0, Reason: herr.Error()}
		}
		if err := checkSegmentStart(p, h, num, i == 0, rec.snapLSN, prevLast); err != nil {
			return err
		}
		end, next, err := rec.scanRecords(p, b, h.firstLSN, last)
		if err != nil {
			return err
		}
		rec.segments = append(rec.segments, segment{num: num, firstLSN: h.firstLSN, path: p, end: int64(end)})
		prevLast = next - 1
	}
	rec.lastLSN = prevLast
	return nil
}

// checkSegmentStart checks that the header h of segment p names segment num and a
// first LSN that continues the log: the first segment starts at or before the
// snapshot's successor, a later one right after prevLast.
func checkSegmentStart(p string, h segmentHeader, num uint64, first bool, snapLSN, prevLast LSN) error {
	if h.segment != num {
		return &CorruptError{Path: p, Offset: 16, Reason: fmt.Sprintf("header names segment %d", h.segment)}
	}
	switch {
	case first && h.firstLSN > snapLSN+1:
		return &CorruptError{Path: p, Offset: 24, Reason: fmt.Sprintf("first record %d leaves a gap after the snapshot at %d", h.firstLSN, snapLSN)}
	case first && h.firstLSN == 0:
		return &CorruptError{Path: p, Offset: 24, Reason: "first lsn is 0"}
	case !first && h.firstLSN != prevLast+1:
		return &CorruptError{Path: p, Offset: 24, Reason: fmt.Sprintf("first record %d does not follow %d", h.firstLSN, prevLast)}
	}
	return nil
}

// scanRecords verifies the records of segment p (content b) after its header, the
// first carrying LSN first, and returns the offset where its intact content ends and
// the LSN the next record would carry. In the last segment, reserved zeros are the
// clean end and a torn tail is noted in rec for repair; any other record that does
// not verify is a *CorruptError, returned with the offset and LSN where it stands.
func (rec *recovered) scanRecords(p string, b []byte, first LSN, last bool) (end int, next LSN, err error) {
	want := first
	off := segmentHeaderBytes
	for off < len(b) {
		r, ok := decodeRecord(b, off)
		if ok && r.lsn == want {
			want++
			off = r.end
			continue
		}
		if last && allZero(b[off:]) {
			// Space reserved ahead of the writer (Allocate) and never written:
			// the clean end of the log, not damage. Nothing to repair.
			break
		}
		if last && ClassifyDamage(b, off, want) == Torn {
			rec.tornAt = int64(off)
			rec.tornBytes = int64(len(b) - off)
			break
		}
		reason := "record does not verify and is not a torn tail (it is complete, or intact records follow it)"
		if ok {
			reason = fmt.Sprintf("record carries lsn %d, want %d", r.lsn, want)
		} else if !last {
			reason = "record does not verify in a segment that is not the last"
		}
		return off, want, &CorruptError{Path: p, Offset: int64(off), Reason: reason}
	}
	return off, want, nil
}

// repair applies what recoverDir decided: truncate a torn tail, remove a segment
// whose header is torn, remove leftovers; then makes it durable.
func repair(fsys walfs.FS, dir string, rec *recovered, junk []string) error {
	dirty := false
	for _, name := range junk {
		if err := fsys.Remove(walfs.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("soundgate/wal: remove leftover %s: %w", name, err)
		}
		dirty = true
	}
	if rec.tornSeg != "" {
		if err := fsys.Remove(rec.tornSeg); err != nil {
			return fmt.Errorf("soundgate/wal: remove torn segment %s: %w", rec.tornSeg, err)
		}
		dirty = true
	}
	if dirty {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("soundgate/wal: sync dir %s: %w", dir, err)
		}
	}
	if rec.tornAt >= 0 {
		s := rec.segments[len(rec.segments)-1]
		f, err := fsys.OpenAppend(s.path)
		if err != nil {
			return fmt.Errorf("soundgate/wal: open %s to truncate its torn tail: %w", s.path, err)
		}
		err = errors.Join(f.Truncate(rec.tornAt), f.Sync())
		err = errors.Join(err, f.Close())
		if err != nil {
			return fmt.Errorf("soundgate/wal: truncate torn tail of %s at %d: %w", s.path, rec.tornAt, err)
		}
	}
	return nil
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
