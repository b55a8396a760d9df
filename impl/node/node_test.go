package node_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/internal/scenario"
)

// TestScenarios runs the contract's scenario files through the node's door.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "../../"+scenario.Dir, newNodeDriver)
}

// nodeDriver runs scenario commands through node.Apply, on a clock the scenario sets.
type nodeDriver struct {
	n   *node.Node
	now atomic.Int64
}

func newNodeDriver(t *testing.T) scenario.Driver {
	d := &nodeDriver{}
	d.n = node.New(node.Config{Now: func() core.Time { return core.Time(d.now.Load()) }})
	t.Cleanup(d.n.Close)
	return d
}

func (d *nodeDriver) Step(c core.Command) core.Reply {
	a := d.n.Apply(node.Request{Cmd: c})
	rep := a.Reply
	rep.Err = a.Err
	return rep
}
func (d *nodeDriver) SetClock(now core.Time)   { d.now.Store(int64(now)) }
func (d *nodeDriver) TimeoutDue() []core.RunID { return d.n.TimeoutDue() }
func (d *nodeDriver) Retire(c core.Command) core.Reply {
	return d.Step(c)
}

func cmd(op core.Op, r core.RunID, k core.Key) core.Command {
	return core.Command{Op: op, Run: r, Key: k, Epoch: 1}
}

func apply(t *testing.T, n *node.Node, c core.Command) core.Reply {
	t.Helper()
	a := n.Apply(node.Request{Cmd: c})
	require.NoError(t, a.Err, "%s %s %s", c.Op, c.Run, c.Key)
	return a.Reply
}

// memLog is an in-memory log that counts records and fails on demand.
type memLog struct {
	recs    [][]byte
	fail    error
	durable atomic.Int64
}

func (l *memLog) Append(rec []byte) (wal.LSN, error) {
	if l.fail != nil {
		return 0, l.fail
	}
	l.recs = append(l.recs, append([]byte(nil), rec...))
	return wal.LSN(len(l.recs)), nil
}

func (l *memLog) WaitDurable(_ context.Context, lsn wal.LSN) error {
	if l.fail != nil {
		return l.fail
	}
	l.durable.Store(int64(lsn))
	return nil
}

// TestApplyLogsWhatChanged: the node stamps its clock on every command, appends a
// record exactly for the commands that changed the state, and every answer names
// the last record (what it rests on).
func TestApplyLogsWhatChanged(t *testing.T) {
	lg := &memLog{}
	n := node.New(node.Config{Log: lg, Now: func() core.Time { return 42 }})
	defer n.Close()
	steps := []struct {
		c     core.Command
		after wal.LSN
	}{
		{core.Command{Op: core.OpOpen, Run: "r"}, 1},
		{core.Command{Op: core.OpOpen, Run: "r"}, 1}, // a known run: nothing changed, no record
		{cmd(core.OpAdmit, "r", "k"), 2},
		{cmd(core.OpAdmit, "r", "k"), 2}, // duplicate
		{core.Command{Op: core.OpStatus, Run: "r"}, 2},
		{cmd(core.OpAdmit, "nope", "k"), 2}, // unknown_run: refused, rests on the last record all the same
	}
	for i, s := range steps {
		a := n.Apply(node.Request{Cmd: s.c})
		require.Equal(t, s.after, a.After, "step %d", i)
		require.Len(t, lg.recs, int(s.after), "step %d", i)
	}
	c, err := core.DecodeCommand(lg.recs[1])
	require.NoError(t, err)
	require.Equal(t, core.Time(42), c.Now, "the log records the node's clock")
	require.NoError(t, n.Durable(2))
	require.Equal(t, int64(2), lg.durable.Load())
}

// TestFailClosed: a log that cannot append fails the node closed; every later request
// is refused with ErrUnavailable, saying why, and waiting admits hear it at once.
func TestFailClosed(t *testing.T) {
	lg := &memLog{}
	n := node.New(node.Config{Log: lg})
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r"})
	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true})
	p := n.Join()
	heard := make(chan node.Answer, 1)
	a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "w"), Wait: time.Minute, Party: p,
		Done: func(a node.Answer) { heard <- a }})
	require.True(t, a.Parked)

	lg.fail = errors.New("injected: disk full")
	a = n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "x")}) // x is held behind g: a change, appended
	require.ErrorIs(t, a.Err, node.ErrUnavailable)
	require.Contains(t, a.Err.Error(), "disk full")
	require.ErrorIs(t, n.Failed(), lg.fail)
	require.ErrorIs(t, (<-heard).Err, node.ErrUnavailable, "a waiting admit hears the failure")
	lg.fail = nil
	a = n.Apply(node.Request{Cmd: core.Command{Op: core.OpStatus, Run: "r"}})
	require.ErrorIs(t, a.Err, node.ErrUnavailable, "the node stays closed, reads included")
}

// TestDurableFailureFailsClosed: a log that cannot make a record durable fails the
// node closed, and Durable returns the refusal to send instead of the answer.
func TestDurableFailureFailsClosed(t *testing.T) {
	lg := &memLog{}
	n := node.New(node.Config{Log: lg})
	defer n.Close()
	a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "r"}})
	lg.fail = errors.New("injected: fsync")
	require.ErrorIs(t, n.Durable(a.After), node.ErrUnavailable)
	require.ErrorIs(t, n.Failed(), lg.fail)
	require.NoError(t, n.Durable(0), "an answer that rests on nothing needs no log")
}

// TestWaiting: a held admit with a wait is answered by the decision that releases it,
// by a rejection, by the end of its wait, or not at all once its party left.
func TestWaiting(t *testing.T) {
	n := node.New(node.Config{})
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r"})
	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true})
	p := n.Join()
	wait := func(k core.Key, d time.Duration) chan node.Answer {
		ch := make(chan node.Answer, 1)
		a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", k), Wait: d, Party: p, Done: func(a node.Answer) { ch <- a }})
		require.True(t, a.Parked, "%s: a held admit with a wait waits", k)
		return ch
	}
	released := wait("a", time.Minute)
	require.Equal(t, 1, n.Waiting())
	require.Equal(t, 1, n.Parked(p))
	apply(t, n, core.Command{Op: core.OpDecide, Run: "r", Key: "g", Decision: core.Approve})
	a := <-released
	require.NoError(t, a.Err)
	require.Equal(t, core.AnswerAdmit, a.Reply.Admit.Answer)
	require.Zero(t, n.Waiting())

	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g2", Epoch: 1, Gated: true})
	start := time.Now()
	a = <-wait("b", 20*time.Millisecond)
	require.Equal(t, core.AnswerHeld, a.Reply.Admit.Answer, "the wait ran out: held")
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)

	left := wait("c", time.Minute)
	n.Leave(p)
	require.Zero(t, n.Waiting(), "Leave drops the party's waiting admits")
	a = n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "c"), Wait: time.Minute, Party: p})
	require.False(t, a.Parked, "a party that left does not wait")
	require.Equal(t, core.AnswerHeld, a.Reply.Admit.Answer)
	apply(t, n, core.Command{Op: core.OpDecide, Run: "r", Key: "g2", Decision: core.Reject})
	select {
	case a := <-left:
		t.Fatalf("a dropped admit was answered: %+v", a)
	case <-time.After(20 * time.Millisecond):
	}
	_, ev := status(t, n, "r", "c")
	require.Equal(t, core.EffectRejected, ev.Status, "the reject covered c; it was never admitted for nobody")
}

// TestWaitersMax: an admit beyond WaitersMax that would wait is refused before the
// core sees it.
func TestWaitersMax(t *testing.T) {
	n := node.New(node.Config{WaitersMax: 1})
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r"})
	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true})
	p := n.Join()
	a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "a"), Wait: time.Minute, Party: p, Done: func(node.Answer) {}})
	require.True(t, a.Parked)
	a = n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "b"), Wait: time.Minute, Party: p, Done: func(node.Answer) {}})
	require.ErrorIs(t, a.Err, node.ErrOverloaded)
	_, ev := status(t, n, "r", "b")
	require.Equal(t, core.EffectAbsent, ev.Status, "a refused admit changed the state")
}

// TestStop: Stop answers every waiting admit ErrStopped, refuses later requests, and
// Close after it returns.
func TestStop(t *testing.T) {
	n := node.New(node.Config{})
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r"})
	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true})
	ch := make(chan node.Answer, 1)
	n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "a"), Wait: time.Minute, Party: n.Join(), Done: func(a node.Answer) { ch <- a }})
	n.Stop()
	require.ErrorIs(t, (<-ch).Err, node.ErrStopped)
	require.ErrorIs(t, n.Apply(node.Request{Cmd: core.Command{Op: core.OpStatus, Run: "r"}}).Err, node.ErrStopped)
	n.Close()
}

func status(t *testing.T, n *node.Node, r core.RunID, k core.Key) (core.RunView, core.EffectView) {
	t.Helper()
	rep := apply(t, n, core.Command{Op: core.OpStatus, Run: r, Key: k})
	return rep.Run, rep.Effect
}

// TestDeadlines: the node's own timer times a run out when its deadline passes, logs
// the Timeout, and answers the admits waiting on the run.
func TestDeadlines(t *testing.T) {
	lg := &memLog{}
	n := node.New(node.Config{Log: lg})
	defer n.Close()
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r", Deadline: n.Now() + 30})
	apply(t, n, core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true})
	ch := make(chan node.Answer, 1)
	a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "r", "a"), Wait: time.Minute, Party: n.Join(), Done: func(a node.Answer) { ch <- a }})
	require.True(t, a.Parked)
	select {
	case a = <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline timer did not fire")
	}
	require.Equal(t, core.ReasonTimedOut, a.Reply.Admit.Reason)
	v, _ := status(t, n, "r", "")
	require.Equal(t, core.RunTimedOut, v.Status)
	last, err := core.DecodeCommand(lg.recs[len(lg.recs)-1])
	require.NoError(t, err)
	require.Contains(t, []core.Op{core.OpTimeout, core.OpAdmit}, last.Op, "the timeout is in the log")
}

// TestTimeoutDue: the clock's Timeout of every due run, earliest deadline first.
func TestTimeoutDue(t *testing.T) {
	var now atomic.Int64
	n := node.New(node.Config{Now: func() core.Time { return core.Time(now.Load()) }})
	defer n.Close()
	for _, o := range []struct {
		r  core.RunID
		at core.Time
	}{{"b", 20}, {"a", 10}, {"c", 30}} {
		apply(t, n, core.Command{Op: core.OpOpen, Run: o.r, Deadline: o.at})
	}
	now.Store(5)
	require.Empty(t, n.TimeoutDue())
	now.Store(20)
	require.Equal(t, []core.RunID{"a", "b"}, n.TimeoutDue())
	now.Store(100)
	require.Equal(t, []core.RunID{"c"}, n.TimeoutDue())
}

// TestRecover: a node recovered from the log it wrote holds the same state; a log
// whose record does not change the state on replay is refused with ErrReplay.
func TestRecover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	n, err := node.Recover(l, node.Config{})
	require.NoError(t, err)
	apply(t, n, core.Command{Op: core.OpOpen, Run: "r"})
	apply(t, n, cmd(core.OpAdmit, "r", "k"))
	a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpComplete, Run: "r", Key: "k", Outcome: core.OutcomeOK, Result: "x"}})
	require.NoError(t, n.Durable(a.After))
	want := state(t, n)
	n.Close()
	require.NoError(t, l.Close())

	l, err = wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	m, err := node.Recover(l, node.Config{})
	require.NoError(t, err)
	require.Equal(t, want, state(t, m))
	require.Equal(t, wal.LSN(3), m.LastLSN())
	// A record the state does not need: Open of a run that exists.
	lsn, err := l.Append(core.AppendCommand(nil, core.Command{Op: core.OpOpen, Run: "r"}))
	require.NoError(t, err)
	require.NoError(t, l.WaitDurable(context.Background(), lsn))
	m.Close()
	require.NoError(t, l.Close())
	l, err = wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	defer l.Close()
	_, err = node.Recover(l, node.Config{})
	require.ErrorIs(t, err, node.ErrReplay)
}

func state(t *testing.T, n *node.Node) []byte {
	t.Helper()
	var b []byte
	var err error
	n.Inspect(func(g *core.Gate) { b, err = g.MarshalBinary() })
	require.NoError(t, err)
	return b
}

// TestRecoverUnderLowerLimits: records accepted under the limits of their time replay
// under lower ones; a state that holds more than the new limits allow is refused with
// core.ErrOverLimits, and the old limits still recover it.
func TestRecoverUnderLowerLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := wal.Open(dir, wal.Options{})
	require.NoError(t, err)
	n, err := node.Recover(l, node.Config{})
	require.NoError(t, err)
	for _, r := range []core.RunID{"a", "b", "c"} {
		apply(t, n, core.Command{Op: core.OpOpen, Run: r})
	}
	a := n.Apply(node.Request{Cmd: cmd(core.OpAdmit, "a", "a-long-key")})
	require.NoError(t, n.Durable(a.After))
	n.Close()
	require.NoError(t, l.Close())

	var open *wal.Log
	recoverWith := func(lim core.Limits) (*node.Node, error) {
		t.Helper()
		if open != nil {
			require.NoError(t, open.Close())
		}
		var err error
		open, err = wal.Open(dir, wal.Options{})
		require.NoError(t, err)
		return node.Recover(open, node.Config{Limits: lim})
	}
	defer func() { open.Close() }()
	shorter := core.DefaultLimits()
	shorter.KeyBytesMax, shorter.RunBytesMax = 2, 1
	m, err := recoverWith(shorter)
	require.NoError(t, err, "lower byte limits bound what comes next only")
	var got core.Limits
	m.Inspect(func(g *core.Gate) { got = g.Limits() })
	require.Equal(t, shorter, got)
	require.ErrorIs(t, m.Apply(node.Request{Cmd: cmd(core.OpAdmit, "a", "new")}).Reply.Err, core.ErrKeyTooLong)
	m.Close()

	fewer := core.DefaultLimits()
	fewer.RunsMax = 2
	_, err = recoverWith(fewer)
	require.ErrorIs(t, err, core.ErrOverLimits)
	require.ErrorContains(t, err, "3 runs, over the limit of 2")
	fewer.RunsMax = 3
	m, err = recoverWith(fewer)
	require.NoError(t, err, "at the limit")
	require.ErrorIs(t, m.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "d"}}).Reply.Err, core.ErrTooManyRuns)
	m.Close()
}
