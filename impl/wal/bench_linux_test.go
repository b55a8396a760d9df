//go:build linux

package wal

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// BenchmarkFdatasyncGroup is a group commit's write as the gate makes it at 64
// clients (48 records, about 3 KiB, so nearly every group starts a new block), then
// an fdatasync, into space reserved two ways: by fallocate(2) alone, whose extents
// ext4 keeps marked unwritten until a write converts them (a journal commit in the
// next fdatasync), and by walfs Allocate, which also writes the zeros. It reports
// the latency percentiles and the CPU time per operation, most of it the kernel's.
func BenchmarkFdatasyncGroup(b *testing.B) {
	const groupBytes = 48 * (benchRecordBytes + recordHeaderBytes)
	for _, tc := range []struct {
		name    string
		reserve func(f walfs.File, fd uintptr, size int64) error
	}{
		{"fallocate", func(_ walfs.File, fd uintptr, size int64) error {
			return syscall.Fallocate(int(fd), 0, 0, size)
		}},
		{"Allocate", func(f walfs.File, _ uintptr, size int64) error { return f.Allocate(size) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(benchDir(b), "group")
			f, err := walfs.OS{}.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			fd, err := syscall.Open(path, syscall.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer syscall.Close(fd)
			if err := tc.reserve(f, uintptr(fd), int64(b.N+1)*groupBytes); err != nil {
				b.Skipf("cannot reserve space here: %v", err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			group := make([]byte, groupBytes)
			for i := range group {
				group[i] = byte(i)
			}
			var r0, r1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			benchWriteSync(b, f, func(i int) error { _, err := f.WriteAt(group, int64(i)*groupBytes); return err })
			syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
			cpu := time.Duration(r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}
