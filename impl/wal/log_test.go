package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// TestRoundTrip appends records of many sizes across segments, on the real file
// system and on FaultFS, and replays them after a clean close.
func TestRoundTrip(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys walfs.FS, dir string) {
		l := mustOpenIn(t, fsys, dir, 4096)
		replayAll(t, l)
		sizes := []int{0, 1, 15, 16, 17, 100, 1000, 3000, 5000, 0, 7}
		var want [][]byte
		for i := 0; i < 60; i++ {
			rec := payload(LSN(i+1), sizes[i%len(sizes)])
			lsn, err := l.Append(rec)
			if err != nil || lsn != LSN(i+1) {
				t.Fatalf("Append %d: lsn %d, err %v", i, lsn, err)
			}
			want = append(want, rec)
		}
		if err := l.WaitDurable(context.Background(), 60); err != nil {
			t.Fatal(err)
		}
		if got := l.Stats().Segments; got < 10 {
			t.Errorf("segments = %d, want many with 4 KiB segments", got)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := Open(dir, Options{FS: fsys, SegmentBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		defer l2.Close()
		r := replayAll(t, l2)
		if len(r.recs) != len(want) {
			t.Fatalf("replayed %d records, want %d", len(r.recs), len(want))
		}
		for i := range want {
			if r.lsns[i] != LSN(i+1) || !bytes.Equal(r.recs[i], want[i]) {
				t.Fatalf("record %d: lsn %d, %d bytes; want lsn %d, %d bytes", i, r.lsns[i], len(r.recs[i]), i+1, len(want[i]))
			}
		}
		if l2.Last() != 60 || l2.Durable() != 60 {
			t.Errorf("Last %d Durable %d, want 60 60", l2.Last(), l2.Durable())
		}
		lsn := appendWait(t, l2, []byte("after reopen"))
		if lsn != 61 {
			t.Errorf("next lsn %d, want 61", lsn)
		}
	})
}

// TestCloseFlushes: records appended but never waited for are written by Close.
func TestCloseFlushes(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	for i := 1; i <= 10; i++ {
		if _, err := l.Append(payload(LSN(i), 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsys.Crash(nil) // only what was synced survives
	fsys.Restart()
	l2 := mustOpen(t, fsys, 0)
	defer l2.Close()
	if r := replayAll(t, l2); len(r.recs) != 10 {
		t.Fatalf("replayed %d records after Close and crash, want 10", len(r.recs))
	}
	if _, err := l.Append([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
}

// TestCloseTwice: a second Close (a deferred Close after an explicit one) returns what
// the first returned: nil for a clean log, the failure for a failed one.
//
// Exercises impl/wal/log.go:Log.Close:unlock-drop (the Unlock before a second Close
// waits for the first): that mutant deadlocks, so it times out rather than being
// killed.
func TestCloseTwice(t *testing.T) {
	for _, failed := range []bool{false, true} {
		t.Run(fmt.Sprintf("failed=%v", failed), func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, 0)
			appendWait(t, l, []byte("one"))
			if failed {
				failNext(t, fsys, l, walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix}, []byte("two"))
			}
			first := l.Close()
			if second := l.Close(); second != first || (first == nil) == failed {
				t.Fatalf("Close = %v, then %v; want the same twice (failed log: %v)", first, second, failed)
			}
		})
	}
}

// TestBadInput: refused requests are typed and change nothing.
func TestBadInput(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	appendWait(t, l, []byte("a"))
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"record too large", func() error { _, err := l.Append(make([]byte, RecordBytesMax+1)); return err }, ErrRecordTooLarge},
		{"wait for unappended lsn", func() error { return l.WaitDurable(context.Background(), 99) }, ErrNotAppended},
		{"snapshot of unappended lsn", func() error { return l.Snapshot(99, nil) }, ErrBadSnapshot},
		{"snapshot of lsn 0", func() error { return l.Snapshot(0, nil) }, ErrBadSnapshot},
		{"replay after append", func() error { return l.Replay(nil, nil) }, ErrReplayed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if l.Last() != 1 || l.Err() != nil {
				t.Fatalf("state changed: last %d err %v", l.Last(), l.Err())
			}
		})
	}
	if _, err := l.Append(make([]byte, RecordBytesMax)); err != nil {
		t.Errorf("Append of exactly RecordBytesMax: %v", err)
	}
}

// TestAppendRefusedIsLSNZero: an Append that appends nothing returns LSN 0, "no
// record" (LSN's documentation), with its error: a record over the limit, a failed
// log, a closed log.
//
// Kills: impl/wal/log.go:Log.Append:constant (return 1 with the error: three mutants).
func TestAppendRefusedIsLSNZero(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	appendWait(t, l, []byte("one"))
	if lsn, err := l.Append(make([]byte, RecordBytesMax+1)); lsn != 0 || !errors.Is(err, ErrRecordTooLarge) {
		t.Errorf("too large: lsn %d, err %v; want 0, ErrRecordTooLarge", lsn, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lsn, err := l.Append([]byte("late")); lsn != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("closed: lsn %d, err %v; want 0, ErrClosed", lsn, err)
	}
	l = mustOpen(t, fsys, 0)
	defer l.Close()
	replayAll(t, l)
	if err := failNext(t, fsys, l, walfs.Fault{Op: walfs.OpSync, Path: segmentSuffix}, []byte("two")); !errors.Is(err, ErrFailed) {
		t.Fatalf("WaitDurable = %v, want the injected failure", err)
	}
	if lsn, err := l.Append([]byte("three")); lsn != 0 || !errors.Is(err, ErrFailed) {
		t.Errorf("failed: lsn %d, err %v; want 0, ErrFailed", lsn, err)
	}
}

// TestDocumentedDefaults: the defaults that docs/wal.md gives: segments of 64 MiB,
// at most 64 MiB waiting for the disk.
//
// Kills: the impl/wal/log.go:_:constant mutants of SegmentBytesDefault and
// PendingBytesMax.
func TestDocumentedDefaults(t *testing.T) {
	if SegmentBytesDefault != 64<<20 || PendingBytesMax != 64<<20 {
		t.Fatalf("SegmentBytesDefault %d, PendingBytesMax %d; docs/wal.md says 64 MiB each", SegmentBytesDefault, PendingBytesMax)
	}
	l := mustOpen(t, walfs.NewFaultFS(), 0)
	defer l.Close()
	if l.segmentBytes != SegmentBytesDefault || l.pendingMax != PendingBytesMax {
		t.Fatalf("Open with zero options: segment %d, pending max %d", l.segmentBytes, l.pendingMax)
	}
}

// TestSegmentBoundaries: a segment ends before the record that would take it past
// SegmentBytes (docs/wal.md, "On disk"), so a segment can be filled to exactly
// SegmentBytes, counting its 32-byte header; the first record of a segment stays in
// it even when it alone is larger. The same holds for the segment recovered at Open.
//
// Kills: impl/wal/log.go:Log.Append:boundary (activeLen+size >= segmentBytes: a
// segment never filled exactly; lsn >= activeFst: the oversized first record pushed
// out of its own segment), impl/wal/log.go:open:remove-stmt (activeLen not set for a
// new or a recovered segment; activeFst not set), impl/wal/log.go:open:constant (the
// new first segment listed as starting at LSN 2).
func TestSegmentBoundaries(t *testing.T) {
	const segBytes = 1024 // 32 + 8 × 124: records of 104 bytes fill it exactly
	type want struct {
		seg  uint64
		lsns []LSN
		end  int
	}
	cases := []struct {
		name   string
		reopen int   // records written in a first life, closed cleanly before the rest
		sizes  []int // payload sizes of the records, LSN 1 first
		want   []want
	}{
		{"filled exactly, then one more", 0, []int{104, 104, 104, 104, 104, 104, 104, 104, 0},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7, 8}, 1024}, {2, []LSN{9}, 52}}},
		{"filled exactly across a reopen", 4, []int{104, 104, 104, 104, 104, 104, 104, 104, 0},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7, 8}, 1024}, {2, []LSN{9}, 52}}},
		{"one byte over", 0, []int{104, 104, 104, 104, 104, 104, 104, 105},
			[]want{{1, []LSN{1, 2, 3, 4, 5, 6, 7}, 900}, {2, []LSN{8}, 157}}},
		{"oversized first record", 0, []int{2000, 10},
			[]want{{1, []LSN{1}, 2052}, {2, []LSN{2}, 62}}},
		{"second record overflows", 0, []int{500, 600},
			[]want{{1, []LSN{1}, 552}, {2, []LSN{2}, 652}}},
		{"overflow right after a reopen", 1, []int{1500, 10, 0},
			[]want{{1, []LSN{1}, 1552}, {2, []LSN{2, 3}, 82}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			l := openEmpty(t, fsys, segBytes)
			for i, size := range tc.sizes {
				if i == tc.reopen && i > 0 {
					if err := l.Close(); err != nil {
						t.Fatal(err)
					}
					l = openEmpty(t, fsys, segBytes)
				}
				appendWait(t, l, payload(LSN(i+1), size))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			names, _ := fsys.ReadDir(testDir)
			var segs []string
			for _, n := range names {
				if strings.HasSuffix(n, segmentSuffix) {
					segs = append(segs, n)
				}
			}
			if len(segs) != len(tc.want) {
				t.Fatalf("segments %v, want %d", segs, len(tc.want))
			}
			for _, w := range tc.want {
				lsns, end := segmentRecords(t, fsys, segPath(w.seg))
				if fmt.Sprint(lsns) != fmt.Sprint(w.lsns) || end != w.end {
					t.Errorf("segment %d: records %v ending at %d, want %v ending at %d", w.seg, lsns, end, w.lsns, w.end)
				}
			}
		})
	}
}

// TestReplayRechecks: Replay runs once (a second call is ErrReplayed, even before any
// Append) and re-verifies what Open verified: a record replaced since Open by an
// intact record with another LSN is refused, not replayed under the wrong number.
//
// Kills: impl/wal/log.go:Log.Replay:remove-stmt and constant (replayed not set),
// impl/wal/log.go:Log.Replay:boolean (!ok && r.lsn != want).
func TestReplayRechecks(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	fill(t, l, 3, 40)
	l.Close()

	l = openEmpty(t, fsys, 0)
	if err := l.Replay(nil, nil); !errors.Is(err, ErrReplayed) {
		t.Errorf("second Replay = %v, want ErrReplayed", err)
	}
	l.Close()

	l = mustOpen(t, fsys, 0)
	defer l.Close()
	b, _ := fsys.ReadFile(segPath(1))
	off := segmentHeaderBytes + recordHeaderBytes + 40 // record 2
	swapped := appendRecord(nil, 7, payload(7, 40))
	f, err := fsys.OpenAppend(segPath(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(swapped, int64(off)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if r, ok := decodeRecord(b, off); !ok || r.lsn != 2 {
		t.Fatalf("the test expected record 2 at offset %d", off)
	}
	var got []LSN
	err = l.Replay(nil, func(lsn LSN, _ []byte) error { got = append(got, lsn); return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Replay of a record replaced since Open = %v (replayed %v), want ErrCorrupt", err, got)
	}
}

// TestSecondOpenRefused: a directory has one writer; a second Open is refused with
// ErrLocked until the first closes (or its process dies: the lock goes with it).
func TestSecondOpenRefused(t *testing.T) {
	onBothFS(t, func(t *testing.T, fsys walfs.FS, dir string) {
		l, err := Open(dir, Options{FS: fsys})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir, Options{FS: fsys}); !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open: %v, want ErrLocked", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := Open(dir, Options{FS: fsys})
		if err != nil {
			t.Fatalf("Open after Close: %v", err)
		}
		l2.Close()
	})
}

func ExampleOpen() {
	fsys := walfs.NewFaultFS() // walfs.OS{} (the default) in production
	l, err := Open("/gate/wal", Options{FS: fsys})
	if err != nil {
		panic(err)
	}
	_ = l.Replay(nil, func(lsn LSN, rec []byte) error { return nil })
	lsn, _ := l.Append([]byte(`admit r1 k1`))
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		panic(err) // the gate answers `unavailable`
	}
	fmt.Println("durable up to", l.Durable())
	_ = l.Close()
	// Output: durable up to 1
}
