package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// lockedBuffer is a log destination for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRefusalsCountedAndLogged: every refusal (a forbidden call, an unknown token,
// a connection over the limit) is counted by kind and logged at most once a second
// per kind, naming the token by its name and never the token; each hello is logged
// at debug level, with the role and the token's name.
func TestRefusalsCountedAndLogged(t *testing.T) {
	var logs lockedBuffer
	g := servertest.Start(t, servertest.Options{
		Limits: server.Limits{ConnectionsMax: 2},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	for range 3 {
		_, err := agent.Decide(ctx, "r1", "k", core.Approve)
		require.ErrorIs(t, err, proto.ErrForbidden)
	}
	_, err := client.Dial(ctx, "unix:"+g.Unix, "not-a-token-of-this-gate-0123456789")
	require.ErrorIs(t, err, proto.ErrUnauthenticated)
	// The refused connection is counted until its transport has closed it.
	require.Eventually(t, func() bool { return g.Server.Connections() == 1 }, 10*time.Second, time.Millisecond)
	scoped := g.Dial(t, servertest.ScopedToken) // the second connection
	_, err = scoped.Admit(ctx, "team-b-1", "k", 1, client.AdmitOptions{})
	require.ErrorIs(t, err, proto.ErrForbidden)
	_, err = client.Dial(ctx, "unix:"+g.Unix, servertest.OperatorToken) // a third
	require.ErrorIs(t, err, proto.ErrOverloaded)

	require.Equal(t, map[string]uint64{"forbidden": 4, "unauthenticated": 1, "overloaded": 1}, g.Server.Refusals())
	out := logs.String()
	require.Equal(t, 1, strings.Count(out, "refusal=forbidden"), "rate-limited to a line a second:\n%s", out)
	require.Contains(t, out, "refusal=unauthenticated")
	require.Contains(t, out, "refusal=overloaded")
	require.Contains(t, out, "token_name=agent")
	require.Contains(t, out, `msg=hello`)
	require.Contains(t, out, "role=agent")
	for _, tok := range []string{servertest.AgentToken, servertest.ScopedToken, servertest.OperatorToken, "not-a-token-of-this-gate"} {
		require.NotContains(t, out, tok, "a token in the log")
	}
}
