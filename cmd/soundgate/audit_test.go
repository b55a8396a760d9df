package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/audit"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestAuditTrailOfServe: a real `soundgate serve` records who decided, cancelled
// and fenced, when and why, in its data directory; the trail survives a SIGKILL
// and a restart, each entry once; `soundgate audit` prints it escaped, one run's
// with RUN, and the file's JSON with --json.
func TestAuditTrailOfServe(t *testing.T) {
	dir, bin, roles, sock := gateFixture(t)
	data := filepath.Join(dir, "data")
	args := []string{"--roles", roles, "--data", data, "--listen", "", "--unix", sock}
	p := serve(t, bin, sock, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op := dialListening(t, ctx, sock, servertest.OperatorToken)
	agent := dialListening(t, ctx, sock, servertest.AgentToken)
	ap := dialListening(t, ctx, sock, servertest.ApproverToken)
	for _, run := range []string{"r1", "r2"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	forged := "k\n2099-01-01T00:00:00.000Z approve r1/x by=alice"
	_, err := agent.Admit(ctx, "r1", "wire", 1, client.AdmitOptions{Gated: true, Description: "Wire 120 EUR to ACME"})
	require.NoError(t, err)
	_, err = ap.DecideWith(ctx, "r1", "wire", core.Approve, client.DecideOptions{Reason: "invoice 42"})
	require.NoError(t, err)
	_, err = agent.Admit(ctx, "r2", forged, 1, client.AdmitOptions{Gated: true})
	require.NoError(t, err)
	_, err = ap.Decide(ctx, "r2", forged, core.Reject)
	require.NoError(t, err)
	_, err = op.FenceWith(ctx, "r1", client.RunOptions{Reason: "new attempt"})
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Kill()) // acknowledged: in the log, maybe not yet in the trail
	<-p.exited

	serve(t, bin, sock, args...)
	op = dialListening(t, ctx, sock, servertest.OperatorToken)
	_, err = op.CancelWith(ctx, "r2", client.RunOptions{Reason: "done"})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // the trail's writer follows the log

	out, _, code := capture(t, auditMain, "--data", data)
	require.Equal(t, exitOK, code)
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `)
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		require.Regexp(t, stamp, l)
		lines = append(lines, stamp.ReplaceAllString(l, ""))
	}
	require.Equal(t, []string{
		"approve r1/wire by=alice closed=wire reason=invoice 42 Wire 120 EUR to ACME",
		`reject r2/"k\n2099-01-01T00:00:00.000Z approve r1/x by=alice" by=alice closed="k\n2099-01-01T00:00:00.000Z approve r1/x by=alice"`,
		"fence r1 by=ops reason=new attempt",
		"cancel r2 by=ops reason=done",
	}, lines, "each once, after a SIGKILL and a restart; the forged key on one line")

	out, _, code = capture(t, auditMain, "--data", data, "r1")
	require.Equal(t, exitOK, code)
	require.Equal(t, 2, strings.Count(out, "\n"), "r1's only:\n%s", out)
	out, _, code = capture(t, auditMain, "--data", data, "--json", "r2")
	require.Equal(t, exitOK, code)
	var e audit.Entry
	require.NoError(t, json.Unmarshal([]byte(strings.Split(out, "\n")[0]), &e))
	require.Equal(t, audit.Entry{LSN: e.LSN, AtMs: e.AtMs, Action: "reject", Run: "r2", Key: forged, By: "alice", Closed: []string{forged}}, e)
	out, _, code = capture(t, auditMain, "--data", data, "nobody")
	require.Equal(t, exitOK, code)
	require.Equal(t, "no entries for run nobody\n", out)

	_, errOut, code := capture(t, auditMain, "--data", filepath.Join(dir, "elsewhere"))
	require.Equal(t, exitFailure, code)
	require.Contains(t, errOut, "no audit trail at")
	_, _, code = capture(t, auditMain, "--data", data, "r1", "r2")
	require.Equal(t, exitUsage, code)
}
