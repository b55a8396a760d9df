package audit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/audit"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// Tests of the audit trail: what each change records, and that the file holds every
// entry exactly once across a crash, a torn line and the log's compaction.

// gate is a node over a log in dir with a trail beside it.
type gate struct {
	t     *testing.T
	dir   string
	log   *wal.Log
	trail *audit.Trail
	n     *node.Node
	now   atomic.Int64 // the node's deadline timer reads it on its own goroutine
}

func openGate(t *testing.T, dir string, snapshotEvery uint64) *gate {
	t.Helper()
	g := &gate{t: t, dir: dir}
	g.now.Store(1000)
	var err error
	g.log, err = wal.Open(dir, wal.Options{SegmentBytes: 1024}) // small: compaction drops segments
	require.NoError(t, err)
	g.trail, err = audit.Open(filepath.Join(dir, audit.FileName), g.log.WaitDurable, nil)
	require.NoError(t, err)
	g.n, err = node.Recover(g.log, node.Config{Audit: g.trail, SnapshotEvery: snapshotEvery, SnapshotCheck: time.Millisecond,
		Now: func() core.Time { return core.Time(g.now.Load()) }})
	require.NoError(t, err)
	return g
}

// apply applies c, requires it applied, and waits until its answer may be sent.
func (g *gate) apply(c core.Command) {
	g.t.Helper()
	g.now.Add(1)
	a := g.n.Apply(node.Request{Cmd: c})
	require.NoError(g.t, a.Err, "%+v", c)
	require.NoError(g.t, g.n.Durable(a.After))
}

// close stops the node, then the trail and the log, as the gate's shutdown does.
func (g *gate) close() {
	g.n.Close()
	require.NoError(g.t, g.trail.Close())
	require.NoError(g.t, g.log.Close())
}

// entries reads the trail's file, as "lsn action run[/key] by reason [closed]".
func entries(t *testing.T, dir, run string) []string {
	t.Helper()
	var out []string
	require.NoError(t, audit.Read(filepath.Join(dir, audit.FileName), run, func(e audit.Entry) error {
		s := fmt.Sprintf("%d %s %s", e.LSN, e.Action, e.Run)
		if e.Key != "" {
			s += "/" + e.Key
		}
		s += fmt.Sprintf(" by=%s reason=%s closed=%v", e.By, e.Reason, e.Closed)
		if e.Description != "" {
			s += " desc=" + e.Description
		}
		out = append(out, s)
		return nil
	}))
	return out
}

// script is a run of changes of every kind the trail records, and some it does not.
func script(g *gate) {
	g.apply(core.Command{Op: core.OpOpen, Run: "a"})                                                              // 1
	g.apply(core.Command{Op: core.OpAdmit, Run: "a", Key: "pay", Epoch: 1, Gated: true, Description: "pay ACME"}) // 2
	g.apply(core.Command{Op: core.OpDecide, Run: "a", Key: "pay", Decision: core.Approve, Reason: "ok", By: "alice"})
	g.apply(core.Command{Op: core.OpAdmit, Run: "a", Key: "x", Epoch: 1, Gated: true})
	g.apply(core.Command{Op: core.OpAdmit, Run: "a", Key: "y", Epoch: 1, Gated: true})
	g.apply(core.Command{Op: core.OpDecide, Run: "a", Key: "x", Decision: core.Reject, By: "bob"}) // 6
	g.apply(core.Command{Op: core.OpOpen, Run: "b"})
	g.apply(core.Command{Op: core.OpAdmit, Run: "b", Key: "k", Epoch: 1, Gated: true})
	g.apply(core.Command{Op: core.OpFence, Run: "b", Reason: "new attempt", By: "ops"}) // 9
	g.apply(core.Command{Op: core.OpCancel, Run: "b", By: "ops"})                       // 10
	g.apply(core.Command{Op: core.OpOpen, Run: "c", Deadline: core.Time(g.now.Load()) + 3})
	g.apply(core.Command{Op: core.OpAdmit, Run: "c", Key: "k", Epoch: 1, Gated: true})
	g.now.Add(10)
	g.apply(core.Command{Op: core.OpAdmit, Run: "c", Key: "late", Epoch: 1}) // 13: times c out first
}

var scripted = []string{
	"3 approve a/pay by=alice reason=ok closed=[pay] desc=pay ACME",
	"6 reject a/x by=bob reason= closed=[x y]",
	"9 fence b by=ops reason=new attempt closed=[k]",
	"10 cancel b by=ops reason= closed=[]",
	"13 timeout c by= reason= closed=[k]",
}

// TestEntries: each decision, fence, cancel and timeout is one entry with who,
// when and why and the approvals it closed; opens, admits and completes are none.
func TestEntries(t *testing.T) {
	dir := t.TempDir()
	g := openGate(t, dir, 0)
	script(g)
	g.close()
	require.Equal(t, scripted, entries(t, dir, ""))
	require.Equal(t, scripted[2:4], entries(t, dir, "b"), "one run's")
	var at []int64
	require.NoError(t, audit.Read(filepath.Join(dir, audit.FileName), "a", func(e audit.Entry) error { at = append(at, e.AtMs); return nil }))
	require.Equal(t, []int64{1003, 1006}, at, "the gate's clock when it was applied")
}

// TestRecoveryFillsIn: entries a crash kept out of the file (none written, or the
// last one torn) come back from the log on recovery, each once; a clean restart
// writes none twice.
func TestRecoveryFillsIn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wreck func(t *testing.T, path string)
	}{
		{"a clean restart", func(*testing.T, string) {}},
		{"the file lost", func(t *testing.T, path string) { require.NoError(t, os.Remove(path)) }},
		{"the last line torn", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, b[:len(b)-7], 0o600))
		}},
		{"the last two lines lost", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := strings.SplitAfter(string(b), "\n")
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:len(lines)-3], "")), 0o600))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			g := openGate(t, dir, 0)
			script(g)
			g.close()
			tc.wreck(t, filepath.Join(dir, audit.FileName))
			g = openGate(t, dir, 0)
			g.apply(core.Command{Op: core.OpCancel, Run: "a", By: "ops"}) // 14
			g.close()
			want := append(append([]string(nil), scripted...), "14 cancel a by=ops reason= closed=[]")
			require.Equal(t, want, entries(t, dir, ""))
		})
	}
}

// TestCompactionKeepsTheTrail: the log's snapshots drop its records, and the trail
// still holds every entry, also after a restart that has only the snapshot's tail
// to replay.
func TestCompactionKeepsTheTrail(t *testing.T) {
	dir := t.TempDir()
	g := openGate(t, dir, 4)
	var want []string
	for i := range 150 {
		run := core.RunID(fmt.Sprintf("r%03d", i))
		g.apply(core.Command{Op: core.OpOpen, Run: run})
		g.apply(core.Command{Op: core.OpAdmit, Run: run, Key: "k", Epoch: 1, Gated: true})
		g.apply(core.Command{Op: core.OpDecide, Run: run, Key: "k", Decision: core.Approve, By: "alice"})
		want = append(want, fmt.Sprintf("%d approve %s/k by=alice reason= closed=[k]", 3*i+3, run))
		time.Sleep(2 * time.Millisecond) // let the snapshotter look
	}
	g.close()
	snaps, _ := filepath.Glob(filepath.Join(dir, "snap-*.snap"))
	require.NotEmpty(t, snaps, "the log took a snapshot")
	segs, _ := filepath.Glob(filepath.Join(dir, "*.wal"))
	first := filepath.Base(segs[0])
	require.NotEqual(t, "00000000000000000001.wal", first, "the log dropped its first segment")
	require.Equal(t, want, entries(t, dir, ""))
	g = openGate(t, dir, 4)
	g.close()
	require.Equal(t, want, entries(t, dir, ""), "nothing added twice by the replay of the tail")
}

// TestDamageRefused: a bad line or entries out of order before the last line stop
// Open with ErrDamaged, and Read too.
func TestDamageRefused(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":           "{\"lsn\":3,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\nnot json\n{\"lsn\":9,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\n",
		"out of order":       "{\"lsn\":9,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\n{\"lsn\":3,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\n",
		"an unknown field":   "{\"lsn\":3,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\",\"who\":\"x\"}\n",
		"no action":          "{\"lsn\":3,\"at_ms\":1,\"run\":\"a\"}\n",
		"the same lsn twice": "{\"lsn\":3,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\n{\"lsn\":3,\"at_ms\":1,\"action\":\"cancel\",\"run\":\"a\"}\n",
	} {
		path := filepath.Join(t.TempDir(), audit.FileName)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		_, err := audit.Open(path, nil, nil)
		require.ErrorIs(t, err, audit.ErrDamaged, name)
		b, _ := os.ReadFile(path)
		require.Equal(t, body, string(b), "%s: a damaged trail is left as it was", name)
	}
}

// TestWriteFailureFailsClosed: a trail that cannot write tells onFail, and its Sync
// (what a snapshot waits for) returns the error.
func TestWriteFailureFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), audit.FileName)
	broken := errors.New("disk gone")
	failed := make(chan error, 1)
	tr, err := audit.Open(path, func(context.Context, wal.LSN) error { return broken }, func(err error) { failed <- err })
	require.NoError(t, err)
	tr.Record(node.Change{LSN: 5, Cmd: core.Command{Op: core.OpCancel, Run: "a", By: "ops"}}, false)
	select {
	case err := <-failed:
		require.ErrorIs(t, err, broken)
	case <-time.After(5 * time.Second):
		t.Fatal("onFail not called")
	}
	require.ErrorIs(t, tr.Sync(5), broken)
	require.NoError(t, tr.Sync(4), "nothing recorded up to 4")
	require.NoError(t, tr.Close())
}

// TestSnapshotWaitsForTheTrail: while the trail cannot write, no snapshot lets the
// log forget a record whose entry is not in the file; once it can, one does.
func TestSnapshotWaitsForTheTrail(t *testing.T) {
	dir := t.TempDir()
	l, err := wal.Open(dir, wal.Options{SegmentBytes: 1024})
	require.NoError(t, err)
	release := make(chan struct{})
	held := func(ctx context.Context, lsn wal.LSN) error {
		<-release
		return l.WaitDurable(ctx, lsn)
	}
	tr, err := audit.Open(filepath.Join(dir, audit.FileName), held, nil)
	require.NoError(t, err)
	n, err := node.Recover(l, node.Config{Audit: tr, SnapshotEvery: 4, SnapshotCheck: time.Millisecond})
	require.NoError(t, err)
	for i := range 100 {
		run := core.RunID(fmt.Sprintf("r%03d", i))
		for _, c := range []core.Command{{Op: core.OpOpen, Run: run}, {Op: core.OpCancel, Run: run, By: "ops"}} {
			a := n.Apply(node.Request{Cmd: c})
			require.NoError(t, a.Err)
			require.NoError(t, n.Durable(a.After))
		}
	}
	time.Sleep(50 * time.Millisecond) // the snapshotter looks every millisecond
	snaps, _ := filepath.Glob(filepath.Join(dir, "snap-*.snap"))
	require.Empty(t, snaps, "a snapshot committed while the trail lacked its entries")
	close(release)
	require.Eventually(t, func() bool {
		snaps, _ := filepath.Glob(filepath.Join(dir, "snap-*.snap"))
		return len(snaps) > 0
	}, 5*time.Second, 5*time.Millisecond, "the snapshot once the trail wrote")
	n.Close()
	require.NoError(t, tr.Close())
	require.NoError(t, l.Close())
	require.Len(t, entries(t, dir, ""), 100)
}
