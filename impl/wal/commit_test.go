package wal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

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
				if err := appendDurable(l, []byte("decision")); err != nil {
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

// TestContextDoneWhileALeaderWrites: a waiter whose context is already done when
// it would sleep (another waiter leads the commit) returns the context's error at
// once, leaves no sleeper counted behind, and its record still becomes durable.
// Unlike TestWaitDurableContext it needs no timing: the leader is held inside its
// write until the waiter has returned, so the mutation runs can keep it (its name
// must not match the -skip pattern TestWaitDurableContext of make mutation-wal).
//
// Kills: impl/wal/log.go:Log.WaitDurable:remove-call (the Lock in the context branch:
// an unlock of an unlocked mutex), remove-stmt and arith (sleeping not decremented,
// or incremented).
func TestContextDoneWhileALeaderWrites(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	defer l.Close()
	replayAll(t, l)
	first, leader, release := holdLeader(t, h, l, []byte("first"))
	defer release()
	// One waiter for a record in the commit in flight, one for a record behind it.
	for _, lsn := range []LSN{first, first + 1} {
		if lsn > first {
			if _, err := l.Append([]byte("behind")); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := l.WaitDurable(ctx, lsn); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitDurable(%d) with a done context = %v, want context.Canceled", lsn, err)
		}
		l.mu.Lock()
		asleep := l.sleeping
		l.mu.Unlock()
		if asleep != 0 {
			t.Fatalf("%d waiters counted asleep after the only one returned", asleep)
		}
	}
	release()
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := l.WaitDurable(context.Background(), first+1); err != nil {
		t.Fatalf("the record still becomes durable: %v", err)
	}
}

// TestCommitWakesOnlyItsWaiters: a group commit wakes the waiters whose records it
// wrote and no others. Records appended while a commit is in flight go in the next
// one, and their waiters sleep until that one ends, so that no waiter wakes for a
// commit that does not hold its record.
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
// learns they are durable; the log refuses from then on; nothing panics (fail has
// closed the commit's channel, which the commit must then not close again).
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

// TestCloseWhileALeaderWrites: Close called while a waiter leads a commit waits for
// that commit, then writes what is still pending, and returns nil; every record
// appended before Close is durable and replayed by the next Open.
//
// Kills: impl/wal/log.go:Log.Close:remove-call (the Lock after waiting for the leader:
// an unlock of an unlocked mutex).
func TestCloseWhileALeaderWrites(t *testing.T) {
	h := newHandleFS()
	l := openEmpty(t, h, 0)
	_, leader, release := holdLeader(t, h, l, []byte("first"))
	defer release()
	if _, err := l.Append([]byte("second")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	// Close has begun once closing is set; with the leader held it then waits for
	// the commit in flight.
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		closing := l.closing
		l.mu.Unlock()
		if closing {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("Close did not start")
		}
	}
	release()
	if err := <-leader; err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close = %v", err)
	}
	l = mustOpen(t, h, 0)
	defer l.Close()
	if r := replayAll(t, l); fmt.Sprint(r.lsns) != "[1 2]" {
		t.Fatalf("replayed %v, want [1 2]", r.lsns)
	}
}

// TestLargeBatch: a backlog larger than one buffer is written as several chunks and
// made durable by a single fdatasync; all of it survives a crash.
func TestLargeBatch(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 0)
	writes, syncs := fsys.Ops(walfs.OpWrite), fsys.Ops(walfs.OpSync)
	const n, size = 3000, 1000 // about 3 MiB: three chunks
	appendBacklog(t, l, n, size)
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

// TestBacklogWrittenInChunks: a large backlog is written as chunks of at most
// chunkBytesMax bytes, one write each, never copied into one growing buffer.
//
// Kills: impl/wal/log.go:Log.Append:arith (len - size > chunkBytesMax: chunks grow past
// the limit).
func TestBacklogWrittenInChunks(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 0)
	defer l.Close()
	replayAll(t, l)
	appendBacklog(t, l, 3000, 1000) // about 3 MiB
	h.mu.Lock()
	defer h.mu.Unlock()
	var data []int
	for _, n := range h.writes {
		if n != segmentHeaderBytes {
			data = append(data, n)
		}
	}
	if len(data) < 3 {
		t.Fatalf("3 MiB written in %d writes, want chunks of at most %d bytes", len(data), chunkBytesMax)
	}
	for _, n := range data {
		if n > chunkBytesMax {
			t.Fatalf("a write of %d bytes, over chunkBytesMax (%d)", n, chunkBytesMax)
		}
	}
}

// TestSpareBuffersBounded: the written chunk buffers kept for reuse are bounded
// (spareBuffersMax), also after a backlog of many chunks was written in one commit:
// the memory a log holds between commits does not grow with its largest backlog.
//
// Kills: impl/wal/log.go:Log.commitLocked:boolean (cap <= 4 MiB || len(spare) < 4:
// every buffer of up to 4 MiB kept, here ten of them).
func TestSpareBuffersBounded(t *testing.T) {
	l := mustOpen(t, walfs.NewFaultFS(), 0)
	defer l.Close()
	replayAll(t, l)
	appendBacklog(t, l, 10*chunkBytesMax/1000, 1000) // ten chunks or more
	l.mu.Lock()
	n := len(l.spare)
	l.mu.Unlock()
	if n > spareBuffersMax {
		t.Fatalf("%d spare buffers kept after a commit of ten chunks, want at most %d", n, spareBuffersMax)
	}
}

// TestStatsBytes: Stats.Bytes grows by exactly the bytes of the records written
// (header and payload of each).
//
// Kills: impl/wal/log.go:Log.writeBatch:remove-stmt 9b715ea5 and arith e3e1cfd4.
func TestStatsBytes(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 1<<20)
	defer l.Close()
	replayAll(t, l)
	var want uint64
	for i, size := range []int{0, 1, 100, 5000} {
		appendWait(t, l, payload(LSN(i+1), size))
		want += uint64(recordHeaderBytes + size)
		if got := l.Stats().Bytes; got != want {
			t.Fatalf("after record %d Stats.Bytes = %d, want %d", i+1, got, want)
		}
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

// TestBackPressureEdges: at most pendingMax bytes wait for the disk; Append does no
// I/O until the next record would take the backlog past it ("beyond it, Append
// writes the backlog itself"), so a backlog of exactly pendingMax waits. A record
// larger than the limit on its own is appended (nothing is pending to write first),
// also right after a commit.
//
// Kills: impl/wal/log.go:Log.Append:boundary (pendBytes >= 0: a commit of nothing, a
// panic; pendBytes+size >= pendingMax: a full backlog written one record early),
// impl/wal/log.go:Log.commitLocked:constant (pendBytes = 1 after a commit).
func TestBackPressureEdges(t *testing.T) {
	fsys := walfs.NewFaultFS()
	l := mustOpen(t, fsys, 0)
	defer l.Close()
	replayAll(t, l)
	const rec = recordHeaderBytes + 30
	l.mu.Lock()
	l.pendingMax = 2 * rec
	l.mu.Unlock()
	writes := func() int64 { return fsys.Ops(walfs.OpWrite) }
	w0 := writes()
	for i := 1; i <= 2; i++ {
		if _, err := l.Append(payload(LSN(i), 30)); err != nil {
			t.Fatal(err)
		}
	}
	if writes() != w0 {
		t.Fatalf("Append wrote with a backlog of exactly pendingMax bytes")
	}
	if _, err := l.Append(payload(3, 30)); err != nil {
		t.Fatal(err)
	}
	if writes() == w0 || l.Durable() != 2 {
		t.Fatalf("the record past pendingMax did not write the backlog first (durable %d)", l.Durable())
	}
	if err := l.WaitDurable(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	for i := 4; i <= 5; i++ { // each alone larger than pendingMax, nothing pending
		lsn, err := l.Append(payload(LSN(i), 500))
		if err != nil {
			t.Fatal(err)
		}
		if err := l.WaitDurable(context.Background(), lsn); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendWaitsForTheWriter: an Append over the pending bound while another
// goroutine writes a batch waits for that write (back-pressure) and returns once it
// is done; it does not hold the log's lock while it waits.
//
// Kills: impl/wal/log.go:Log.Append:wait-drop 8429e4d7 (it spins holding the lock,
// and the writer can never finish).
func TestAppendWaitsForTheWriter(t *testing.T) {
	h := newHandleFS()
	l := mustOpen(t, h, 1<<20) // not closed on failure: Close would block on a lock held forever
	replayAll(t, l)
	l.mu.Lock()
	l.pendingMax = 300
	l.mu.Unlock()
	_, led, release := holdLeader(t, h, l, payload(1, 100)) // held inside the write of record 1's batch
	defer release()
	if _, err := l.Append(payload(2, 200)); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() {
		_, err := l.Append(payload(3, 200)) // 220 + 220 bytes pending: over the bound
		appended <- err
	}()
	select {
	case err := <-appended:
		t.Fatalf("Append over the bound returned (%v) while the writer held its batch", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	for _, ch := range []chan error{led, appended} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second): // under the mutation run's per-mutant timeout (about 15 s)
			t.Fatal("the writer or the waiting Append did not finish after the write was let go")
		}
	}
	if err := l.WaitDurable(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
