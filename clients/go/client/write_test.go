package client_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestWriteTurnHonoursCtx checks that a call whose line waits behind another call's
// blocked write gives up when its context ends (its line is queued: an unknown
// outcome, as for any call whose context ends before the answer).
func TestWriteTurnHonoursCtx(t *testing.T) {
	a, b := net.Pipe() // nobody reads b: the first write blocks
	defer b.Close()
	c := client.NewForTest(a)
	first := make(chan error, 1)
	go func() {
		_, err := c.Status(context.Background(), "r", "")
		first <- err
	}()
	require.Eventually(t, func() bool {
		return c.Flushing()
	}, 2*time.Second, time.Millisecond)
	second := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Status(ctx, "r", "")
		second <- err
	}()
	err := within(t, second, 2*time.Second, "the waiting call ignored its context")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, client.ErrClosed)
	c.Close()
	require.ErrorIs(t, <-first, client.ErrClosed)
}

// TestConcurrentCallsShareWrites: calls made while another call's write is in
// progress are written together by it, in one write, and all are answered.
func TestConcurrentCallsShareWrites(t *testing.T) {
	g, _ := gateWithRun(t)
	ctx := context.Background()
	agent, cc := dialCounting(t, g.Unix, servertest.AgentToken)
	hold := make(chan struct{})
	cc.hold = hold // every write waits until hold is closed
	const calls = 50
	errs := make(chan error, calls)
	before := cc.writes.Load()
	for i := range calls {
		go func() {
			res, err := agent.Admit(ctx, "r", fmt.Sprintf("k%d", i), 1, client.AdmitOptions{})
			if err == nil && res.Answer != core.AnswerAdmit {
				err = fmt.Errorf("answer %s", res.Answer)
			}
			errs <- err
		}()
	}
	require.Eventually(t, func() bool {
		return agent.QueuedLines() == calls-1 // one call writes; the rest wait behind it
	}, 5*time.Second, time.Millisecond)
	close(hold)
	for range calls {
		require.NoError(t, <-errs)
	}
	require.Equal(t, int64(calls), cc.admits.Load(), "admit lines written")
	require.Equal(t, int64(2), cc.writes.Load()-before, "writes for %d concurrent calls (the first call's, then everything queued behind it)", calls)
}
