package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// capture runs main with args and returns what it printed on stdout and stderr, and
// its exit code.
func capture(t *testing.T, main func([]string) int, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	out, errOut := filepath.Join(dir, "out"), filepath.Join(dir, "err")
	fo, err := os.Create(out)
	require.NoError(t, err)
	fe, err := os.Create(errOut)
	require.NoError(t, err)
	so, se := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = fo, fe
	code = main(args)
	os.Stdout, os.Stderr = so, se
	require.NoError(t, fo.Close())
	require.NoError(t, fe.Close())
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	e, err := os.ReadFile(errOut)
	require.NoError(t, err)
	return string(b), string(e), code
}

// TestPendingShowsEscaped: `soundgate pending` prints one approval a line, oldest
// first, with a human age; a key and a description that hold terminal escape
// sequences, line breaks and a bidirectional override can neither forge a line nor
// reach the terminal raw (markup is printable, and a terminal shows it as text: it is
// printed as it is, the rule of proto.Shown); --json prints the protocol's JSON.
func TestPendingShowsEscaped(t *testing.T) {
	clock := &servertest.Clock{}
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
	ctx := context.Background()
	op, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken)
	forgedKey := "k\nr1 ok age=0s \x1b[32mapproved\x1b[0m"
	digest := client.ArgsDigest([]byte("{}"))
	admits := []struct {
		run, key, description string
		at                    core.Time
	}{
		{"r1", "wire-money", "Wire 120 EUR to ACME", 1_000},
		{"r1", forgedKey, "", 2_000},
		{"r2", "<script>alert(1)</script>", "<b>bold</b> & \"quoted\"\nsecond line \u202eevil", 3_000},
	}
	for _, run := range []string{"r1", "r2"} {
		_, err := op.Open(ctx, run, 0)
		require.NoError(t, err)
	}
	for _, a := range admits {
		clock.Set(a.at)
		_, err := agent.Admit(ctx, a.run, a.key, 1, client.AdmitOptions{Gated: true, Description: a.description, ArgsDigest: digest})
		require.NoError(t, err)
	}
	clock.Set(3_725_000) // an hour, two minutes and five seconds after the first
	flags := []string{"--addr", "unix:" + g.Unix, "--token", servertest.ApproverToken}
	out, _, code := capture(t, pendingMain, flags...)
	require.Equal(t, exitOK, code)
	require.Equal(t, "r1 wire-money age=1h02m digest="+digest+" Wire 120 EUR to ACME\n"+
		"r1 "+fmt.Sprintf("%q", forgedKey)+" age=1h02m digest="+digest+"\n"+
		`r2 <script>alert(1)</script> age=1h02m digest=`+digest+` "<b>bold</b> & \"quoted\"\nsecond line \u202eevil"`+"\n", out)
	require.Equal(t, 3, strings.Count(out, "\n"), "one line per approval")
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\u202e")

	out, errOut, code := capture(t, pendingMain, append(flags, "--limit", "2")...)
	require.Equal(t, exitOK, code)
	require.Equal(t, 2, strings.Count(out, "\n"))
	require.Contains(t, errOut, "more approvals follow: --cursor ")
	cursor := strings.Fields(strings.TrimPrefix(errOut, "soundgate: more approvals follow: --cursor "))[0]
	cursor = strings.TrimSuffix(cursor, ",")
	out, _, _ = capture(t, pendingMain, append(flags, "--cursor", cursor)...)
	require.True(t, strings.HasPrefix(out, `r2 <script>`), out)

	out, _, code = capture(t, pendingMain, append(flags, "--limit", "1", "--all", "--json")...)
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, "a JSON line per page")
	var keys []string
	for _, l := range lines {
		var page struct {
			Approvals []struct {
				Key         string `json:"key"`
				AgeMs       int64  `json:"age_ms"`
				Description string `json:"description"`
			} `json:"approvals"`
			More bool `json:"more"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &page), l)
		keys = append(keys, page.Approvals[0].Key)
	}
	require.Equal(t, []string{"wire-money", forgedKey, "<script>alert(1)</script>"}, keys, "--json keeps the bytes")

	_, errOut, code = capture(t, pendingMain, "--addr", "unix:"+g.Unix, "--token", servertest.AgentToken)
	require.Equal(t, exitRefused, code)
	require.Contains(t, errOut, "forbidden")
	_, _, code = capture(t, pendingMain, append(flags, "--limit", "1001")...)
	require.Equal(t, exitUsage, code)
	_, _, code = capture(t, pendingMain, append(flags, "extra")...)
	require.Equal(t, exitUsage, code)
}

// TestPendingEmptyAndStatusNotes: an empty inbox says so; status shows the note of
// an effect and the decision's reason, each text on a line of its own, escaped.
func TestPendingEmptyAndStatusNotes(t *testing.T) {
	clock := &servertest.Clock{}
	clock.Set(1_767_225_600_000)
	g := servertest.Start(t, servertest.Options{Node: node.Config{Now: clock.Now}})
	flags := []string{"--addr", "unix:" + g.Unix, "--token", servertest.ApproverToken}
	out, _, code := capture(t, pendingMain, flags...)
	require.Equal(t, exitOK, code)
	require.Equal(t, "no approvals pending\n", out)

	ctx := context.Background()
	_, err := g.Dial(t, servertest.OperatorToken).Open(ctx, "r", 0)
	require.NoError(t, err)
	admit := []string{"--addr", "unix:" + g.Unix, "--token", servertest.AgentToken, "--gated",
		"--description", "send the report\nto: board@", "--args-digest", client.ArgsDigest(nil), "r", "k"}
	_, _, code = capture(t, admitMain, admit...)
	require.Equal(t, exitHeld, code)
	_, _, code = capture(t, decideMain, append(flags, "--reason", "reviewed\x07", "r", "k", "approve")...)
	require.Equal(t, exitRefused, code, "a reason with a control character is refused")
	_, _, code = capture(t, decideMain, append(flags, "--reason", "reviewed", "r", "k", "approve")...)
	require.Equal(t, exitOK, code)
	out, _, code = capture(t, statusMain, append(flags, "r", "k")...)
	require.Equal(t, exitOK, code)
	require.Equal(t, "run r active epoch=1 pending=[]\n"+
		"effect k released gated approved\n"+
		`description: "send the report\nto: board@"`+"\n"+
		"args_digest: "+client.ArgsDigest(nil)+"\n"+
		"reason: reviewed\n", out)
}

// TestHumanAge: the ages pending prints.
func TestHumanAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 999 * time.Millisecond: "0s", 42 * time.Second: "42s", 5*time.Minute + 7*time.Second: "5m07s",
		3*time.Hour + 5*time.Minute + 59*time.Second: "3h05m", 51 * time.Hour: "2d03h",
	} {
		require.Equal(t, want, humanAge(d), "%v", d)
	}
}
