package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// D1 across connections: while A's admit of k is on its way to the disk, B's admit of
// the same k reads it from memory; B's answer (duplicate) must wait for A's record,
// since a crash now would make k absent again.
func TestDuplicateWaitsForTheAdmitItRestsOn(t *testing.T) {
	lg := newSlowLog()
	g := slowGate(t, lg)
	ctx := context.Background()
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
	g := slowGate(t, lg)
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
