package node_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// TestSnapshots: the snapshotter writes snapshots from a cut of the state, a run at a
// time, while the node goes on applying commands (some of them between two pieces of
// a cut, to the run it copies last), and a node recovered from the last snapshot and
// the records after it holds exactly the state of the node that wrote them.
func TestSnapshots(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := wal.Open(dir, wal.Options{SegmentBytes: 4 << 10})
	require.NoError(t, err)
	const runs = 16
	var n *node.Node
	var between atomic.Int64
	defer node.SetCutPieces(16, func() { // runs of 125 keys: copied in slices
		key := core.Key(fmt.Sprint("between-", between.Add(1)))
		err := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, core.RunID(fmt.Sprint("run-", runs-1)), key)}).Err
		if !errors.Is(err, node.ErrStopped) { // a snapshot in progress when the test closes the node
			assert.NoError(t, err)
		}
	})()
	cfg := node.Config{SnapshotEvery: 50, SnapshotCheck: 2 * time.Millisecond}
	n, err = node.Recover(l, cfg)
	require.NoError(t, err)
	defer n.Close() // before the pieces are restored, if the test fails
	for r := 0; r < runs; r++ {
		apply(t, n, core.Command{Op: core.OpOpen, Run: core.RunID(fmt.Sprint("run-", r))})
	}
	var last wal.LSN
	snaps := map[wal.LSN]bool{}
	for i := 0; i < 2000; i++ {
		run := core.RunID(fmt.Sprint("run-", i%runs))
		a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, run, core.Key(fmt.Sprint("k", i)))})
		require.NoError(t, a.Err)
		last = a.After
		if i%100 == 99 {
			require.NoError(t, n.Durable(last))
			time.Sleep(5 * time.Millisecond) // let the snapshotter catch up now and then
			snaps[l.Stats().SnapshotLSN] = true
		}
	}
	require.NoError(t, n.Durable(last))
	delete(snaps, 0)
	require.GreaterOrEqual(t, len(snaps), 2, "snapshots taken during the load: %v", snaps)
	require.Greater(t, between.Load(), int64(2*runs), "commands applied between the pieces of cuts")
	n.Close() // after it, a snapshot in progress applies nothing more
	want := state(t, n)
	require.NoError(t, l.Close()) // the log's own tests check what a snapshot deletes

	l, err = wal.Open(dir, wal.Options{SegmentBytes: 4 << 10})
	require.NoError(t, err)
	defer l.Close()
	m, err := node.Recover(l, cfg)
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, want, state(t, m), "the state recovered from the snapshot differs")
}
