package main

import "testing"

// TestSnapshotDue: the compaction rule of serve. A snapshot waits for `every` records
// and for as many bytes of log as the last snapshot held.
func TestSnapshotDue(t *testing.T) {
	for _, c := range []struct {
		name                  string
		records, bytes, every uint64
		lastSnapBytes         int
		due                   bool
	}{
		{"first snapshot after every records", 100, 6400, 100, 0, true},
		{"one record short", 99, 6336, 100, 0, false},
		{"the log since is smaller than the last snapshot", 1000, 64000, 100, 64001, false},
		{"as large as the last snapshot", 1000, 64000, 100, 64000, true},
		{"larger than the snapshot but too few records", 99, 1 << 20, 100, 1024, false},
		{"every 1: each new record, once the bytes are there", 1, 64, 1, 64, true},
	} {
		if got := snapshotDue(c.records, c.bytes, c.every, c.lastSnapBytes); got != c.due {
			t.Errorf("%s: snapshotDue(%d, %d, %d, %d) = %v, want %v", c.name, c.records, c.bytes, c.every, c.lastSnapBytes, got, c.due)
		}
	}
}
