package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// checkRecovered reopens the log after a crash and checks that it holds a prefix of
// the history containing every acknowledged record.
func checkRecovered(t *testing.T, fsys walfs.FS, segBytes int64, h history) LSN {
	t.Helper()
	l, err := Open(testDir, Options{FS: fsys, SegmentBytes: segBytes})
	if err != nil {
		t.Fatalf("Open after crash: %v", err)
	}
	defer l.Close()
	r := replayAll(t, l)
	for i, lsn := range r.lsns {
		if lsn != LSN(i+1) {
			t.Fatalf("replayed lsn %d at position %d", lsn, i)
		}
		if !bytes.Equal(r.recs[i], h.recs[lsn]) {
			t.Fatalf("record %d differs from what was appended", lsn)
		}
	}
	got := LSN(len(r.lsns))
	if got < h.acked {
		t.Fatalf("lost acknowledged records: recovered up to %d, acknowledged up to %d", got, h.acked)
	}
	return got
}

// TestFaults: every injected storage fault fails the log closed with a typed error,
// the log stays failed, and after a crash and a restart nothing acknowledged is lost.
func TestFaults(t *testing.T) {
	eio := syscall.EIO
	cases := []struct {
		name   string
		inject func(fs *walfs.FaultFS)
		cause  error
	}{
		{"short write", func(fs *walfs.FaultFS) {
			fs.Inject(walfs.Fault{Op: walfs.OpWrite, Path: ".wal", ShortBytes: 7, Err: eio})
		}, eio},
		{"write error", func(fs *walfs.FaultFS) { fs.Inject(walfs.Fault{Op: walfs.OpWrite, Path: ".wal", Err: eio}) }, eio},
		{"fsync error", func(fs *walfs.FaultFS) { fs.Inject(walfs.Fault{Op: walfs.OpSync, Path: ".wal", Err: eio}) }, eio},
		{"later fsync error", func(fs *walfs.FaultFS) {
			fs.Inject(walfs.Fault{Op: walfs.OpSync, Path: ".wal", Skip: 5, Err: eio})
		}, eio},
		{"disk full", func(fs *walfs.FaultFS) { fs.SetCapacity(fs.Size(testDir+"/"+segmentName(1)) + 3000) }, syscall.ENOSPC},
		{"segment create fails", func(fs *walfs.FaultFS) {
			fs.Inject(walfs.Fault{Op: walfs.OpCreate, Path: ".wal", Err: syscall.EMFILE})
		}, syscall.EMFILE},
		{"segment header write fails", func(fs *walfs.FaultFS) {
			fs.Inject(walfs.Fault{Op: walfs.OpWrite, Path: segmentName(3), ShortBytes: 10, Err: syscall.ENOSPC})
		}, syscall.ENOSPC},
		{"directory sync fails", func(fs *walfs.FaultFS) { fs.Inject(walfs.Fault{Op: walfs.OpSyncDir, Err: eio}) }, eio},
	}
	for _, tc := range cases {
		for _, crash := range []string{"durable only", "random"} {
			t.Run(tc.name+"/"+crash, func(t *testing.T) {
				const segBytes = 1024 // a new segment every few records
				fsys := walfs.NewFaultFS()
				l := openEmpty(t, fsys, segBytes)
				h := fill(t, l, 10, 90)
				tc.inject(fsys)
				var failure error
				for i := 11; i <= 200 && failure == nil; i++ {
					rec := payload(LSN(i), 90)
					lsn, err := l.Append(rec)
					if err != nil {
						failure = err
						break
					}
					h.recs[lsn] = rec
					if err := l.WaitDurable(context.Background(), lsn); err != nil {
						failure = err
						break
					}
					h.acked = lsn
				}
				if failure == nil {
					t.Fatal("the fault never surfaced")
				}
				if !errors.Is(failure, ErrFailed) || !errors.Is(failure, tc.cause) {
					t.Fatalf("error %v: want ErrFailed wrapping %v", failure, tc.cause)
				}
				var fe *FailedError
				if !errors.As(failure, &fe) || fe.Path == "" || !strings.HasPrefix(failure.Error(), "soundgate/wal: ") {
					t.Fatalf("error %q is not a *FailedError naming its file", failure)
				}
				// Fail closed, forever.
				if _, err := l.Append([]byte("after")); !errors.Is(err, ErrFailed) {
					t.Fatalf("Append after failure: %v, want ErrFailed", err)
				}
				if err := l.WaitDurable(context.Background(), l.Last()); l.Durable() < l.Last() && !errors.Is(err, ErrFailed) {
					t.Fatalf("WaitDurable after failure: %v, want ErrFailed", err)
				}
				if l.Err() == nil {
					t.Fatal("Err() is nil after a failure")
				}
				if err := l.Close(); !errors.Is(err, ErrFailed) {
					t.Fatalf("Close of a failed log: %v, want ErrFailed", err)
				}
				var rng *rand.Rand
				if crash == "random" {
					rng = rand.New(rand.NewPCG(1, uint64(len(tc.name))))
				}
				fsys.Crash(rng)
				fsys.Restart()
				fsys.SetCapacity(0) // the operator freed space
				got := checkRecovered(t, fsys, segBytes, h)
				t.Logf("%v; recovered %d records, %d acknowledged", failure, got, h.acked)
			})
		}
	}
}

// TestSnapshotFaults: a failure while writing a snapshot or compacting fails the log
// closed; the previous snapshot and the log still recover everything acknowledged.
func TestSnapshotFaults(t *testing.T) {
	eio := syscall.EIO
	cases := []struct {
		name  string
		fault walfs.Fault
	}{
		{"snapshot write", walfs.Fault{Op: walfs.OpWrite, Path: ".tmp", ShortBytes: 3, Err: syscall.ENOSPC}},
		{"snapshot fsync", walfs.Fault{Op: walfs.OpSync, Path: ".tmp", Err: eio}},
		{"snapshot rename", walfs.Fault{Op: walfs.OpRename, Err: eio}},
		{"snapshot dir sync", walfs.Fault{Op: walfs.OpSyncDir, Err: eio}},
		{"compaction remove", walfs.Fault{Op: walfs.OpRemove, Path: ".wal", Err: eio}},
		{"compaction dir sync", walfs.Fault{Op: walfs.OpSyncDir, Skip: 1, Err: eio}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const segBytes = 1024
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, segBytes)
			h := fill(t, l, 40, 90)
			if err := l.Snapshot(20, []byte("state@20")); err != nil {
				t.Fatal(err)
			}
			fsys.Inject(tc.fault)
			err := l.Snapshot(35, []byte("state@35"))
			if !errors.Is(err, ErrFailed) {
				t.Fatalf("Snapshot with %s fault: %v, want ErrFailed", tc.name, err)
			}
			if _, err := l.Append([]byte("x")); !errors.Is(err, ErrFailed) {
				t.Fatalf("Append after a failed snapshot: %v", err)
			}
			l.Close()
			fsys.Crash(rand.New(rand.NewPCG(2, 3)))
			fsys.Restart()
			l2 := mustOpen(t, fsys, segBytes)
			defer l2.Close()
			r := replayAll(t, l2)
			if r.snapLSN != 20 && r.snapLSN != 35 {
				t.Fatalf("snapshot at %d, want 20 or 35", r.snapLSN)
			}
			if want := []byte("state@" + map[LSN]string{20: "20", 35: "35"}[r.snapLSN]); !bytes.Equal(r.state, want) {
				t.Fatalf("snapshot state %q, want %q", r.state, want)
			}
			last := r.snapLSN + LSN(len(r.lsns))
			if last < h.acked {
				t.Fatalf("recovered up to %d, acknowledged %d", last, h.acked)
			}
			for i, lsn := range r.lsns {
				if lsn != r.snapLSN+LSN(i)+1 || !bytes.Equal(r.recs[i], h.recs[lsn]) {
					t.Fatalf("record %d after snapshot %d is wrong", lsn, r.snapLSN)
				}
			}
		})
	}
}

// TestFailureNamesTheFile: the log's failure is the *FailedError of the operation that
// failed, naming it and the segment file (docs/wal.md, "Failing closed"), also when
// the segment was recovered by Open.
//
// Kills: impl/wal/log.go:Log.fail:boolean (a *FailedError wrapped again as "io" on the
// directory), impl/wal/log.go:open:remove-stmt (filePath not set for the recovered
// segment).
func TestFailureNamesTheFile(t *testing.T) {
	for _, reopen := range []bool{false, true} {
		t.Run(fmt.Sprintf("reopen=%v", reopen), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, 0)
			if reopen {
				appendWait(t, l, []byte("one"))
				l.Close()
				l = openEmpty(t, fsys, 0)
			}
			defer l.Close()
			err := failNext(t, fsys, l, walfs.Fault{Op: walfs.OpWrite, Path: segmentSuffix}, []byte("two"))
			var fe *FailedError
			if !errors.As(err, &fe) || fe.Op != "write" || fe.Path != segPath(1) || !errors.Is(err, walfs.ErrInjected) {
				t.Fatalf("WaitDurable = %v, want the *FailedError of the write to %s", err, segPath(1))
			}
			if l.Err() != err {
				t.Fatalf("Err() = %v, want the same failure", l.Err())
			}
		})
	}
}

// TestFailedLogIsNotSyncedAgain: after a failed fdatasync nothing is retried
// (docs/wal.md, "Failing closed": a retry could report success for data that never
// reached the disk). Close of a failed log only closes its files: no cut, no
// fdatasync.
//
// Kills: impl/wal/log.go:Log.Close:boolean (l.err == nil || l.allocEnd > 0: the cut
// and its fdatasync on a failed log).
func TestFailedLogIsNotSyncedAgain(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	appendWait(t, l, []byte("durable"))
	if err := failNext(t, fsys, l, walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix}, []byte("lost")); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable = %v, want the fdatasync failure", err)
	}
	syncs, truncs := fsys.Ops(walfs.OpSync), fsys.Ops(walfs.OpTruncate)
	if err := l.Close(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Close = %v, want the log's failure", err)
	}
	if fsys.Ops(walfs.OpSync) != syncs || fsys.Ops(walfs.OpTruncate) != truncs {
		t.Fatalf("Close of a failed log did %d fdatasyncs and %d truncates, want none",
			fsys.Ops(walfs.OpSync)-syncs, fsys.Ops(walfs.OpTruncate)-truncs)
	}
}

// TestShortWriteFails: a write that stores fewer bytes than asked without an error
// fails the log (ErrFailed, naming the short write) instead of acknowledging a record
// that is not on disk.
//
// Kills: impl/wal/log.go:Log.writeBatch:remove-stmt 9be77926.
func TestShortWriteFails(t *testing.T) {
	fsys := &wrapFS{FaultFS: walfs.NewFaultFS(), wrap: func(_ string, f walfs.File) walfs.File { return shortWriteFile{f} }}
	l := mustOpen(t, fsys, 1024)
	defer l.Close()
	replayAll(t, l)
	lsn, err := l.Append(payload(1, 50))
	if err != nil {
		t.Fatal(err)
	}
	err = l.WaitDurable(context.Background(), lsn)
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "short write: 69 of 70 bytes") {
		t.Fatalf("WaitDurable = %v, want ErrFailed for a short write", err)
	}
	if d := l.Durable(); d != 0 {
		t.Fatalf("Durable = %d after a short write, want 0", d)
	}
}

// TestFileHandlesClosed: every file handle the log opens is closed exactly once, by
// Close, by the operation that failed, or by an Open that refuses: a failed log or a
// failed Open must not leak descriptors (a gate restarts its log in the same process).
//
// Kills: impl/wal/log.go:Log.createSegment:remove-call (f.Close() after a failed
// header write, fdatasync or directory sync: three mutants) and remove-stmt (l.file =
// nil after a failed fdatasync or directory sync: Close then closed the handle a
// second time), impl/wal/log.go:open:remove-call (f.Close() when the fdatasync of the
// recovered segment fails), impl/wal/log.go:Log.Close:remove-stmt (the Close of the
// active segment), impl/wal/log.go:Log.writeBatch:remove-stmt (l.file = nil once the
// full segment is closed: a failed createSegment then left it for Close to close
// again), impl/wal/snapshot.go:Log.writeSnapshot:remove-call (f.Close() after a failed
// write or fdatasync of the snapshot: two mutants).
func TestFileHandlesClosed(t *testing.T) {
	const seg2 = "00000000000000000002.wal"
	cases := []struct {
		name     string
		fault    *walfs.Fault // injected before the record that starts segment 2
		openFail *walfs.Fault // injected before a reopen
		snapFail *walfs.Fault // injected before a snapshot
	}{
		{name: "clean life"},
		{name: "segment header write fails", fault: &walfs.Fault{Op: walfs.OpWrite, Path: seg2}},
		{name: "segment header fdatasync fails", fault: &walfs.Fault{Op: walfs.OpSync, Path: seg2}},
		{name: "directory sync at a new segment fails", fault: &walfs.Fault{Op: walfs.OpSyncDir}},
		{name: "open: fdatasync of the recovered segment fails", openFail: &walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix}},
		{name: "open: the first segment cannot be written", openFail: &walfs.Fault{Op: walfs.OpWrite}},
		{name: "snapshot write fails", snapFail: &walfs.Fault{Op: walfs.OpWrite, Path: tmpSuffix}},
		{name: "snapshot fdatasync fails", snapFail: &walfs.Fault{Op: walfs.OpSync, Path: tmpSuffix}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHandleFS()
			l := openEmpty(t, h, 1024)
			fill(t, l, 8, 104)
			if tc.fault != nil {
				if err := failNext(t, h, l, *tc.fault, payload(9, 104)); !errors.Is(err, ErrFailed) { // record 9 starts segment 2
					t.Fatalf("WaitDurable = %v, want the injected failure", err)
				}
			}
			if tc.snapFail != nil {
				h.Inject(*tc.snapFail)
				if err := l.Snapshot(8, []byte("state")); !errors.Is(err, ErrFailed) {
					t.Fatalf("Snapshot = %v, want the injected failure", err)
				}
			}
			l.Close()
			if tc.openFail != nil {
				if tc.openFail.Op == walfs.OpWrite { // a fresh directory: Open creates segment 1
					h = newHandleFS()
				}
				h.Inject(*tc.openFail)
				if l2, err := Open(testDir, Options{FS: h, SegmentBytes: 1024}); err == nil {
					l2.Close()
					t.Fatalf("Open succeeded despite the injected failure")
				}
			}
			if open, twice := h.leaks(); len(open) > 0 || len(twice) > 0 {
				t.Fatalf("handles left open: %v; closed twice: %v", open, twice)
			}
		})
	}
}
