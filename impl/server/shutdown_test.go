package server_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// shutdown shuts the gate's server down, giving it at most d.
func shutdown(g *servertest.Gate, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return g.Server.Shutdown(ctx)
}

// TestShutdownAnswersEveryRequest: requests in flight at shutdown are answered or
// refused, never left hanging.
func TestShutdownAnswersEveryRequest(t *testing.T) {
	g := servertest.Start(t, servertest.Options{TCP: true})
	ctx := context.Background()
	op, err := client.Dial(ctx, g.TCP, servertest.OperatorToken)
	require.NoError(t, err)
	agent, err := client.Dial(ctx, g.TCP, servertest.AgentToken)
	require.NoError(t, err)
	_, err = op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Wait: time.Minute})
			errs <- err
		}()
	}
	require.Eventually(t, func() bool { return g.Node.Waiting() == 8 }, 5*time.Second, time.Millisecond)
	require.NoError(t, shutdown(g, 5*time.Second))
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, proto.ErrShuttingDown, "every waiting admit is answered shutting_down")
	}
	_, err = client.Dial(ctx, g.TCP, servertest.AgentToken)
	require.Error(t, err, "a stopped server accepts no connection")
}

// Shutdown closes every connection, those holding half a request line too, and
// returns without waiting for their deadlines.
func TestShutdownClosesEveryConnection(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	var conns []*servertest.Raw
	for i := 0; i < 3; i++ {
		c := g.Raw(t)
		require.Nil(t, c.Send(t, hello(servertest.AgentToken)).Error)
		c.Write(t, `{"jsonrpc":"2.0","id":7,"method":"sta`)
		conns = append(conns, c)
	}
	require.NoError(t, shutdown(g, 5*time.Second))
	for _, c := range conns {
		err := c.WaitClosed()
		require.Error(t, err, "the connection stays open after Shutdown")
		require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection stays open after Shutdown")
	}
}

// A connection accepted just before Shutdown, that has not said hello, does not hold
// Shutdown until its hello deadline: the deadline is set when it is accepted, not by
// its reader when it starts, which could undo Shutdown's own.
func TestShutdownRightAfterAccept(t *testing.T) {
	for i := 0; i < 20; i++ {
		g := servertest.Start(t, servertest.Options{Limits: server.Limits{HelloTimeout: time.Minute}})
		g.Raw(t)
		require.Eventually(t, func() bool { return g.Server.Connections() == 1 }, 5*time.Second, 10*time.Microsecond)
		require.NoError(t, shutdown(g, 2*time.Second), "round %d", i)
	}
}
