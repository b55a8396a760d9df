package wal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// benchDirEnv names a directory on the disk to measure; the default is the test's
// temporary directory. Measure on a real disk, not tmpfs: the figures are fdatasyncs.
const benchDirEnv = "SOUNDGATE_WAL_BENCH_DIR"

// benchRecordBytes is the payload of a benchmark record, about one admit command.
const benchRecordBytes = 64

func benchDir(b *testing.B) string {
	if d := os.Getenv(benchDirEnv); d != "" {
		dir, err := os.MkdirTemp(d, "walbench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// rawFile creates the plain file at path that a reference benchmark writes and syncs
// without a log around it; it is closed when the benchmark ends.
func rawFile(b *testing.B, path string) walfs.File {
	f, err := walfs.OS{}.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// BenchmarkAppendWait measures the log alone: each operation is one Append and its
// WaitDurable, issued by N concurrent waiters that share group commits. It reports
// records/s, the latency percentiles of one operation, and records per fdatasync.
func BenchmarkAppendWait(b *testing.B) {
	for _, waiters := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("waiters=%d", waiters), func(b *testing.B) {
			l, err := Open(benchDir(b), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if err := l.Replay(nil, nil); err != nil {
				b.Fatal(err)
			}
			rec := make([]byte, benchRecordBytes)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Value
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < waiters; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						t0 := time.Now()
						if err := appendDurable(l, rec); err != nil {
							failed.Store(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			slices.Sort(lat)
			st := l.Stats()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
			b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
			b.ReportMetric(float64(st.Records)/float64(max(st.Syncs, 1)), "records/sync")
		})
	}
}

// BenchmarkFdatasync is the reference: one 64-byte append and one fdatasync per
// operation on the same disk, with no log around it. Its p50 is the floor of a lone
// waiter's latency in BenchmarkAppendWait.
func BenchmarkFdatasync(b *testing.B) {
	f := rawFile(b, filepath.Join(benchDir(b), "raw"))
	rec := make([]byte, benchRecordBytes+recordHeaderBytes)
	benchWriteSync(b, f, func(int) error { _, err := f.Write(rec); return err })
}

// BenchmarkFdatasyncReserved is the reference for the log as it writes: one 64-byte
// write into space reserved with Allocate (the file's size does not change) and one
// fdatasync per operation. It is the lower floor: the fdatasync has no size to write
// back (docs/wal.md, reserved space).
func BenchmarkFdatasyncReserved(b *testing.B) {
	f := rawFile(b, filepath.Join(benchDir(b), "raw-reserved"))
	rec := make([]byte, benchRecordBytes+recordHeaderBytes)
	if err := f.Allocate(int64(b.N+1) * int64(len(rec))); err != nil {
		b.Skipf("cannot reserve space here: %v", err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	benchWriteSync(b, f, func(i int) error { _, err := f.WriteAt(rec, int64(i)*int64(len(rec))); return err })
}

// benchWriteSync times write(i) followed by an fdatasync of f, b.N times, and reports
// the latency percentiles.
func benchWriteSync(b *testing.B, f walfs.File, write func(i int) error) {
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := write(i); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkAppend is Append alone, the cost the server pays under its lock: records
// are made durable every appendWaitEvery appends with the timer stopped.
func BenchmarkAppend(b *testing.B) {
	const appendWaitEvery = 1024
	l, err := Open(benchDir(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := make([]byte, benchRecordBytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lsn, err := l.Append(rec)
		if err != nil {
			b.Fatal(err)
		}
		if i%appendWaitEvery == appendWaitEvery-1 {
			b.StopTimer()
			if err := l.WaitDurable(context.Background(), lsn); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
}

// BenchmarkLoneWaiter pairs, operation by operation, one raw append+fdatasync on a
// plain file with one Append+WaitDurable on the log, on the same disk at the same
// moments, so that the log's own overhead for a lone request shows despite a noisy
// machine: it reports both p50s and the p50 of the per-pair difference.
func BenchmarkLoneWaiter(b *testing.B) {
	dir := benchDir(b)
	f := rawFile(b, filepath.Join(dir, "raw"))
	l, err := Open(filepath.Join(dir, "log"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	rec := make([]byte, benchRecordBytes)
	raw := make([]byte, benchRecordBytes+recordHeaderBytes)
	rawLat := make([]time.Duration, b.N)
	logLat := make([]time.Duration, b.N)
	diff := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := f.Write(raw); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := appendDurable(l, rec); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		rawLat[i], logLat[i] = t1.Sub(t0), t2.Sub(t1)
		diff[i] = logLat[i] - rawLat[i]
	}
	b.StopTimer()
	slices.Sort(rawLat)
	slices.Sort(logLat)
	slices.Sort(diff)
	b.ReportMetric(float64(percentile(rawLat, 0.5).Microseconds()), "raw-p50-µs")
	b.ReportMetric(float64(percentile(logLat, 0.5).Microseconds()), "log-p50-µs")
	b.ReportMetric(float64(percentile(diff, 0.5).Microseconds()), "overhead-p50-µs")
}

// BenchmarkRecover measures Open plus Replay of a log of recoverRecords records
// (benchRecordBytes each, default 64 MiB segments, no snapshot): what a restart
// costs before the gate answers. It reports records replayed per second.
func BenchmarkRecover(b *testing.B) {
	const recoverRecords = 200_000
	dir := benchDir(b)
	l, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, benchRecordBytes)
	var lsn LSN
	for i := 0; i < recoverRecords; i++ {
		if lsn, err = l.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		b.Fatal(err)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := l.Replay(nil, func(LSN, []byte) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != recoverRecords {
			b.Fatalf("replayed %d records, want %d", n, recoverRecords)
		}
		l.Close()
	}
	b.ReportMetric(float64(recoverRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
