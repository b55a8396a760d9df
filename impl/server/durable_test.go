package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

// D1 across connections: while A's admit of k is on its way to the disk, B's admit of
// the same k reads it from memory; B's answer (duplicate) must wait for A's record,
// since a crash now would make k absent again.
func TestDuplicateWaitsForTheAdmitItRestsOn(t *testing.T) {
	lg := newSlowLog()
	g := servertest.Start(t, servertest.Options{Node: node.Config{Log: lg, Now: func() core.Time { return 1 }}})
	ctx := context.Background()
	openSynced(t, g, lg, "r")
	a, b := g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.AgentToken)
	aDone := make(chan struct{})
	go func() { a.Admit(ctx, "r", "k", 1, client.AdmitOptions{}); close(aDone) }() // logged, not durable
	require.Eventually(t, func() bool { return lg.lastLSN() >= 2 }, 5*time.Second, time.Millisecond)
	bctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	res, err := b.Admit(bctx, "r", "k", 1, client.AdmitOptions{})
	require.Error(t, err, "B heard %v before the admit it rests on was durable (D1)", res.Answer)
	lg.sync()
	<-aDone
}

// Answers wait for the log, and come in the order of the requests: while the first
// admit waits for the disk nothing is answered, and requests pipelined meanwhile are
// answered after it, once their records are durable.
func TestAnswersInOrderOnceDurable(t *testing.T) {
	lg := newSlowLog()
	g := servertest.Start(t, servertest.Options{Node: node.Config{Log: lg, Now: func() core.Time { return 1 }}})
	openSynced(t, g, lg, "r")
	c := g.Raw(t)
	readID := func() proto.ID {
		t.Helper()
		resp := c.Recv(t)
		require.Nil(t, resp.Error)
		return resp.ID
	}
	c.Write(t, helloLine)
	require.Equal(t, proto.IntID(0), readID())
	c.Write(t, admitLine(1, "a"))
	require.Eventually(t, func() bool { return lg.lastLSN() >= 2 }, 5*time.Second, time.Millisecond)
	c.Write(t, admitLine(2, "b")+admitLine(3, "c"))
	c.Conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := c.Conn.Read(make([]byte, 1)) // nothing buffered in Recv's reader: the hello answer was alone
	require.Error(t, err, "an answer left before its record was durable (D1)")
	require.Zero(t, n)

	lg.sync()
	require.Equal(t, proto.IntID(1), readID())
	require.Eventually(t, func() bool { return lg.lastLSN() >= 4 }, 5*time.Second, time.Millisecond)
	lg.sync()
	require.Equal(t, proto.IntID(2), readID())
	require.Equal(t, proto.IntID(3), readID())
}

// failingLog is a log whose appends or syncs fail once armed.
type failingLog struct {
	inner              node.Log
	failAppend, failWD atomic.Bool
}

var errDisk = errors.New("injected: no space left on device")

func (l *failingLog) Append(rec []byte) (wal.LSN, error) {
	if l.failAppend.Load() {
		return 0, errDisk
	}
	return l.inner.Append(rec)
}

func (l *failingLog) WaitDurable(ctx context.Context, lsn wal.LSN) error {
	if l.failWD.Load() {
		return errDisk
	}
	return l.inner.WaitDurable(ctx, lsn)
}

// TestFailClosed: once the log cannot write or sync, every request is refused with
// unavailable (reads included), the refusal says why, and nothing is admitted.
func TestFailClosed(t *testing.T) {
	for _, mode := range []string{"append fails", "fsync fails"} {
		t.Run(mode, func(t *testing.T) {
			w, err := wal.Open(filepath.Join(t.TempDir(), "data"), wal.Options{})
			require.NoError(t, err)
			defer w.Close()
			fl := &failingLog{inner: w}
			g := servertest.Start(t, servertest.Options{Node: node.Config{Log: fl}})
			ctx := context.Background()
			op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
			_, err = op.Open(ctx, "r", 0)
			require.NoError(t, err)
			res, err := agent.Admit(ctx, "r", "before", 1, client.AdmitOptions{})
			require.NoError(t, err)
			require.Equal(t, core.AnswerAdmit, res.Answer)

			if mode == "append fails" {
				fl.failAppend.Store(true)
			} else {
				fl.failWD.Store(true)
			}
			_, err = agent.Admit(ctx, "r", "after", 1, client.AdmitOptions{})
			require.ErrorIs(t, err, proto.ErrUnavailable, "a decision that is not on disk must not be acknowledged")
			require.Contains(t, err.Error(), "no space left on device", "the refusal says why")
			require.ErrorIs(t, g.Node.Failed(), errDisk)

			fl.failAppend.Store(false) // even if the disk comes back, the gate stays closed
			fl.failWD.Store(false)
			for _, call := range []func() error{
				func() error { _, err := agent.Admit(ctx, "r", "later", 1, client.AdmitOptions{}); return err },
				func() error { _, err := agent.Admit(ctx, "r", "before", 1, client.AdmitOptions{}); return err },
				func() error { _, err := agent.Status(ctx, "r", ""); return err },
				func() error { _, err := op.Cancel(ctx, "r"); return err },
			} {
				require.ErrorIs(t, call(), proto.ErrUnavailable)
			}
		})
	}
}
