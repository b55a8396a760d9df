// Package wal is the gate's write-ahead log: an append-only, checksummed, segmented
// log of the core's state-changing commands, written and fdatasynced before the
// gate answers, and replayed when the gate starts.
//
// The server uses it like this:
//
//	log, err := wal.Open(dir, wal.Options{})     // verifies and repairs the tail
//	err = log.Replay(restoreSnapshot, applyRecord) // snapshot first, then every record after it
//	...
//	lsn, err := log.Append(cmd)                  // under the server's lock: LSN order = apply order
//	err = log.WaitDurable(ctx, lsn)              // outside the lock: nil once on stable storage
//	...
//	err = log.Snapshot(upto, state)              // state = every record up to upto applied
//
// Group commit. Append does no I/O. A WaitDurable that finds nobody writing leads:
// it writes everything appended so far and fdatasyncs once, in its own goroutine, so
// a lone request pays one write and one fdatasync and no hand-off. Records appended
// meanwhile are handed to the committer goroutine, which writes batch after batch
// without a gap while records keep coming, so concurrent waiters share fdatasyncs.
// There is no timer anywhere.
//
// Fail closed. When a write, an fdatasync, a segment creation or a directory sync
// fails (a full disk included), the log is failed forever: Err returns a
// *FailedError (errors.Is ErrFailed, wrapping the cause), every later Append and
// every WaitDurable of a record that was not yet durable return it. Nothing is
// retried: after a failed fsync the kernel may have dropped the dirty pages, so a
// retry could acknowledge data that is not on disk. Recovery is a restart: Open
// replays the log, and every record whose WaitDurable returned nil is there.
// Records that were appended but not acknowledged may or may not be there.
//
// Recovery. Open reads every segment, checks the CRC32C and the LSN of every record,
// and truncates a torn tail of the last segment (an append that a crash cut short).
// Damage that a crash cannot leave (a bad record followed by intact ones, a bad
// header, a missing segment, a bad snapshot) is refused with a *CorruptError naming
// the file and offset: the log is never silently shortened in the middle.
// ClassifyDamage is the one function that tells a torn tail from corruption.
//
// The on-disk layout (record, segment header, snapshot file) is drawn in
// docs/wal.md. File-system access goes through the walfs seam, so that tests inject
// faults and crashes (walfs.FaultFS). Built with the tag failpoints, the log can kill
// its own process between write and fdatasync, for the crash harness (FailpointEnv).
package wal
