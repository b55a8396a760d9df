package fuzz

import (
	"hash/crc32"
	"runtime"
	"testing"
	"time"
)

// Budgets per decoded line. The decoder's work is linear in the line (every loop is
// bounded by the bytes it reads, nesting by proto.DepthMax, and objects of many keys
// use a set), so these bounds are generous for a correct decoder and far too small for
// a quadratic or unbounded one on a long line.
const (
	allocBytesPerLineByte = 64       // heap bytes per input byte
	allocBytesBase        = 64 << 10 // plus this
	allocsPerLineByte     = 0.5      // allocations per input byte
	allocsBase            = 64       // plus this
	lineTimeMax           = 2 * time.Second
)

// sampled reports whether the costly resource checks run for this input: always for
// long inputs, for one in eight short ones (chosen by a hash, so a rerun of the same
// input checks the same way).
func sampled(data []byte) bool {
	return len(data) > 4096 || crc32.ChecksumIEEE(data)%8 == 0
}

// checkBudget runs f once and fails t if it allocated or took more than the per-line
// budget for an input of n bytes.
func checkBudget(t *testing.T, what string, n int, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	f()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	allocs := after.Mallocs - before.Mallocs
	bytes := after.TotalAlloc - before.TotalAlloc
	t.Logf("%s of %d bytes: %d allocations, %d bytes, %v", what, n, allocs, bytes, elapsed)
	if maxAllocs := uint64(allocsPerLineByte*float64(n)) + allocsBase; allocs > maxAllocs {
		t.Errorf("%s of %d bytes: %d allocations, budget %d", what, n, allocs, maxAllocs)
	}
	if maxBytes := uint64(allocBytesPerLineByte*n + allocBytesBase); bytes > maxBytes {
		t.Errorf("%s of %d bytes: %d bytes allocated, budget %d", what, n, bytes, maxBytes)
	}
	if elapsed > lineTimeMax {
		t.Errorf("%s of %d bytes took %v, budget %v", what, n, elapsed, lineTimeMax)
	}
}
