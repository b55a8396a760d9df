package client_test

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// gateWithRun starts a gate and opens run "r" on it as the operator.
func gateWithRun(t *testing.T) (*servertest.Gate, *client.Client) {
	t.Helper()
	g := servertest.Start(t, servertest.Options{})
	op := g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(context.Background(), "r", 0)
	require.NoError(t, err)
	return g, op
}

// countConn counts the request lines written through it, and the admits among them.
type countConn struct {
	net.Conn
	writes, admits atomic.Int64
	hold           chan struct{} // if not nil, every write waits until it is closed
}

func (c *countConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	c.admits.Add(int64(bytes.Count(b, []byte(`"method":"admit"`)))) // one write may carry several lines
	if c.hold != nil {
		<-c.hold
	}
	return c.Conn.Write(b)
}

// dialCounting connects to addr through a countConn and says hello with token.
func dialCounting(t *testing.T, addr, token string) (*client.Client, *countConn) {
	t.Helper()
	nc, err := net.Dial("unix", addr)
	require.NoError(t, err)
	cc := &countConn{Conn: nc}
	c := client.NewForTest(cc)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.HelloForTest(context.Background(), token))
	return c, cc
}

// within returns what ch delivers, failing t with msg if nothing comes within d.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, msg string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatal(msg)
	}
	var zero T
	return zero
}
