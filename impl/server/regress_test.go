package server

// Regression tests of defects found by review, inside the package so that they can
// look at the server's own counters.

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/wal"
)

const regressRoles = `{"tokens":[{"name":"agent","token":"agent-token-0123456789","role":"agent","runs":["*"]},
 {"name":"alice","token":"approver-token-012345","role":"approver"},
 {"name":"ops","token":"operator-token-012345","role":"operator"}]}`

func regressServer(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	roles, err := ParseRoles([]byte(regressRoles))
	require.NoError(t, err)
	cfg.Roles = roles
	s, err := New(cfg)
	require.NoError(t, err)
	addr := filepath.Join(t.TempDir(), "g.sock")
	l, err := net.Listen("unix", addr)
	require.NoError(t, err)
	go s.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, addr
}

func dialT(t *testing.T, addr, token string) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), addr, token)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// slowLog appends at once and makes records durable only when the test says so.
type slowLog struct {
	mu            sync.Mutex
	cond          *sync.Cond
	last, durable wal.LSN
}

func newSlowLog() *slowLog { l := &slowLog{}; l.cond = sync.NewCond(&l.mu); return l }

func (l *slowLog) Append([]byte) (wal.LSN, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last++
	return l.last, nil
}

func (l *slowLog) WaitDurable(_ context.Context, lsn wal.LSN) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.durable < lsn {
		l.cond.Wait()
	}
	return nil
}

func (l *slowLog) sync() { l.mu.Lock(); l.durable = l.last; l.cond.Broadcast(); l.mu.Unlock() }

// D1 across connections: while A's admit of k is on its way to the disk, B's admit of
// the same k reads it from memory; B's answer (duplicate) must wait for A's record,
// since a crash now would make k absent again.
func TestDuplicateWaitsForTheAdmitItRestsOn(t *testing.T) {
	lg := newSlowLog()
	_, addr := regressServer(t, Config{Log: lg, Now: func() core.Time { return 1 }})
	ctx := context.Background()
	openSynced(t, addr, lg, "r")
	a, b := dialT(t, addr, "agent-token-0123456789"), dialT(t, addr, "agent-token-0123456789")
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

// openSynced opens run as the operator on a server whose log is lg, and makes the
// open durable so that its answer comes.
func openSynced(t *testing.T, addr string, lg *slowLog, run string) {
	t.Helper()
	op := dialT(t, addr, "operator-token-012345")
	opened := make(chan error, 1)
	go func() { _, err := op.Open(context.Background(), run, 0); opened <- err }()
	require.Eventually(t, func() bool { return lg.lastLSN() >= 1 }, 5*time.Second, time.Millisecond)
	lg.sync()
	require.NoError(t, <-opened)
}

func (l *slowLog) lastLSN() wal.LSN { l.mu.Lock(); defer l.mu.Unlock(); return l.last }

// A peer that pipelines and never reads is dropped by the writer after WriteTimeout;
// its reader must leave too (not stay blocked holding its queue).
func TestReaderLeavesWhenWriterDropsPeer(t *testing.T) {
	_, addr := regressServer(t, Config{Limits: Limits{ConnectionsMax: 4, WriteQueueMax: 4, WriteTimeout: 100 * time.Millisecond}, Goroutines: true})
	for i := 0; i < 3; i++ {
		nc, err := net.Dial("unix", addr)
		require.NoError(t, err)
		defer nc.Close()
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":"agent-token-0123456789"}}` + "\n")
		for j := 0; j < 40000; j++ {
			b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"` + strings.Repeat("r", 100) + `"}}` + "\n")
		}
		go nc.Write(b.Bytes()) // never reads the answers
	}
	require.Eventually(t, func() bool { return stuckReaders() == 0 }, 10*time.Second, 20*time.Millisecond,
		"reader goroutines outlive their dropped connections")
}

func stuckReaders() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "(*conn).waitRoom")
}

// A connection that never says hello is closed after HelloTimeout, so silent peers
// cannot hold every connection slot.
func TestSilentPeerIsClosed(t *testing.T) {
	_, addr := regressServer(t, Config{Limits: Limits{ConnectionsMax: 2, HelloTimeout: 100 * time.Millisecond}})
	for i := 0; i < 2; i++ {
		nc, err := net.Dial("unix", addr)
		require.NoError(t, err)
		defer nc.Close()
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = nc.Read(make([]byte, 1))
		require.Error(t, err, "the silent connection must be closed")
	}
	dialT(t, addr, "operator-token-012345") // a slot is free again
}

// A parked admit whose peer has gone is dropped, not admitted later for nobody.
func TestParkedAdmitOfGonePeerIsDropped(t *testing.T) {
	s, addr := regressServer(t, Config{Now: func() core.Time { return 1 }})
	ctx := context.Background()
	op, ap, ag := dialT(t, addr, "operator-token-012345"), dialT(t, addr, "approver-token-012345"), dialT(t, addr, "agent-token-0123456789")
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = ag.Admit(ctx, "r", "g", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	gone, err := client.Dial(ctx, addr, "agent-token-0123456789")
	require.NoError(t, err)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	gone.Admit(cctx, "r", "k", 1, client.AdmitOptions{Wait: 5 * time.Minute})
	cancel()
	gone.Close() // the process that asked is gone
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.nWaiters == 0 }, 5*time.Second, time.Millisecond)
	_, err = ap.Decide(ctx, "r", "g", core.Approve)
	require.NoError(t, err)
	st, err := ag.Status(ctx, "r", "k")
	require.NoError(t, err)
	require.NotEqual(t, core.EffectAdmitted, st.Effect.Status, "an admit was given to a disconnected peer")
	res, err := ag.Admit(ctx, "r", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer, "the retry gets the admit")
}

// When a re-ask times the run out in the middle of a wake, the admits kept as held
// are asked again and hear denied(timed_out) at once, not when their wait runs out.
func TestWaiterNotStrandedOnTimedOutRun(t *testing.T) {
	var armed, calls atomic.Int32
	now := func() core.Time {
		// Armed: the decide reads the clock first (call 1), the re-ask of a second
		// (call 2, still before the deadline), the re-ask of b third: past it.
		if armed.Load() == 1 && calls.Add(1) > 2 {
			return 2000
		}
		return 100
	}
	_, addr := regressServer(t, Config{Now: now})
	ctx := context.Background()
	op, ap, ag := dialT(t, addr, "operator-token-012345"), dialT(t, addr, "approver-token-012345"), dialT(t, addr, "agent-token-0123456789")
	_, err := op.Open(ctx, "r", time.Second) // deadline 1100
	require.NoError(t, err)
	ag.Admit(ctx, "r", "g1", 1, client.AdmitOptions{Gated: true})
	ag.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true})
	type out struct {
		r   proto.AdmitResult
		err error
	}
	a, b := make(chan out, 1), make(chan out, 1)
	go func() {
		r, err := ag.Admit(ctx, "r", "a", 1, client.AdmitOptions{Wait: 5 * time.Second})
		a <- out{r, err}
	}()
	time.Sleep(50 * time.Millisecond)
	go func() {
		r, err := ag.Admit(ctx, "r", "b", 1, client.AdmitOptions{Wait: 5 * time.Second})
		b <- out{r, err}
	}()
	time.Sleep(50 * time.Millisecond)
	armed.Store(1)
	start := time.Now()
	_, err = ap.Decide(ctx, "r", "g1", core.Approve) // g2 still pending: a stays held, b's re-ask times r out
	require.NoError(t, err)
	for _, ch := range []chan out{a, b} {
		o := <-ch
		require.NoError(t, o.err)
		require.Equal(t, core.ReasonTimedOut, o.r.Reason)
	}
	require.Less(t, time.Since(start), 2*time.Second, "a waiter was stranded on a timed-out run")
}

// The waiter limit is checked before the core: refusing with overloaded changes nothing.
func TestOverloadedChangesNothing(t *testing.T) {
	s, addr := regressServer(t, Config{Limits: Limits{WaitersMax: 1}})
	ctx := context.Background()
	op, ag := dialT(t, addr, "operator-token-012345"), dialT(t, addr, "agent-token-0123456789")
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	_, err = ag.Admit(ctx, "r", "g1", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	go ag.Admit(ctx, "r", "w", 1, client.AdmitOptions{Wait: 5 * time.Second})
	require.Eventually(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.nWaiters == 1 }, 5*time.Second, time.Millisecond)
	_, before, err := s.Snapshot()
	require.NoError(t, err)
	_, err = ag.Admit(ctx, "r", "g2", 1, client.AdmitOptions{Gated: true, Wait: time.Second})
	require.ErrorIs(t, err, proto.ErrOverloaded)
	_, after, err := s.Snapshot()
	require.NoError(t, err)
	require.Equal(t, before, after, "overloaded changed the gate's state")
	op.Cancel(ctx, "r")
}

// A request-response peer's answer is sent by the reader goroutine itself (send),
// still only once durable; requests the peer pipelined meanwhile are answered by the
// writer, after it and in order.
func TestDirectAnswerThenPipelinedInOrder(t *testing.T) {
	lg := newSlowLog()
	_, addr := regressServer(t, Config{Log: lg, Now: func() core.Time { return 1 }, Goroutines: true})
	openSynced(t, addr, lg, "r")

	nc, read := rawPeer(t, addr)
	_, err := nc.Write([]byte(helloLine))
	require.NoError(t, err)
	require.Equal(t, proto.IntID(0), read().ID)

	_, err = nc.Write([]byte(admitLine(1, "a")))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return goroutinesIn("(*conn).send") == 1 }, 5*time.Second, time.Millisecond,
		"the reader does not wait for the log itself (send) for a lone request")
	_, err = nc.Write([]byte(admitLine(2, "b") + admitLine(3, "c"))) // pipelined while 1 waits for the disk
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, 1, goroutinesIn("(*conn).send"), "the reader stopped waiting for the log before the record was durable (D1)")

	lg.sync() // 1 is durable: answered; 2 and 3 are then read and logged
	got := read()
	require.Equal(t, proto.IntID(1), got.ID)
	require.Eventually(t, func() bool { return lg.lastLSN() >= 4 }, 5*time.Second, time.Millisecond)
	lg.sync()
	require.Equal(t, proto.IntID(2), read().ID)
	require.Equal(t, proto.IntID(3), read().ID)
}

// rawPeer dials addr without the client library (the test writes request lines
// itself) and returns the connection and a function that reads the next answer,
// waiting at most 5 s. The connection is closed when the test ends.
func rawPeer(t *testing.T, addr string) (net.Conn, func() proto.Response) {
	t.Helper()
	nc, err := net.Dial("unix", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	r := proto.NewReader(nc)
	return nc, func() proto.Response {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := r.ReadLine()
		require.NoError(t, err)
		resp, err := proto.DecodeResponse(line)
		require.NoError(t, err)
		return resp
	}
}

func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), fn)
}
