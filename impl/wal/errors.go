package wal

import (
	"errors"
	"fmt"
	"io/fs"
)

// The log's sentinel errors; compare with errors.Is.
var (
	// ErrFailed: a write, fsync, create, rename or remove failed (a full disk
	// included), so the log stopped accepting records forever: it fails closed.
	// The error returned is a *FailedError that wraps the cause. Recovery is a
	// restart: Open replays the log, and everything acknowledged is there.
	ErrFailed = errors.New("soundgate/wal: log failed")
	// ErrCorrupt: the log on disk is damaged in a way a crash cannot explain (a bad
	// record followed by intact ones, a bad header, a missing segment). Open returns
	// a *CorruptError naming the file and offset and refuses to start.
	ErrCorrupt = errors.New("soundgate/wal: corrupt log")
	// ErrLocked: another process (or another Log) has the directory open. Two
	// writers would interleave their records; the second Open refuses.
	ErrLocked = errors.New("soundgate/wal: log directory in use by another process")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("soundgate/wal: log closed")
	// ErrRecordTooLarge: Append of a record over RecordBytesMax; nothing is appended.
	ErrRecordTooLarge = errors.New("soundgate/wal: record too large")
	// ErrNotAppended: WaitDurable of an LSN that was never appended.
	ErrNotAppended = errors.New("soundgate/wal: lsn not appended")
	// ErrReplayed: Replay was called twice, or after the first Append.
	ErrReplayed = errors.New("soundgate/wal: replay only once, before the first append")
	// ErrBadSnapshot: Snapshot of an LSN that was not appended or is not after the
	// current snapshot; nothing is written.
	ErrBadSnapshot = errors.New("soundgate/wal: bad snapshot lsn")
)

// FailedError is the sticky error of a failed log. errors.Is(err, ErrFailed) holds,
// and the cause (for example syscall.ENOSPC) is reachable with errors.Is/As.
type FailedError struct {
	Op   string // what the log was doing: "write", "fdatasync", "create segment", ...
	Path string // the file involved
	Err  error  // the cause
}

// Error names the operation, the file and the cause.
func (e *FailedError) Error() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) && pe.Path == e.Path {
		cause = pe.Err // the path is named once
	}
	return fmt.Sprintf("soundgate/wal: log failed: %s %s: %v", e.Op, e.Path, cause)
}

// Is reports ErrFailed as a match.
func (e *FailedError) Is(target error) bool { return target == ErrFailed }

// Unwrap returns the cause.
func (e *FailedError) Unwrap() error { return e.Err }

// CorruptError says where the log is damaged. errors.Is(err, ErrCorrupt) holds.
type CorruptError struct {
	Path   string // the segment or snapshot file
	Offset int64  // byte offset in the file of the damage (-1: the file as a whole)
	Reason string // what is wrong
}

// Error names the file, the offset and what is wrong.
func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("soundgate/wal: corrupt log: %s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("soundgate/wal: corrupt log: %s at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// Is reports ErrCorrupt as a match.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
