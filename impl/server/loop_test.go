package server

import (
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// The tests of this file were written for the event loop's own paths (loop_linux.go)
// and hold for both models. The package's whole suite runs on the loop by default and
// on goroutines with -io=goroutines.

const helloLine = `{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":"agent-token-0123456789"}}` + "\n"

func admitLine(id int, key string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"admit","params":{"run":"r","key":"` + key + `","epoch":1}}` + "\n"
}

func statusLine(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"status","params":{"run":"r"}}` + "\n"
}

// TestIOModel: the suite really runs on the model it names.
func TestIOModel(t *testing.T) {
	s, addr := regressServer(t, Config{})
	dialT(t, addr, "agent-token-0123456789")
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Equal(t, !testGoroutines && loopAvailable, s.loop != nil, "-io=%s", *ioModel)
	for c := range s.conns {
		require.Equal(t, s.loop != nil, c.lp != nil, "a connection not served by the model in use")
	}
}

// One pass of the loop waits for the log once for every answer it read: while the
// first admit waits for the disk, nothing is answered, and the answers come in the
// order of the requests once their records are durable.
func TestLoopAnswersInOrderOnceDurable(t *testing.T) {
	lg := newSlowLog()
	_, addr := regressServer(t, Config{Log: lg, Now: func() core.Time { return 1 }})
	openSynced(t, addr, lg, "r")
	nc, read := rawPeer(t, addr)
	readID := func() proto.ID {
		t.Helper()
		resp := read()
		require.Nil(t, resp.Error)
		return resp.ID
	}
	_, err := nc.Write([]byte(helloLine))
	require.NoError(t, err)
	require.Equal(t, proto.IntID(0), readID())
	_, err = nc.Write([]byte(admitLine(1, "a")))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return lg.lastLSN() >= 2 }, 5*time.Second, time.Millisecond)
	_, err = nc.Write([]byte(admitLine(2, "b") + admitLine(3, "c")))
	require.NoError(t, err)
	nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	n, err := nc.Read(make([]byte, 1)) // nothing buffered in read's Reader: the hello answer was alone
	require.Error(t, err, "an answer left before its record was durable (D1)")
	require.Zero(t, n)

	lg.sync()
	require.Equal(t, proto.IntID(1), readID())
	require.Eventually(t, func() bool { return lg.lastLSN() >= 4 }, 5*time.Second, time.Millisecond)
	lg.sync()
	require.Equal(t, proto.IntID(2), readID())
	require.Equal(t, proto.IntID(3), readID())
}

// A peer that pipelines more than WriteQueueMax requests and reads its answers only
// later is paused, not dropped, and gets every answer in order: the loop stops
// reading it while its answers wait, and goes on once they are written.
func TestLoopPausesAndResumesAPipeliningPeer(t *testing.T) {
	_, addr := regressServer(t, Config{Limits: Limits{WriteQueueMax: 4}})
	nc, err := net.Dial("unix", addr)
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

// A peer that never reads its answers is dropped after WriteTimeout, and the gate
// goes on serving others.
func TestLoopDropsAPeerThatDoesNotRead(t *testing.T) {
	s, addr := regressServer(t, Config{Limits: Limits{WriteQueueMax: 4, WriteTimeout: 100 * time.Millisecond}})
	var b bytes.Buffer
	b.WriteString(helloLine)
	for i := 1; i <= 40000; i++ {
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"` + strings.Repeat("r", 100) + `"}}` + "\n")
	}
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("unix", addr)
		require.NoError(t, err)
		defer nc.Close()
		go nc.Write(b.Bytes()) // never reads
	}
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.conns) == 0 }, 10*time.Second, 10*time.Millisecond,
		"a peer that does not read is still connected")
	dialT(t, addr, "agent-token-0123456789") // the hello is answered: the gate serves on
}

// Shutdown closes every connection, those holding half a request line too, and
// returns without waiting for their deadlines.
func TestLoopShutdownClosesEveryConnection(t *testing.T) {
	s, addr := regressServer(t, Config{})
	var readers []*proto.Reader
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("unix", addr)
		require.NoError(t, err)
		defer nc.Close()
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = nc.Write([]byte(helloLine))
		require.NoError(t, err)
		r := proto.NewReader(nc)
		line, err := r.ReadLine()
		require.NoError(t, err)
		resp, err := proto.DecodeResponse(line)
		require.NoError(t, err)
		require.Nil(t, resp.Error)
		_, err = nc.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"sta`))
		require.NoError(t, err)
		readers = append(readers, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	for _, r := range readers {
		_, err := r.ReadLine()
		require.Error(t, err, "the connection stays open after Shutdown")
		require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection stays open after Shutdown")
	}
}

// A connection accepted just before Shutdown, that has not said hello, does not hold
// Shutdown until its hello deadline: the deadline is set when it is accepted, not by
// its reader goroutine when it starts, which could undo Shutdown's own.
func TestShutdownRightAfterAccept(t *testing.T) {
	for i := 0; i < 20; i++ {
		s, addr := regressServer(t, Config{Limits: Limits{HelloTimeout: time.Minute}})
		nc, err := net.Dial("unix", addr)
		require.NoError(t, err)
		defer nc.Close()
		require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.conns) == 1 }, 5*time.Second, 10*time.Microsecond)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		require.NoError(t, s.Shutdown(ctx), "round %d", i)
		cancel()
	}
}
