package node_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// copyFixture copies the files of the directory from into a new temporary one: a
// recovery may repair what it opens, and a fixture must stay as it was written.
func copyFixture(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(to, 0o700))
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".wal" && filepath.Ext(e.Name()) != ".snap" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, e.Name()), b, 0o600))
	}
	return to
}

func recoverDir(t *testing.T, dir string, now func() core.Time) (*node.Node, *wal.Log) {
	t.Helper()
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	n, err := node.Recover(l, node.Config{Now: now})
	require.NoError(t, err)
	return n, l
}

func inbox(n *node.Node) []core.Approval {
	return n.Inbox(core.InboxQuery{Limit: 100}).Approvals
}

// TestLogBeforeNotesReplays: a data directory written before approvals kept notes
// (testdata/log-before-notes: a version 2 snapshot, then version 1 records) recovers
// to the state it had: the approval the snapshot holds is pending with no time (no
// age), those of the records after it since the time of their admits; then the gate
// keeps notes, and a restart on the same directory (its new records and a new
// snapshot) keeps them all.
func TestLogBeforeNotesReplays(t *testing.T) {
	dir := copyFixture(t, "testdata/log-before-notes")
	var now core.Time = 5000
	clock := func() core.Time { return now }
	n, l := recoverDir(t, dir, clock)
	require.Equal(t, []core.Approval{
		{Run: "r1", Key: "wire"},
		{Run: "r1", Key: "second", Note: core.Note{Since: 1110}},
		{Run: "r4", Key: "deploy", Note: core.Note{Since: 1130}},
	}, inbox(n))
	var tag, refund, mail core.EffectView
	n.Inspect(func(g *core.Gate) {
		_, tag, _ = g.Status("r4", "tag")
		_, refund, _ = g.Status("r2", "refund")
		_, mail, _ = g.Status("r3", "mail")
	})
	require.True(t, tag.Approved)
	require.Equal(t, &core.Note{Since: 1140}, tag.Note, "approved after the snapshot: its admit's time")
	require.Equal(t, core.EffectRejected, refund.Status)
	require.Nil(t, refund.Note, "decided before the snapshot: no note")
	require.Equal(t, core.EffectCompleted, mail.Status)

	apply := func(c core.Command) {
		t.Helper()
		a := n.Apply(node.Request{Cmd: c})
		require.NoError(t, a.Err)
		require.NoError(t, n.Durable(a.After))
	}
	apply(core.Command{Op: core.OpDecide, Run: "r1", Key: "wire", Decision: core.Approve, Reason: "old, and fine"})
	apply(core.Command{Op: core.OpAdmit, Run: "r4", Key: "new", Epoch: 1, Gated: true, Description: "made after", ArgsDigest: digest})
	want := inbox(n)
	require.Equal(t, core.Approval{Run: "r4", Key: "new", Note: core.Note{Since: 5000, Description: "made after", ArgsDigest: digest}}, want[len(want)-1])
	var before []byte
	n.Inspect(func(g *core.Gate) { before, _ = g.MarshalBinary() })
	require.NoError(t, l.Snapshot(n.LastLSN(), before))
	apply(core.Command{Op: core.OpDecide, Run: "r1", Key: "second", Decision: core.Reject, Reason: "no"})
	n.Inspect(func(g *core.Gate) { before, _ = g.MarshalBinary() })
	n.Close()
	require.NoError(t, l.Close())

	now = 9000
	n, l = recoverDir(t, dir, clock)
	defer l.Close()
	defer n.Close()
	var after []byte
	var wire, second core.EffectView
	n.Inspect(func(g *core.Gate) {
		after, _ = g.MarshalBinary()
		_, wire, _ = g.Status("r1", "wire")
		_, second, _ = g.Status("r1", "second")
	})
	require.Equal(t, before, after, "a restart keeps every note")
	require.Equal(t, &core.Note{Reason: "old, and fine"}, wire.Note)
	require.Equal(t, &core.Note{Since: 1110, Reason: "no"}, second.Note)
	a := n.Inbox(core.InboxQuery{Limit: 100})
	require.Equal(t, core.Time(9000), a.Now)
	require.Equal(t, []core.Approval{{Run: "r4", Key: "deploy", Note: core.Note{Since: 1130}},
		{Run: "r4", Key: "new", Note: core.Note{Since: 5000, Description: "made after", ArgsDigest: digest}}}, a.Approvals)
}

// TestInboxRefusedWhenStopped: a stopped node lists nothing; its refusal says so.
func TestInboxRefusedWhenStopped(t *testing.T) {
	n := node.New(node.Config{})
	n.Stop()
	a := n.Inbox(core.InboxQuery{Limit: 1})
	require.ErrorIs(t, a.Err, node.ErrStopped)
	require.Nil(t, a.Approvals)
}

var digest = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
