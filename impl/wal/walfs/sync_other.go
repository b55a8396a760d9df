//go:build !linux

package walfs

import "os"

// fdatasync falls back to fsync where fdatasync(2) is not available.
func fdatasync(f *os.File) error { return f.Sync() }

// allocate is not implemented off Linux: the log writes without preallocation.
func allocate(f *os.File, _ int64) error {
	return &os.PathError{Op: "fallocate", Path: f.Name(), Err: ErrAllocateUnsupported}
}

// flock is not implemented off Linux: two gates on one directory are not detected.
func flock(*os.File) error { return nil }
