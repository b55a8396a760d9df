// Package walfs is the file-system seam of the write-ahead log (impl/wal).
//
// The log touches the disk only through the FS and File interfaces below, so that
// tests can replace the operating system with FaultFS: an in-memory file system that
// injects short writes, fsync errors and a full disk (ENOSPC), and that simulates a
// machine crash by dropping everything that was not made durable (file bytes not
// fdatasynced, directory entries not fsynced).
//
// OS is the real implementation: File.Sync is fdatasync(2) on Linux, and FS.SyncDir
// opens the directory and fsyncs it, which is what makes a create, rename or remove
// durable.
//
// The crash model of FaultFS (what survives a crash) is documented on FaultFS.Crash.
package walfs
