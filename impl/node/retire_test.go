package node_test

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/stretchr/testify/require"
)

// retention is the tests' retention period; their clock is driven by hand and the
// node's own ticker is set to never fire during a test.
const retention = 10 * time.Second

func retainingConfig(now *atomic.Int64, l node.Log) node.Config {
	return node.Config{Log: l, Now: func() core.Time { return core.Time(now.Load()) },
		Retention: retention, RetireCheck: time.Hour}
}

func statusOf(t *testing.T, n *node.Node, r core.RunID) core.RunStatus {
	t.Helper()
	v, _ := status(t, n, r, "")
	return v.Status
}

// TestRetireDue: a finished run is retired once it has not changed for the retention
// period, and not before; a change restarts its clock; a run that is not finished is
// kept however old; each retirement is a log record.
func TestRetireDue(t *testing.T) {
	var now atomic.Int64
	lg := &memLog{}
	n := node.New(retainingConfig(&now, lg))
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpOpen, Run: "cancelled"})
	apply(t, n, core.Command{Op: core.OpCancel, Run: "cancelled"})
	apply(t, n, core.Command{Op: core.OpOpen, Run: "busy"})
	apply(t, n, cmd(core.OpAdmit, "busy", "k")) // admitted, not completed
	apply(t, n, core.Command{Op: core.OpOpen, Run: "done"})
	apply(t, n, cmd(core.OpAdmit, "done", "k"))

	now.Store(5_000)
	apply(t, n, core.Command{Op: core.OpComplete, Run: "done", Key: "k", Outcome: core.OutcomeOK})
	now.Store(9_999)
	require.Equal(t, 0, n.RetireDue(), "retired before the period passed")

	now.Store(10_000)
	records := len(lg.recs)
	require.Equal(t, 1, n.RetireDue())
	require.Equal(t, core.RunRetired, statusOf(t, n, "cancelled"))
	require.Equal(t, records+1, len(lg.recs), "a retirement is one record")
	require.Equal(t, core.RunActive, statusOf(t, n, "done"), "its clock restarted at 5000")

	now.Store(15_000)
	require.Equal(t, 1, n.RetireDue())
	require.Equal(t, core.RunRetired, statusOf(t, n, "done"))

	now.Store(1_000_000)
	require.Equal(t, 0, n.RetireDue())
	require.Equal(t, core.RunActive, statusOf(t, n, "busy"), "a run that is not finished was retired")
	a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "done"}})
	require.ErrorIs(t, a.Err, core.ErrRunRetired)
}

// TestRetirementSurvivesARestart: retirements are replayed from the log; a recovered
// node gives its finished runs a whole period from its start, never less.
func TestRetirementSurvivesARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var now atomic.Int64
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	n, err := node.Recover(l, retainingConfig(&now, nil))
	require.NoError(t, err)
	for _, r := range []core.RunID{"old", "young"} {
		apply(t, n, core.Command{Op: core.OpOpen, Run: r})
		a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpCancel, Run: r}})
		require.NoError(t, n.Durable(a.After))
		now.Add(8_000)
	}
	require.Equal(t, 1, n.RetireDue()) // "old", at 16000
	n.Close()
	require.NoError(t, l.Close())

	l, err = wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	defer l.Close()
	m, err := node.Recover(l, retainingConfig(&now, nil))
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, core.RunRetired, statusOf(t, m, "old"))
	now.Store(16_000 + 9_999)
	require.Equal(t, 0, m.RetireDue(), "a recovered node retired a run before a whole period from its start")
	now.Store(16_000 + 10_000)
	require.Equal(t, 1, m.RetireDue())
	require.Equal(t, core.RunRetired, statusOf(t, m, "young"))
}

// TestOrderedIDsRetireByWatermark: with OrderedIDs, each retirement moves the core's
// watermark (a record of a Retire with Upto) and lists nothing; a restart replays it;
// an id below it never opened is refused, one above is new.
func TestOrderedIDsRetireByWatermark(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var now atomic.Int64
	cfg := func() node.Config {
		c := retainingConfig(&now, nil)
		c.OrderedIDs = true
		return c
	}
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	n, err := node.Recover(l, cfg())
	require.NoError(t, err)
	for _, r := range []core.RunID{"0002", "0004"} {
		apply(t, n, core.Command{Op: core.OpOpen, Run: r})
		a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpCancel, Run: r}})
		require.NoError(t, n.Durable(a.After))
	}
	apply(t, n, core.Command{Op: core.OpOpen, Run: "0003"})
	a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "0003", "k")}) // admitted, not completed: not finished
	require.NoError(t, n.Durable(a.After))
	now.Store(int64(retention / time.Millisecond))
	require.Equal(t, 2, n.RetireDue())
	var listed int
	var upto core.RunID
	n.Inspect(func(g *core.Gate) { listed, _, upto = g.Retired() })
	require.Equal(t, 0, listed)
	require.Equal(t, core.RunID("0004"), upto)
	n.Close()
	require.NoError(t, l.Close())

	l, err = wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	defer l.Close()
	m, err := node.Recover(l, cfg())
	require.NoError(t, err)
	defer m.Close()
	for _, r := range []core.RunID{"0001", "0002", "0004"} {
		require.Equal(t, core.RunRetired, statusOf(t, m, r), "%s", r)
	}
	require.Equal(t, core.RunActive, statusOf(t, m, "0003"), "a run the gate holds below the watermark")
	a = m.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "0001"}})
	require.ErrorIs(t, a.Err, core.ErrRunRetired)
	apply(t, m, core.Command{Op: core.OpOpen, Run: "0005"})
}

// TestNoRetentionNoRetirement: with Retention 0 nothing is ever retired.
func TestNoRetentionNoRetirement(t *testing.T) {
	var now atomic.Int64
	n := node.New(node.Config{Now: func() core.Time { return core.Time(now.Load()) }})
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpCancel, Run: "r"})
	now.Store(1 << 40)
	require.Equal(t, 0, n.RetireDue())
	require.Equal(t, core.RunCancelled, statusOf(t, n, "r"))
}

// TestOnRetire: the node tells OnRetire's function of each run it retires, once,
// and of no other.
func TestOnRetire(t *testing.T) {
	var now atomic.Int64
	n := node.New(retainingConfig(&now, &memLog{}))
	defer n.Close()
	var told []core.RunID
	n.OnRetire(func(r core.RunID) { told = append(told, r) })
	apply(t, n, core.Command{Op: core.OpOpen, Run: "kept"})
	apply(t, n, cmd(core.OpAdmit, "kept", "k"))
	for _, r := range []core.RunID{"a", "b"} {
		apply(t, n, core.Command{Op: core.OpOpen, Run: r})
		apply(t, n, core.Command{Op: core.OpCancel, Run: r})
	}
	now.Store(int64(retention / time.Millisecond))
	require.Equal(t, 2, n.RetireDue())
	require.Equal(t, 0, n.RetireDue())
	require.ElementsMatch(t, []core.RunID{"a", "b"}, told)
}

// TestSnapshotKeepsRetiredIds: more retired ids than one chunk of a snapshot's writes
// (so that they are written in several) survive a snapshot and its recovery, each
// still refused.
func TestSnapshotKeepsRetiredIds(t *testing.T) {
	if testing.Short() {
		t.Skip("135,000 records")
	}
	dir := filepath.Join(t.TempDir(), "data")
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	cfg := node.Config{SnapshotEvery: 20000, SnapshotCheck: 2 * time.Millisecond}
	n, err := node.Recover(l, cfg)
	require.NoError(t, err)
	const ids = 45000 // 25 bytes each in the snapshot: more than its 1 MiB chunk
	id := func(i int) core.RunID { return core.RunID(fmt.Sprintf("retired-run-id-%09d", i)) }
	var last wal.LSN
	for i := range ids {
		apply(t, n, core.Command{Op: core.OpCancel, Run: id(i)})
		a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpRetire, Run: id(i)}})
		require.NoError(t, a.Err)
		last = a.After
	}
	require.NoError(t, n.Durable(last))
	for i := 0; l.Stats().SnapshotLSN <= last; i++ { // records, until a snapshot holds every retired id
		require.Less(t, i, 100000, "no snapshot after the retirements")
		a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: core.RunID(fmt.Sprint("pad-", i))}})
		require.NoError(t, a.Err)
		if i%1000 == 999 {
			require.NoError(t, n.Durable(a.After))
			time.Sleep(5 * time.Millisecond)
		}
	}
	want := state(t, n)
	n.Close()
	require.NoError(t, l.Close())

	l, err = wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	defer l.Close()
	m, err := node.Recover(l, cfg)
	require.NoError(t, err)
	defer m.Close()
	require.Equal(t, want, state(t, m))
	for _, i := range []int{0, ids / 2, ids - 1} {
		a := m.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: id(i)}})
		require.ErrorIs(t, a.Err, core.ErrRunRetired, "%s", id(i))
	}
}
