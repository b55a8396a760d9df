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
// size grows to size if smaller; the new range reads as zeros). A file system
// without fallocate answers EOPNOTSUPP: ErrAllocateUnsupported.
func allocate(f *os.File, size int64) error {
	err := retryEINTR(f, func(fd int) error { return syscall.Fallocate(fd, 0, 0, size) })
	switch err {
	case nil:
		return nil
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		err = ErrAllocateUnsupported
	}
	return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
}

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
