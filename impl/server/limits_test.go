package server_test

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

func TestConnectionLimit(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 2}})
	for i := 0; i < 2; i++ {
		g.Dial(t, servertest.AgentToken)
	}
	_, err := g.Connect(servertest.AgentToken)
	require.ErrorIs(t, err, proto.ErrOverloaded, "the third connection must be refused with overloaded")
}

// TestWaiterLimit: a second waiting admit beyond the node's WaitersMax is refused
// with overloaded, before the core sees it: the refusal changes nothing.
func TestWaiterLimit(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Node: node.Config{WaitersMax: 1}})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	first := servertest.AdmitAsync(agent, "r", "a", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
	before := g.State(t)
	_, err = agent.Admit(ctx, "r", "b", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded, "a second waiting admit must be refused")
	_, err = agent.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true, Wait: time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded)
	require.Equal(t, before, g.State(t), "overloaded changed the gate's state")
	_, err = op.Cancel(ctx, "r")
	require.NoError(t, err)
	require.NoError(t, (<-first).Err)
}

// A connection that never says hello is closed after HelloTimeout, so silent peers
// cannot hold every connection slot.
func TestSilentPeerIsClosed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{ConnectionsMax: 2, HelloTimeout: 100 * time.Millisecond}})
	for i := 0; i < 2; i++ {
		require.Error(t, g.Raw(t).WaitClosed(), "the silent connection must be closed")
	}
	require.Eventually(t, func() bool { return g.Server.Connections() == 0 }, 5*time.Second, time.Millisecond)
	g.Dial(t, servertest.OperatorToken) // a slot is free again
}

// A peer that trickles a hello a byte at a time does not stretch its deadline: it
// is closed HelloTimeout after its connection was accepted, however often it sends.
func TestTricklingHelloIsClosed(t *testing.T) {
	const helloTimeout = 200 * time.Millisecond
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{HelloTimeout: helloTimeout}})
	nc, err := net.Dial("unix", g.Unix)
	require.NoError(t, err)
	defer nc.Close()
	began := time.Now()
	closed := make(chan time.Duration, 1)
	go func() {
		b := make([]byte, 512)
		for {
			if _, err := nc.Read(b); err != nil {
				closed <- time.Since(began)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case took := <-closed:
			require.GreaterOrEqual(t, took, helloTimeout)
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(began) > 25*helloTimeout {
			t.Fatalf("a peer sending a byte every 20 ms is still connected after %v (HelloTimeout %v)", time.Since(began), helloTimeout)
		}
		nc.Write([]byte(helloLine[i%len(helloLine) : i%len(helloLine)+1]))
	}
}

// A peer that pipelines more than WriteQueueMax requests and reads its answers only
// later is paused, not dropped, and gets every answer in order: the server stops
// reading it while its answers wait, and goes on once they are written.
func TestPipeliningPeerIsPausedAndResumed(t *testing.T) {
	g := servertest.Start(t, servertest.Options{Limits: server.Limits{WriteQueueMax: 4}})
	nc, err := net.Dial("unix", g.Unix)
	require.NoError(t, err)
	defer nc.Close()
	const n = 20000 // about 2 MB of answers: more than the socket buffers hold
	var b bytes.Buffer
	b.WriteString(helloLine)
	for i := 1; i <= n; i++ {
		b.WriteString(statusLine(i))
	}
	werr := make(chan error, 1)
	go func() { _, err := nc.Write(b.Bytes()); werr <- err }()
	time.Sleep(300 * time.Millisecond) // the peer does not read for a while
	r := proto.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	for i := 0; i <= n; i++ {
		line, err := r.ReadLine()
		require.NoError(t, err, "answer %d", i)
		resp, err := proto.DecodeResponse(line)
		require.NoError(t, err)
		require.Equal(t, proto.IntID(int64(i)), resp.ID, "answers out of order")
	}
	require.NoError(t, <-werr)
}

// A peer that never reads its answers is dropped after WriteTimeout, nothing of the
// server stays behind for it (no reader waiting for room), and the gate goes on
// serving others.
func TestPeerThatDoesNotReadIsDropped(t *testing.T) {
	for _, goroutines := range []bool{false, true} {
		t.Run(map[bool]string{false: "default transport", true: "goroutines"}[goroutines], func(t *testing.T) {
			testPeerThatDoesNotReadIsDropped(t, goroutines)
		})
	}
}

func testPeerThatDoesNotReadIsDropped(t *testing.T, goroutines bool) {
	g := servertest.Start(t, servertest.Options{Goroutines: goroutines,
		Limits: server.Limits{ConnectionsMax: 4, WriteQueueMax: 4, WriteTimeout: 100 * time.Millisecond}})
	var b bytes.Buffer
	b.WriteString(helloLine)
	for i := 1; i <= 40000; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"` + strings.Repeat("r", 100) + `"}}` + "\n")
	}
	for i := 0; i < 3; i++ {
		c := g.Raw(t)
		go c.Conn.Write(b.Bytes()) // never reads
	}
	require.Eventually(t, func() bool { return g.Server.Connections() == 0 }, 10*time.Second, 10*time.Millisecond,
		"a peer that does not read is still connected")
	require.Eventually(t, func() bool { return goroutinesIn("(*gconn).waitRoom") == 0 }, 10*time.Second, 20*time.Millisecond,
		"reader goroutines outlive their dropped connections")
	g.Dial(t, servertest.AgentToken) // the hello is answered: the gate serves on
}

func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), fn)
}
