package node

import "testing"

// TestSnapshotDue: the compaction rule. A snapshot waits for `every` records and for
// as many records as the last snapshot held entries (runs and effects).
func TestSnapshotDue(t *testing.T) {
	for _, c := range []struct {
		name           string
		records, every uint64
		entries        int
		due            bool
	}{
		{"first snapshot after every records", 100, 100, 0, true},
		{"one record short", 99, 100, 0, false},
		{"fewer records than the last snapshot's entries", 1000, 100, 1001, false},
		{"as many records as its entries", 1000, 100, 1000, true},
		{"more than its entries but fewer than every", 99, 100, 10, false},
		{"every 1: each new record, once the entries are paid for", 1, 1, 1, true},
	} {
		if got := snapshotDue(c.records, c.every, c.entries); got != c.due {
			t.Errorf("%s: snapshotDue(%d, %d, %d) = %v, want %v", c.name, c.records, c.every, c.entries, got, c.due)
		}
	}
}
