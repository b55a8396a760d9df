//go:build linux

package walfs

import (
	"os"
	"syscall"
)

// fdatasync flushes the file's data and the metadata needed to read it back (its
// size), not its timestamps: one device flush, cheaper than fsync.
func fdatasync(f *os.File) error {
	if err := retryEINTR(f, func(fd int) error { return syscall.Fdatasync(fd) }); err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}

// allocate reserves the file's blocks up to size with fallocate(2) (mode 0: the
// size grows to size if smaller; the new range reads as zeros), then writes zeros
// over the range it added. fallocate alone leaves ext4 extents marked unwritten: the
// first fdatasync after a record lands in one must commit the extent's conversion to
// the journal, a second device write that a group commit would pay for. Written
// zeros are plain data; overwriting them needs no metadata (BenchmarkFdatasyncGroup
// compares the two; figures in docs/verify/wal.md). The zeros go to the device with
// the next fdatasync, once per reserved chunk.
// fallocate comes first so that a full disk fails here, before any zero is
// written. A file system without fallocate answers EOPNOTSUPP:
// ErrAllocateUnsupported.
func allocate(f *os.File, size int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	err = retryEINTR(f, func(fd int) error { return syscall.Fallocate(fd, 0, 0, size) })
	switch err {
	case nil:
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: ErrAllocateUnsupported}
	default:
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	for off := st.Size(); off < size; {
		n, err := f.WriteAt(zeros[:min(int64(len(zeros)), size-off)], off)
		if err != nil {
			return err
		}
		off += int64(n)
	}
	return nil
}

// zeros is what allocate writes, a piece at a time.
var zeros = make([]byte, 64<<10)

// retryEINTR runs call on f's descriptor (without racing a Close: RawConn.Control),
// again while it is interrupted by a signal, and returns its error.
func retryEINTR(f *os.File, call func(fd int) error) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		for {
			if serr = call(int(fd)); serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return serr
}

// flock takes an exclusive lock without waiting.
func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return &os.PathError{Op: "lock", Path: f.Name(), Err: ErrLocked}
	}
	if err != nil {
		return &os.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	return nil
}
