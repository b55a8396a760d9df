package server_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

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
