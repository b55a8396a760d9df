package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestBadInput: every bad line gets its typed error, the connection survives where
// the protocol says so, and the gate's state does not change.
func TestBadInput(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	op := g.Dial(t, servertest.OperatorToken)
	ctx := context.Background()
	_, err := op.Open(ctx, "r1", 0)
	require.NoError(t, err)
	_, err = g.Dial(t, servertest.AgentToken).Admit(ctx, "r1", "k", 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	state0 := g.State(t)

	cases := []struct {
		name, token, line, wantType string
		closes                      bool
	}{
		{"garbage", servertest.AgentToken, "\x00\x01garbage{{", "parse_error", false},
		{"not json object", servertest.AgentToken, `[1,2,3]`, "invalid_request", false},
		{"10 MB line", servertest.AgentToken, strings.Repeat("x", 10<<20), "line_too_long", false},
		{"unknown verb", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admitt","params":{}}`, "unknown_method", false},
		{"unknown field", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1,"force":true}}`, "unknown_field", false},
		{"epoch as string", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":"1"}}`, "wrong_type", false},
		{"epoch as float", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1.0}}`, "wrong_type", false},
		{"duplicate key", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","key":"k3","epoch":1}}`, "duplicate_key", false},
		{"agent decides", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"decide","params":{"run":"r1","key":"k","decision":"approve"}}`, "forbidden", false},
		{"agent cancels", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r1"}}`, "forbidden", false},
		{"approver admits", servertest.ApproverToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1}}`, "forbidden", false},
		{"run out of scope", servertest.ScopedToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":1}}`, "forbidden", false},
		{"unknown run", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r9","key":"k2","epoch":1}}`, "unknown_run", false},
		{"future epoch", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"k2","epoch":7}}`, "bad_epoch", false},
		{"hello twice", servertest.AgentToken, hello(servertest.AgentToken), "hello_repeated", false},
		{"an array, then another member", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"r1","x":[1],"y":2}}`, "unknown_field", false},
		{"a key after an array names it again", servertest.AgentToken, `{"jsonrpc":"2.0","id":1,"method":"status","params":{"run":"r1","a":[1],"a":2}}`, "duplicate_key", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := g.Raw(t)
			require.Nil(t, c.Send(t, hello(tc.token)).Error)
			resp := c.Send(t, tc.line)
			require.NotNil(t, resp.Error, "want an error answer")
			require.Equal(t, tc.wantType, resp.Error.Type, resp.Error.Message)
			// The connection survives: the next request is answered.
			run := "r1"
			if tc.token == servertest.ScopedToken {
				run = "team-a-1" // in scope, never opened
			}
			next := c.Send(t, `{"jsonrpc":"2.0","id":"after","method":"status","params":{"run":"`+run+`"}}`)
			require.Equal(t, proto.StringID("after"), next.ID)
			if tc.token == servertest.ScopedToken {
				require.Equal(t, "unknown_run", next.Error.Type)
			} else {
				require.Nil(t, next.Error)
			}
			require.Equal(t, state0, g.State(t), "a refused request changed the gate's state")
		})
	}

	t.Run("stale epoch is a denial", func(t *testing.T) {
		_, err := op.Fence(ctx, "r1")
		require.NoError(t, err)
		res, err := g.Dial(t, servertest.AgentToken).Admit(ctx, "r1", "zombie", 1, client.AdmitOptions{})
		require.NoError(t, err)
		require.Equal(t, core.AnswerDenied, res.Answer)
		require.Equal(t, core.ReasonStaleEpoch, res.Reason)
	})
	t.Run("request before hello", func(t *testing.T) {
		c := g.Raw(t)
		resp := c.Send(t, `{"jsonrpc":"2.0","id":5,"method":"status","params":{"run":"r1"}}`)
		require.Equal(t, "hello_required", resp.Error.Type)
		require.Equal(t, proto.IntID(5), resp.ID)
	})
	t.Run("unknown token closes", func(t *testing.T) {
		c := g.Raw(t)
		resp := c.Send(t, hello("not-a-token-at-all-xx"))
		require.Equal(t, "unauthenticated", resp.Error.Type)
		require.Error(t, c.WaitClosed(), "the connection must be closed after a failed hello")
	})
	t.Run("typed errors through the client", func(t *testing.T) {
		_, err := g.Dial(t, servertest.AgentToken).Admit(ctx, "nope", "k", 1, client.AdmitOptions{})
		require.ErrorIs(t, err, core.ErrUnknownRun)
		_, err = g.Dial(t, servertest.AgentToken).Decide(ctx, "r1", "k", core.Approve)
		require.ErrorIs(t, err, proto.ErrForbidden)
	})
}

func TestServerNeedsRolesAndANode(t *testing.T) {
	_, err := server.New(server.Config{})
	require.ErrorIs(t, err, server.ErrNoRoles)
	_, err = server.New(server.Config{Roles: servertest.Roles()})
	require.ErrorIs(t, err, server.ErrNoNode)
}
