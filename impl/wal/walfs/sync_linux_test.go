//go:build linux

package walfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

// fiemap mirrors struct fiemap of linux/fiemap.h with room for a few extents.
type fiemap struct {
	start, length                      uint64
	flags, mapped, extentCount, unused uint32
	extents                            [16]fiemapExtent
}

type fiemapExtent struct {
	logical, physical, length uint64
	reserved64                [2]uint64
	flags                     uint32
	reserved                  [3]uint32
}

const (
	fsIocFiemap           = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync        = 0x1
	fiemapExtentUnwritten = 0x800
)

// extents maps the file's blocks (FS_IOC_FIEMAP, after syncing it) or says the
// file system cannot.
func extents(t *testing.T, f *osFile) []fiemapExtent {
	t.Helper()
	m := fiemap{length: ^uint64(0), flags: fiemapFlagSync, extentCount: 16}
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.f.Fd(), fsIocFiemap, uintptr(unsafe.Pointer(&m)))
	if errno != 0 {
		if errors.Is(errno, syscall.EOPNOTSUPP) || errors.Is(errno, syscall.ENOTTY) {
			skipUnlessRequired(t, "the file system of %s cannot map extents (FIEMAP: %v): the check needs ext4, xfs or btrfs", f.f.Name(), errno)
		}
		t.Fatalf("FIEMAP: %v", errno)
	}
	return m.extents[:m.mapped]
}

// skipUnlessRequired skips t where the file system lacks a feature the test needs,
// and fails it under CI (SOUNDGATE_REQUIRE_KERNEL=1, as the kernel tests do), so that
// the check cannot pass there by not running.
func skipUnlessRequired(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("SOUNDGATE_REQUIRE_KERNEL") == "1" {
		t.Fatalf(format+" (SOUNDGATE_REQUIRE_KERNEL=1: a failure)", args...)
	}
	t.Skipf(format, args...)
}

// TestAllocateWritesZeros: the real file system's Allocate grows the file with zeros
// and leaves no extent marked unwritten. An unwritten extent is what fallocate alone
// leaves on ext4 and xfs; writing a record into one makes the next fdatasync commit
// its conversion to the journal, which is what allocate exists to avoid.
func TestAllocateWritesZeros(t *testing.T) {
	path := filepath.Join(t.TempDir(), "seg")
	file, err := OS{}.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f := file.(osFile)
	if _, err := f.Write([]byte("header")); err != nil {
		t.Fatal(err)
	}
	const size = 300 << 10 // more than one piece of zeros
	if err := f.Allocate(size); err != nil {
		if errors.Is(err, ErrAllocateUnsupported) {
			skipUnlessRequired(t, "the file system of %s cannot reserve space: %v", path, err)
		}
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := OS{}.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != size || !bytes.HasPrefix(got, []byte("header")) || bytes.Count(got[6:], []byte{0}) != size-6 {
		t.Fatalf("after Allocate(%d): %d bytes, prefix %q, want the header then zeros", size, len(got), got[:min(len(got), 8)])
	}
	ext := extents(t, &f)
	if len(ext) == 0 {
		t.Fatal("FIEMAP mapped no extent: the zeros were not written")
	}
	var mapped uint64
	for _, e := range ext {
		if e.flags&fiemapExtentUnwritten != 0 {
			t.Errorf("extent at %d (+%d) is unwritten: a record written there costs the next fdatasync a journal commit", e.logical, e.length)
		}
		mapped += e.length
	}
	if mapped < size {
		t.Errorf("extents cover %d bytes of %d", mapped, size)
	}
	// Allocating less than the size changes nothing.
	if err := f.Allocate(10); err != nil {
		t.Fatal(err)
	}
	if got, _ := (OS{}).ReadFile(path); len(got) != size {
		t.Fatalf("Allocate(10) changed the size to %d", len(got))
	}
}
