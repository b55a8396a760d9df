package walfs

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"syscall"
	"testing"
)

func write(t *testing.T, f File, s string) {
	t.Helper()
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// syncedFile returns a FaultFS holding the file /d/a with content, content and
// directory entry durable, and the file's handle.
func syncedFile(t *testing.T, content string) (*FaultFS, File) {
	t.Helper()
	m := NewFaultFS()
	m.MkdirAll("/d")
	a, _ := m.Create("/d/a")
	write(t, a, content)
	a.Sync()
	m.SyncDir("/d")
	return m, a
}

// TestCrashDropsWhatWasNotSynced: the durability model, case by case.
func TestCrashDropsWhatWasNotSynced(t *testing.T) {
	m, a := syncedFile(t, "synced")
	write(t, a, "+lost")
	b, _ := m.Create("/d/b") // entry never synced
	write(t, b, "x")
	b.Sync()
	m.Crash(nil)
	if _, err := m.ReadFile("/d/a"); !errors.Is(err, ErrCrashed) {
		t.Errorf("read before Restart: %v, want ErrCrashed (the crashed program is dead)", err)
	}
	if err := m.Remove("/d/a"); !errors.Is(err, ErrCrashed) {
		t.Errorf("remove before Restart: %v, want ErrCrashed", err)
	}
	m.Restart()
	if got, _ := m.ReadFile("/d/a"); string(got) != "synced" {
		t.Errorf("a = %q, want the synced content only", got)
	}
	if _, err := m.ReadFile("/d/b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("b survived without a directory sync: %v", err)
	}
	if _, err := a.Write([]byte("z")); !errors.Is(err, ErrCrashed) {
		t.Errorf("old handle after crash: %v, want ErrCrashed", err)
	}
}

// TestCrashKeepsAPrefix: with a random source, a crash keeps a prefix of the
// unsynced bytes and a prefix of the unsynced directory changes.
func TestCrashKeepsAPrefix(t *testing.T) {
	lens := map[int]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		m, a := syncedFile(t, "0123")
		write(t, a, "456789")
		m.Rename("/d/a", "/d/b")
		m.Crash(rand.New(rand.NewPCG(seed, 0)))
		m.Restart()
		got, errA := m.ReadFile("/d/a")
		if errA != nil {
			got, _ = m.ReadFile("/d/b")
		}
		if !bytes.HasPrefix([]byte("0123456789"), got) || len(got) < 4 {
			t.Fatalf("seed %d: content %q is not a prefix that keeps the synced part", seed, got)
		}
		lens[len(got)] = true
	}
	if len(lens) < 5 {
		t.Errorf("crashes kept only lengths %v: the prefix is not random", lens)
	}
}

// TestCrashKeepsOrCutsATruncation: a file truncated below its synced content and
// not synced since comes back from a crash either whole (the synced content) or cut
// to the shortest length it was truncated to, with no write made since: both
// happen, nothing else does.
func TestCrashKeepsOrCutsATruncation(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(0); seed < 100; seed++ {
		m, a := syncedFile(t, "0123456789")
		a.Truncate(6)
		a.Truncate(3)
		write(t, a, "xy")
		m.Crash(rand.New(rand.NewPCG(seed, 0)))
		m.Restart()
		got, _ := m.ReadFile("/d/a")
		if string(got) != "0123456789" && string(got) != "012" {
			t.Fatalf("seed %d: content %q, want the synced content or its cut to 3 bytes", seed, got)
		}
		seen[string(got)] = true
	}
	if len(seen) != 2 {
		t.Errorf("crashes left only %v", seen)
	}
}

// TestFaults: injected faults fire once, on the matching operation, after Skip.
func TestFaults(t *testing.T) {
	m := NewFaultFS()
	m.MkdirAll("/d")
	f, _ := m.Create("/d/x.wal")
	m.Inject(Fault{Op: OpWrite, Path: ".wal", Skip: 1, ShortBytes: 2, Err: syscall.EIO})
	write(t, f, "ok")
	n, err := f.Write([]byte("abcdef"))
	if n != 2 || !errors.Is(err, syscall.EIO) {
		t.Fatalf("short write: n=%d err=%v", n, err)
	}
	write(t, f, "!") // one-shot
	if got, _ := m.ReadFile("/d/x.wal"); string(got) != "okab!" {
		t.Fatalf("content %q", got)
	}
	m.Inject(Fault{Op: OpSync})
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("sync fault: %v", err)
	}
	m.SetCapacity(7)
	n, err = f.Write([]byte("0123"))
	if n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("disk full: n=%d err=%v", n, err)
	}
}

// TestCrashAtOp: a scheduled crash fires at the n-th mutating operation.
func TestCrashAtOp(t *testing.T) {
	m := NewFaultFS()
	m.MkdirAll("/d")
	f, _ := m.Create("/d/a")
	m.SyncDir("/d")
	m.CrashAtOp(3, nil, nil)
	write(t, f, "1")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("2")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("third op: %v, want ErrCrashed", err)
	}
	if !m.Crashed() {
		t.Fatal("Crashed() is false")
	}
	m.Restart()
	if got, _ := m.ReadFile("/d/a"); string(got) != "1" {
		t.Fatalf("content after crash %q, want the synced %q", got, "1")
	}
}

// TestAllocateAndWriteAt: Allocate grows a file with zeros, WriteAt overwrites them
// without needing room, a full file system refuses to allocate, and SetAllocate(false)
// answers ErrAllocateUnsupported.
func TestAllocateAndWriteAt(t *testing.T) {
	m := NewFaultFS()
	m.MkdirAll("/d")
	f, _ := m.Create("/d/a")
	write(t, f, "hdr")
	if err := f.Allocate(10); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.ReadFile("/d/a"); !bytes.Equal(got, []byte("hdr\x00\x00\x00\x00\x00\x00\x00")) {
		t.Fatalf("after Allocate(10): %q", got)
	}
	if err := f.Allocate(4); err != nil { // never shrinks
		t.Fatal(err)
	}
	m.SetCapacity(10) // full: an overwrite of allocated space still fits
	if n, err := f.WriteAt([]byte("xyz"), 3); n != 3 || err != nil {
		t.Fatalf("overwrite at full capacity: n=%d err=%v", n, err)
	}
	if err := f.Allocate(11); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Allocate past capacity: %v, want ENOSPC", err)
	}
	if n, err := f.WriteAt([]byte("12"), 9); n != 1 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write across the end at full capacity: n=%d err=%v, want 1 and ENOSPC", n, err)
	}
	if got, _ := m.ReadFile("/d/a"); string(got) != "hdrxyz\x00\x00\x001" {
		t.Fatalf("content %q", got)
	}
	m.SetAllocate(false)
	if err := f.Allocate(20); !errors.Is(err, ErrAllocateUnsupported) {
		t.Fatalf("Allocate with SetAllocate(false): %v", err)
	}
	if m.Ops(OpAllocate) != 3 {
		t.Errorf("Ops(OpAllocate) = %d, want 3 (the unsupported call is not an operation)", m.Ops(OpAllocate))
	}
}

// TestCrashKeepsAPrefixOfWrites: with overwrites, a crash keeps the durable content
// plus a prefix of the writes since the last Sync, applied in order: the reserved
// zeros of an Allocate and the records written over them.
func TestCrashKeepsAPrefixOfWrites(t *testing.T) {
	writes := []struct {
		off int64
		s   string
	}{{4, "AAAA"}, {8, "BB"}, {4, "C"}}
	// Every state a prefix can leave, from the synced "0123" on: the allocation
	// (zeros to 12) first, byte by byte, then each write byte by byte.
	valid := map[string]bool{}
	state := []byte("0123")
	valid[string(state)] = true
	for i := 4; i < 12; i++ {
		state = append(state, 0)
		valid[string(state)] = true
	}
	for _, w := range writes {
		for i := range len(w.s) {
			state[w.off+int64(i)] = w.s[i]
			valid[string(state)] = true
		}
	}
	seen := map[string]bool{}
	for seed := uint64(0); seed < 300; seed++ {
		m, f := syncedFile(t, "0123")
		if err := f.Allocate(12); err != nil {
			t.Fatal(err)
		}
		for _, w := range writes {
			if _, err := f.WriteAt([]byte(w.s), w.off); err != nil {
				t.Fatal(err)
			}
		}
		m.Crash(rand.New(rand.NewPCG(seed, 1)))
		m.Restart()
		got, _ := m.ReadFile("/d/a")
		if !valid[string(got)] {
			t.Fatalf("seed %d: %q is not the synced content plus a prefix of the writes", seed, got)
		}
		seen[string(got)] = true
	}
	if len(seen) < len(valid)/2 {
		t.Errorf("crashes left %d of the %d possible states: the prefix is not random", len(seen), len(valid))
	}
}
