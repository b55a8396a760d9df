package server

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
)

// TestRetiredInFlight: a run that retires between a request's reserve and its settle
// (the node answered; the server has not counted it yet) keeps nothing of the
// request either: its token's quota is whole again, and usage forgets the run.
func TestRetiredInFlight(t *testing.T) {
	cred := &Credential{Name: "t", hash: sha256.Sum256([]byte("t"))}
	l := Limits{RunsPerTokenMax: 1, ResultBytesPerTokenMax: 4}
	for _, c := range []struct {
		name string
		cmd  core.Command
		a    node.Answer // what the node answered: it recorded c
	}{
		{"open", core.Command{Op: core.OpOpen, Run: "r"}, node.Answer{Reply: core.Reply{Open: core.OpenResult{Created: true}}}},
		{"complete", core.Command{Op: core.OpComplete, Run: "r", Key: "k", Result: "abcd"}, node.Answer{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := newUsage()
			require.NoError(t, u.reserve(cred, &c.cmd, l))
			u.retired("r")
			u.settle(cred, &c.cmd, c.a)
			require.Empty(t, u.byRun, "usage keeps a retired run")

			again := c.cmd
			again.Run = "r2"
			require.NoError(t, u.reserve(cred, &again, l), "the retired run's count was not given back")
			u.settle(cred, &again, c.a)
			require.ErrorIs(t, u.reserve(cred, &again, l), proto.ErrQuota, "the quota is not counted")
			u.retired("r2")
			require.Empty(t, u.byRun)
			require.Empty(t, u.runs)
			require.Empty(t, u.results)
		})
	}
}
