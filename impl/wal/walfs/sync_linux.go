//go:build linux

package walfs

import (
	"os"
	"syscall"
)

// fdatasync flushes the file's data and the metadata needed to read it back (its
// size), not its timestamps: one device flush, cheaper than fsync.
func fdatasync(f *os.File) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := raw.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// allocate reserves the file's blocks up to size with fallocate(2) (mode 0: the
// size grows to size if smaller; the new range reads as zeros). A file system
// without fallocate answers EOPNOTSUPP: ErrAllocateUnsupported.
func allocate(f *os.File, size int64) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := raw.Control(func(fd uintptr) {
		for {
			serr = syscall.Fallocate(int(fd), 0, 0, size)
			if serr != syscall.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	switch serr {
	case nil:
		return nil
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: ErrAllocateUnsupported}
	}
	return &os.PathError{Op: "fallocate", Path: f.Name(), Err: serr}
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
