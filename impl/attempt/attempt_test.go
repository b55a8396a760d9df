package attempt_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/attempt"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

var errGone = errors.New("connection closed")

// conn is a gate connection whose run epoch the test moves and which it can close.
type conn struct {
	epoch         uint64
	gone          bool
	asked, closes int
}

func (c *conn) Status(_ context.Context, run, _ string) (proto.StatusResult, error) {
	c.asked++
	if c.gone {
		return proto.StatusResult{}, errGone
	}
	return proto.StatusResult{Run: core.RunID(run), Epoch: c.epoch}, nil
}

func (c *conn) Close() error { c.closes++; return nil }

func status(ctx context.Context, a *attempt.Attempt[*conn]) (proto.StatusResult, error) {
	return attempt.Do(ctx, a, func(c *conn) (proto.StatusResult, error) { return c.Status(ctx, "r", "") })
}

// TestEpochIsLearntOnce: a Fence after the first request does not move the attempt on.
func TestEpochIsLearntOnce(t *testing.T) {
	ctx := context.Background()
	c := &conn{epoch: 1}
	a := attempt.New(c, nil, nil, 0)
	e, err := a.Epoch(ctx, "r")
	require.NoError(t, err)
	require.EqualValues(t, 1, e)
	c.epoch = 2 // the operator fenced the run
	e, err = a.Epoch(ctx, "r")
	require.NoError(t, err)
	require.EqualValues(t, 1, e, "the attempt keeps the epoch it learnt, so the gate denies it stale_epoch")
	require.Equal(t, 1, c.asked)
	e, err = a.Epoch(ctx, "other")
	require.NoError(t, err)
	require.EqualValues(t, 2, e)
}

// TestMaxRuns: past its bound an attempt refuses a new run rather than forget an epoch.
func TestMaxRuns(t *testing.T) {
	ctx := context.Background()
	a := attempt.New(&conn{epoch: 1}, nil, nil, 1)
	_, err := a.Epoch(ctx, "a")
	require.NoError(t, err)
	_, err = a.Epoch(ctx, "b")
	require.ErrorContains(t, err, "1 runs, its limit")
	_, err = a.Epoch(ctx, "a")
	require.NoError(t, err, "a run it knows still goes")
}

// TestRedial: a closed connection is replaced once and the request asked again on the
// new one; without a redial, or for another error, the error is the caller's.
func TestRedial(t *testing.T) {
	ctx := context.Background()
	closed := func(err error) bool { return errors.Is(err, errGone) }
	old, fresh := &conn{gone: true}, &conn{epoch: 3}
	dials := 0
	a := attempt.New(old, func(context.Context) (*conn, error) { dials++; return fresh, nil }, closed, 0)
	st, err := status(ctx, a)
	require.NoError(t, err)
	require.EqualValues(t, 3, st.Epoch)
	require.Equal(t, 1, dials)
	require.Equal(t, 1, old.closes, "the closed connection is freed")
	require.Same(t, fresh, a.Conn())

	_, err = status(ctx, attempt.New(&conn{gone: true}, nil, closed, 0))
	require.ErrorIs(t, err, errGone, "no redial: the error is the caller's")

	dials = 0
	_, err = status(ctx, attempt.New(&conn{gone: true}, func(context.Context) (*conn, error) { dials++; return fresh, nil },
		func(error) bool { return false }, 0))
	require.ErrorIs(t, err, errGone)
	require.Zero(t, dials, "an error that is not a closed connection is not redialled")

	_, err = status(ctx, attempt.New(&conn{gone: true}, func(context.Context) (*conn, error) { return nil, errors.New("refused") }, closed, 0))
	require.ErrorIs(t, err, errGone)
	require.ErrorContains(t, err, "redial: refused")
}

// TestClose closes the connection asked on now.
func TestClose(t *testing.T) {
	c := &conn{}
	require.NoError(t, attempt.New(c, nil, nil, 0).Close())
	require.Equal(t, 1, c.closes)
}
