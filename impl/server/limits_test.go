package server_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/wal"
)

// serveWith starts a server with cfg (roles filled in) on a Unix socket.
func serveWith(t *testing.T, cfg server.Config) (*server.Server, string) {
	t.Helper()
	roles, err := server.ParseRoles([]byte(rolesJSON))
	require.NoError(t, err)
	cfg.Roles = roles
	srv, err := server.New(cfg)
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return srv, sock
}

func TestConnectionLimit(t *testing.T) {
	limits := server.DefaultLimits()
	limits.ConnectionsMax = 2
	_, sock := serveWith(t, server.Config{Limits: limits})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		c, err := client.Dial(ctx, sock, agentToken)
		require.NoError(t, err)
		defer c.Close()
	}
	_, err := client.Dial(ctx, sock, agentToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "the third connection must be refused with overloaded")
}

func TestWaiterLimit(t *testing.T) {
	limits := server.DefaultLimits()
	limits.WaitersMax = 1
	_, sock := serveWith(t, server.Config{Limits: limits})
	ctx := context.Background()
	op, err := client.Dial(ctx, sock, operatorToken)
	require.NoError(t, err)
	agent, err := client.Dial(ctx, sock, agentToken)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	first := make(chan error, 1)
	go func() {
		_, err := agent.Admit(ctx, "r", "a", 1, client.AdmitOptions{Wait: 5 * time.Second})
		first <- err
	}()
	require.Eventually(t, func() bool {
		st, _ := agent.Status(ctx, "r", "a")
		return st.Effect != nil && st.Effect.Status == core.EffectHeld
	}, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond) // the first admit is parked
	_, err = agent.Admit(ctx, "r", "b", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded, "a second parked admit must be refused")
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	require.NoError(t, <-first)
}

// failingLog is a log whose appends or syncs fail once armed.
type failingLog struct {
	inner              server.Log
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
			srv, sock := serveWith(t, server.Config{Log: fl})
			ctx := context.Background()
			op, err := client.Dial(ctx, sock, operatorToken)
			require.NoError(t, err)
			agent, err := client.Dial(ctx, sock, agentToken)
			require.NoError(t, err)
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
			require.ErrorIs(t, srv.Failed(), errDisk)

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
