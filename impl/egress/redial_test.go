package egress_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/stretchr/testify/require"
)

var errGone = errors.New("closed")

// fakeConn answers every request, or errGone once closed.
type fakeConn struct {
	closed bool
	asked  int
	freed  bool // Close was called
}

func (c *fakeConn) Close() error { c.freed = true; return nil }

func (c *fakeConn) Status(context.Context, string, string) (proto.StatusResult, error) {
	c.asked++
	if c.closed {
		return proto.StatusResult{}, errGone
	}
	return proto.StatusResult{Epoch: 3}, nil
}

func (c *fakeConn) AdmitWait(context.Context, string, string, uint64, bool, time.Duration) (proto.AdmitResult, error) {
	c.asked++
	if c.closed {
		return proto.AdmitResult{}, errGone
	}
	return proto.AdmitResult{Answer: core.AnswerAdmit}, nil
}

func (c *fakeConn) Complete(context.Context, string, string, core.Outcome, string) (proto.CompleteResult, error) {
	c.asked++
	if c.closed {
		return proto.CompleteResult{}, errGone
	}
	return proto.CompleteResult{}, nil
}

// TestClientAdmitterRedials: a request that finds its connection closed by the gate
// is asked once more on a new one; without Redial, or for another error, it fails.
func TestClientAdmitterRedials(t *testing.T) {
	ctx := context.Background()
	old, fresh := &fakeConn{closed: true}, &fakeConn{}
	dials := 0
	a := &egress.ClientAdmitter{C: old, Closed: func(err error) bool { return errors.Is(err, errGone) },
		Redial: func(context.Context) (egress.Conn, error) { dials++; return fresh, nil }}
	e, err := a.Epoch(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, uint64(3), e)
	v, err := a.Admit(ctx, "r", "k")
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, v.Answer)
	require.NoError(t, a.Complete(ctx, "r", "k", core.OutcomeOK, ""))
	require.Equal(t, 1, dials, "one redial serves the requests after it")
	require.Equal(t, 1, old.asked)
	require.Equal(t, 3, fresh.asked)
	require.True(t, old.freed, "the connection the gate closed is closed here too")
	require.NoError(t, a.Close())
	require.True(t, fresh.freed, "Close closes the connection asked on now")

	none := &egress.ClientAdmitter{C: &fakeConn{closed: true}}
	_, err = none.Admit(ctx, "r", "k")
	require.ErrorIs(t, err, errGone)
	failing := &egress.ClientAdmitter{C: &fakeConn{closed: true}, Closed: func(error) bool { return true },
		Redial: func(context.Context) (egress.Conn, error) { return nil, errors.New("refused") }}
	_, err = failing.Admit(ctx, "r", "k")
	require.ErrorIs(t, err, errGone)
}
