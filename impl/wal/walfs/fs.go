package walfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// FS is the set of file-system operations the log uses. Paths are OS paths
// (filepath.Join of a directory and a base name).
type FS interface {
	// MkdirAll creates dir and its parents if they do not exist.
	MkdirAll(dir string) error
	// ReadDir returns the base names of the entries of dir, sorted.
	ReadDir(dir string) ([]string, error)
	// Create creates a new file for writing; it fails if the file exists. The file's
	// directory entry is durable only after SyncDir of its directory.
	Create(path string) (File, error)
	// OpenAppend opens an existing file for writing: Write appends at its end,
	// WriteAt writes anywhere, and Truncate and Allocate work on it.
	OpenAppend(path string) (File, error)
	// ReadFile returns the whole content of a file.
	ReadFile(path string) ([]byte, error)
	// Rename renames oldPath to newPath, replacing newPath; durable after SyncDir.
	Rename(oldPath, newPath string) error
	// Remove removes a file; durable after SyncDir.
	Remove(path string) error
	// SyncDir makes the directory's entries durable (fsync of the directory).
	SyncDir(dir string) error
	// Lock takes an exclusive lock on path (created if missing), held until the
	// returned Closer is closed or the process dies; it fails with ErrLocked while
	// another holder has it.
	Lock(path string) (io.Closer, error)
}

// ErrLocked is returned by Lock when another process (or handle) holds the lock.
var ErrLocked = errors.New("soundgate/walfs: locked by another process")

// ErrAllocateUnsupported is returned by File.Allocate where the file system (or the
// platform) cannot reserve space: the caller goes on without preallocation.
var ErrAllocateUnsupported = errors.New("soundgate/walfs: space preallocation not supported")

// File is an open file.
type File interface {
	// Write appends p at the end of what this handle wrote (from offset 0 for a new
	// file, from the end for OpenAppend). A short write returns n < len(p) and a
	// non-nil error; the n bytes may or may not have reached the file.
	Write(p []byte) (n int, err error)
	// WriteAt writes p at offset off, like Write in every other respect. The log
	// writes its records with it into space that Allocate reserved.
	WriteAt(p []byte, off int64) (n int, err error)
	// Allocate makes the file at least size bytes long, the new bytes reading as
	// zeros, and reserves their blocks (on Linux, fallocate(2) and then zeros
	// written, so that no extent is left marked unwritten); durable after Sync.
	// Overwriting allocated space keeps the file's size, so that an fdatasync after
	// it has no size to write back: on ext4 that is one device write less per
	// group commit. It returns ErrAllocateUnsupported where it cannot.
	Allocate(size int64) error
	// Sync makes the file's content durable (fdatasync on Linux).
	Sync() error
	// Truncate cuts the file to size bytes; durable after Sync.
	Truncate(size int64) error
	// Close closes the file. It does not sync.
	Close() error
}

// OS is the real file system. The zero value is ready to use.
type OS struct{}

var _ FS = OS{}

// MkdirAll creates dir with mode 0o700: the log holds every effect's result, for
// the gate's user alone.
func (OS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o700) }

// ReadDir lists dir's entry names, sorted.
func (OS) ReadDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

// Create creates path exclusively with mode 0o600. The file is not opened with
// O_APPEND, which would forbid WriteAt: Write writes at the handle's offset, which
// starts at 0 and advances.
func (OS) Create(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// OpenAppend opens an existing path for writing, its offset at the end.
func (OS) OpenAppend(path string) (File, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, err
	}
	return osFile{f}, nil
}

// ReadFile reads the whole file.
func (OS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Rename is os.Rename.
func (OS) Rename(oldPath, newPath string) error { return os.Rename(oldPath, newPath) }

// Remove is os.Remove.
func (OS) Remove(path string) error { return os.Remove(path) }

// SyncDir opens dir and fsyncs it.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	return errors.Join(serr, cerr)
}

// osFile is an *os.File seen through the seam; Sync is fdatasync.
type osFile struct{ f *os.File }

// Lock takes an exclusive, non-blocking advisory lock (flock) on path. The kernel
// releases it when the process dies, so a SIGKILLed gate never blocks its restart.
func (OS) Lock(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (o osFile) Write(p []byte) (int, error)              { return o.f.Write(p) }
func (o osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o osFile) Allocate(size int64) error                { return allocate(o.f, size) }
func (o osFile) Sync() error                              { return fdatasync(o.f) }
func (o osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o osFile) Close() error                             { return o.f.Close() }

// ReadAt is provided for tools; the log itself reads with ReadFile.
func (o osFile) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }

var _ io.ReaderAt = osFile{}

// Join is filepath.Join, re-exported so that callers of the seam need one import.
func Join(elem ...string) string { return filepath.Join(elem...) }
