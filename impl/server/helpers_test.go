package server_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

// The package's tests run on the transport servertest picks: the event loop, or the
// goroutines with SOUNDGATE_TEST_IO=goroutines (make test runs both).

// eachTransport runs test as a subtest on the transport servertest picks and on the
// goroutines (the same one with SOUNDGATE_TEST_IO=goroutines), for tests of what the
// two transports each implement.
func eachTransport(t *testing.T, test func(t *testing.T, goroutines bool)) {
	for _, goroutines := range []bool{false, true} {
		t.Run(map[bool]string{false: "default transport", true: "goroutines"}[goroutines], func(t *testing.T) {
			test(t, goroutines)
		})
	}
}

func hello(token string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":"` + token + `"}}`
}

var helloLine = hello(servertest.AgentToken) + "\n"

func admitLine(id int, key string) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"admit","params":{"run":"r","key":"` + key + `","epoch":1}}` + "\n"
}

func statusLine(id int) string {
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"status","params":{"run":"r"}}` + "\n"
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

func (l *slowLog) lastLSN() wal.LSN { l.mu.Lock(); defer l.mu.Unlock(); return l.last }

// slowGate starts a gate on lg, its clock stopped at 1, with run r open and durable
// (the open's answer comes only then).
func slowGate(t *testing.T, lg *slowLog) *servertest.Gate {
	t.Helper()
	g := servertest.Start(t, servertest.Options{Node: node.Config{Log: lg, Now: func() core.Time { return 1 }}})
	op := g.Dial(t, servertest.OperatorToken)
	opened := make(chan error, 1)
	go func() { _, err := op.Open(context.Background(), "r", 0); opened <- err }()
	require.Eventually(t, func() bool { return lg.lastLSN() >= 1 }, 5*time.Second, time.Millisecond)
	lg.sync()
	require.NoError(t, <-opened)
	return g
}
