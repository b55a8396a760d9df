package wal

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// TestHistograms: the log's histograms count what it did. CommitRecords has one
// observation per group commit (Stats.Syncs) summing to the records made durable;
// Fdatasync one per fdatasync of a segment, timed (a disk that takes 2 ms per flush
// puts none under 1 ms), none of a snapshot; Snapshot one per snapshot committed.
func TestHistograms(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, fsys *walfs.FaultFS, l *Log)
		// the records made durable, the commits (nil: Stats.Syncs), the snapshots
		records   uint64
		commits   func(st Stats) uint64
		snapshots uint64
	}{
		{"one commit per record", func(t *testing.T, _ *walfs.FaultFS, l *Log) { fill(t, l, 10, 90) }, 10, nil, 0},
		{"a backlog shares commits", func(t *testing.T, _ *walfs.FaultFS, l *Log) { appendBacklog(t, l, 100, 90) }, 100, nil, 0},
		{"new segments", func(t *testing.T, _ *walfs.FaultFS, l *Log) { fill(t, l, 40, 200) }, 40, nil, 0},
		{"a snapshot", func(t *testing.T, fsys *walfs.FaultFS, l *Log) {
			fill(t, l, 10, 90)
			syncs := l.Histograms().Fdatasync.Snapshot().Count
			require.NoError(t, l.Snapshot(10, []byte("state")))
			require.Equal(t, syncs, l.Histograms().Fdatasync.Snapshot().Count, "a snapshot's fdatasyncs are not the records'")
		}, 10, nil, 1},
		{"a failed fdatasync", func(t *testing.T, fsys *walfs.FaultFS, l *Log) {
			fill(t, l, 5, 90)
			err := failNext(t, fsys, l, walfs.Fault{Op: walfs.OpSync, Path: ".wal", Err: syscall.EIO}, payload(6, 90))
			require.ErrorIs(t, err, ErrFailed)
		}, 5, func(Stats) uint64 { return 5 }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := walfs.NewFaultFS()
			fsys.SetSyncDelay(2 * time.Millisecond)
			l := openEmpty(t, fsys, 1024)
			defer l.Close()
			tc.run(t, fsys, l)
			st, h := l.Stats(), l.Histograms()
			commits := st.Syncs
			if tc.commits != nil {
				commits = tc.commits(st)
			}
			cr := h.CommitRecords.Snapshot()
			require.Equal(t, commits, cr.Count, "one observation per group commit")
			require.Equal(t, float64(tc.records), cr.Sum, "the records made durable")
			fd := h.Fdatasync.Snapshot()
			if tc.snapshots == 0 {
				require.Equal(t, uint64(fsys.Ops(walfs.OpSync)), fd.Count, "every fdatasync of a segment")
			}
			require.GreaterOrEqual(t, fd.Count, commits)
			require.Equal(t, uint64(0), fd.Counts[5], "none under 1 ms on a disk of 2 ms (bucket le=%v)", fd.Bounds[5])
			require.GreaterOrEqual(t, fd.Sum, 0.002*float64(fd.Count))
			require.Equal(t, tc.snapshots, h.Snapshot.Snapshot().Count)
		})
	}
}
