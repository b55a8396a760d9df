package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

const testDir = "/wal"

func payload(lsn LSN, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(uint64(lsn)*31 + uint64(i)*7)
	}
	return b
}

type replayed struct {
	snapLSN LSN
	state   []byte
	lsns    []LSN
	recs    [][]byte
}

func replayAll(t *testing.T, l *Log) replayed {
	t.Helper()
	var r replayed
	err := l.Replay(func(upto LSN, state []byte) error {
		r.snapLSN, r.state = upto, append([]byte(nil), state...)
		return nil
	}, func(lsn LSN, rec []byte) error {
		r.lsns = append(r.lsns, lsn)
		r.recs = append(r.recs, append([]byte(nil), rec...))
		return nil
	})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return r
}

func mustOpen(t *testing.T, fsys walfs.FS, segBytes int64) *Log {
	t.Helper()
	l, err := Open(testDir, Options{FS: fsys, SegmentBytes: segBytes})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func appendWait(t *testing.T, l *Log, rec []byte) LSN {
	t.Helper()
	lsn, err := l.Append(rec)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		t.Fatalf("WaitDurable(%d): %v", lsn, err)
	}
	return lsn
}

// TestRoundTrip appends records of many sizes across segments, on the real file
// system and on FaultFS, and replays them after a clean close.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (walfs.FS, string)
	}{
		{"os", func(t *testing.T) (walfs.FS, string) { return walfs.OS{}, t.TempDir() }},
		{"fault", func(t *testing.T) (walfs.FS, string) { return walfs.NewFaultFS(), testDir }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
			l, err := Open(dir, Options{FS: fsys, SegmentBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
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

// TestGroupCommit: many concurrent waiters share fdatasyncs.
func TestGroupCommit(t *testing.T) {
	fsys := walfs.NewFaultFS()
	fsys.SetSyncDelay(2 * time.Millisecond)
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	const waiters, each = 64, 10
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for w := 0; w < waiters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				lsn, err := l.Append([]byte("decision"))
				if err == nil {
					err = l.WaitDurable(context.Background(), lsn)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := l.Stats()
	if st.Records != waiters*each {
		t.Fatalf("records %d, want %d", st.Records, waiters*each)
	}
	// With a 2 ms sync and 64 waiters, batches hold many records each.
	if st.Syncs*4 > st.Records {
		t.Errorf("%d syncs for %d records: waiters do not share syncs", st.Syncs, st.Records)
	}
	t.Logf("%d records in %d group commits (%.1f per sync)", st.Records, st.Syncs, float64(st.Records)/float64(st.Syncs))
}

// TestLoneWaiterSyncedAtOnce: with no other load, one record costs one sync and no
// timer delays it.
func TestLoneWaiterSyncedAtOnce(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	syncsBefore := fsys.Ops(walfs.OpSync)
	for i := 0; i < 20; i++ {
		start := time.Now()
		appendWait(t, l, []byte("one"))
		if d := time.Since(start); d > time.Second {
			t.Fatalf("a lone record took %v to become durable", d)
		}
	}
	if got := fsys.Ops(walfs.OpSync) - syncsBefore; got != 20 {
		t.Errorf("%d syncs for 20 sequential records, want 20 (one each, none skipped)", got)
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

// TestWaitDurableContext: a waiter whose context ends while another leads the
// commit returns the context's error; its record still becomes durable.
func TestWaitDurableContext(t *testing.T) {
	fsys := walfs.NewFaultFS()
	fsys.SetSyncDelay(200 * time.Millisecond)
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	first, err := l.Append([]byte("slow"))
	if err != nil {
		t.Fatal(err)
	}
	leader := make(chan error, 1)
	go func() { leader <- l.WaitDurable(context.Background(), first) }() // leads: a 200 ms sync
	time.Sleep(20 * time.Millisecond)
	lsn, err := l.Append([]byte("behind it"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	if err := l.WaitDurable(ctx, lsn); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want deadline exceeded", err)
	}
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		t.Fatalf("the record still becomes durable: %v", err)
	}
}

// wrapFS is a FaultFS whose Create and OpenAppend hand out their files through wrap:
// the seam by which tests hold, count or shorten the log's file calls.
type wrapFS struct {
	*walfs.FaultFS
	wrap func(path string, f walfs.File) walfs.File
}

func (w *wrapFS) Create(path string) (walfs.File, error) {
	f, err := w.FaultFS.Create(path)
	if err != nil {
		return nil, err
	}
	return w.wrap(path, f), nil
}

func (w *wrapFS) OpenAppend(path string) (walfs.File, error) {
	f, err := w.FaultFS.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	return w.wrap(path, f), nil
}

// gatedSyncFS is a FaultFS whose file Syncs, while armed, wait for the test: each
// announces itself on entered and goes on when release receives.
type gatedSyncFS struct {
	wrapFS
	armed            atomic.Bool
	entered, release chan struct{}
}

func newGatedSyncFS() *gatedSyncFS {
	g := &gatedSyncFS{entered: make(chan struct{}), release: make(chan struct{})}
	g.wrapFS = wrapFS{FaultFS: walfs.NewFaultFS(), wrap: func(_ string, f walfs.File) walfs.File { return &gatedFile{f, g} }}
	return g
}

type gatedFile struct {
	walfs.File
	g *gatedSyncFS
}

func (f *gatedFile) Sync() error {
	if f.g.armed.Load() {
		f.g.entered <- struct{}{}
		<-f.g.release
	}
	return f.File.Sync()
}

// waitSleeping waits until n WaitDurable calls sleep.
func waitSleeping(t *testing.T, l *Log, n int) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		got := l.sleeping
		l.mu.Unlock()
		if got == n {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d waiters asleep, want %d", got, n)
		}
	}
}

// TestCommitWakesOnlyItsWaiters: a group commit wakes the waiters whose records it
// wrote and no others. Records appended while a commit is in flight go in the next
// one, and their waiters sleep until that one ends: with one channel for every
// commit they woke at each commit and slept again, a useless wake-up per request.
func TestCommitWakesOnlyItsWaiters(t *testing.T) {
	g := newGatedSyncFS()
	l := mustOpen(t, g, 0)
	defer l.Close()
	defer func() { // on a failure, let blocked Syncs finish so that Close returns
		g.armed.Store(false)
		for {
			select {
			case <-g.entered:
			case g.release <- struct{}{}:
			case <-time.After(100 * time.Millisecond):
				return
			}
		}
	}()
	g.armed.Store(true)
	ctx := context.Background()
	first, err := l.Append([]byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	const behind = 5
	errs := make(chan error, 2+behind)
	// A broken log must fail this test, not hang it: every wait is bounded.
	step := func(what string, ch any) {
		t.Helper()
		var ok bool
		switch c := ch.(type) {
		case chan struct{}: // a Sync that must start: receive its announcement
			select {
			case <-c:
				ok = true
			case <-time.After(5 * time.Second):
			}
		case chan<- struct{}: // a Sync that must be waiting: release it
			select {
			case c <- struct{}{}:
				ok = true
			case <-time.After(5 * time.Second):
			}
		}
		if !ok {
			t.Fatalf("%s: nothing happened in 5 s", what)
		}
	}
	wait := func(what string) {
		t.Helper()
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: WaitDurable did not return in 5 s", what)
		}
	}
	go func() { errs <- l.WaitDurable(ctx, first) }() // leads the first commit
	step("the first commit", g.entered)
	go func() { errs <- l.WaitDurable(ctx, first) }() // sleeps until the first commit ends
	waitSleeping(t, l, 1)
	for i := range behind {
		lsn, err := l.Append([]byte(fmt.Sprintf("behind %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		go func() { errs <- l.WaitDurable(ctx, lsn) }()
	}
	waitSleeping(t, l, 1+behind)

	step("ending the first commit", (chan<- struct{})(g.release))
	wait("the leader")
	wait("the waiter of the first commit")
	step("the commit of the records behind", g.entered) // by the committer
	l.mu.Lock()
	woke, asleep := l.stats.Wakeups, l.sleeping
	l.mu.Unlock()
	if woke != 1 || asleep != behind {
		t.Fatalf("after the first commit: %d wake-ups and %d asleep, want 1 and %d", woke, asleep, behind)
	}
	step("ending the second commit", (chan<- struct{})(g.release))
	for range behind {
		wait("a waiter of the second commit")
	}
	g.armed.Store(false)
	if st := l.Stats(); st.Wakeups != 1+behind || st.Syncs != 2 || l.Durable() != first+behind {
		t.Fatalf("wake-ups %d, syncs %d, durable %d; want %d, 2, %d", st.Wakeups, st.Syncs, l.Durable(), 1+behind, first+behind)
	}
}

// TestFailDuringCommit: the log fails (a snapshot's write) while a group commit is in
// flight, and the commit then ends well. Its records are on disk, so its leader
// learns they are durable; the log refuses from then on; nothing panics. The
// crash loop found a close of a nil channel on this path.
func TestFailDuringCommit(t *testing.T) {
	g := newGatedSyncFS()
	l := mustOpen(t, g, 0)
	defer l.Close()
	ctx := context.Background()
	first := appendWait(t, l, []byte("first"))
	g.armed.Store(true)
	lsn, err := l.Append([]byte("in flight"))
	if err != nil {
		t.Fatal(err)
	}
	led := make(chan error, 1)
	go func() { led <- l.WaitDurable(ctx, lsn) }()
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the commit did not start")
	}
	g.FaultFS.Inject(walfs.Fault{Op: walfs.OpWrite, Path: ".tmp"})
	if err := l.Snapshot(first, []byte("state")); !errors.Is(err, ErrFailed) {
		t.Fatalf("Snapshot with a failing write: %v, want ErrFailed", err)
	}
	g.armed.Store(false)
	g.release <- struct{}{}
	select {
	case err := <-led:
		if err != nil {
			t.Fatalf("the commit's leader: %v, want nil (its record was synced)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the commit's leader did not return")
	}
	if _, err := l.Append([]byte("after")); !errors.Is(err, ErrFailed) {
		t.Fatalf("Append on a failed log: %v, want ErrFailed", err)
	}
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

// TestSecondOpenRefused: a directory has one writer; a second Open is refused with
// ErrLocked until the first closes (or its process dies: the lock goes with it).
func TestSecondOpenRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   func(t *testing.T) (walfs.FS, string)
	}{
		{"os", func(t *testing.T) (walfs.FS, string) { return walfs.OS{}, t.TempDir() }},
		{"fault", func(t *testing.T) (walfs.FS, string) { return walfs.NewFaultFS(), testDir }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys, dir := tc.fs(t)
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
}

// TestLargeBatch: a backlog larger than one buffer is written as several chunks and
// made durable by a single fdatasync; all of it survives a crash.
func TestLargeBatch(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	replayAll(t, l)
	writes, syncs := fsys.Ops(walfs.OpWrite), fsys.Ops(walfs.OpSync)
	const n, size = 3000, 1000 // about 3 MiB: three chunks
	var lsn LSN
	for i := 1; i <= n; i++ {
		var err error
		if lsn, err = l.Append(payload(LSN(i), size)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		t.Fatal(err)
	}
	chunks := (n*(size+recordHeaderBytes) + chunkBytesMax - 1) / chunkBytesMax
	if got := fsys.Ops(walfs.OpWrite) - writes; got != int64(chunks) {
		t.Errorf("%d writes, want %d (one per chunk)", got, chunks)
	}
	if got := fsys.Ops(walfs.OpSync) - syncs; got != 1 {
		t.Errorf("%d fdatasyncs for one batch, want 1", got)
	}
	l.Close()
	fsys.Crash(nil)
	fsys.Restart()
	l2 := mustOpen(t, fsys, 0)
	defer l2.Close()
	r := replayAll(t, l2)
	if len(r.recs) != n || !bytes.Equal(r.recs[n-1], payload(n, size)) {
		t.Fatalf("replayed %d records, want %d", len(r.recs), n)
	}
}

// TestBackPressure: when PendingBytesMax bytes wait for the disk and nobody writes,
// Append writes the backlog itself; the backlog never exceeds the limit.
func TestBackPressure(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	l.pendingMax = 4096
	writes := fsys.Ops(walfs.OpWrite)
	var lsn LSN
	for i := 1; i <= 200; i++ {
		var err error
		if lsn, err = l.Append(payload(LSN(i), 100)); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		pend := l.pendBytes
		l.mu.Unlock()
		if pend > l.pendingMax {
			t.Fatalf("%d bytes pending, limit %d", pend, l.pendingMax)
		}
	}
	if fsys.Ops(walfs.OpWrite) == writes || l.Durable() == 0 {
		t.Fatal("no back-pressure: nothing was written while 24 KiB were appended")
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		t.Fatal(err)
	}
}
