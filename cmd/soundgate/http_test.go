package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// httpListening waits for the gate's log to say where its HTTP listener is, and
// returns its base URL.
func httpListening(t *testing.T, p *served) string {
	t.Helper()
	re := regexp.MustCompile(`msg=listening http=(http://127\.0\.0\.1:\d+)`)
	var url string
	require.Eventually(t, func() bool {
		m := re.FindStringSubmatch(p.logs.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	}, 20*time.Second, 10*time.Millisecond, "%s", p.logs.String())
	return url
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestServeHTTP: --http that would widen the gate's exposure, or that is not an
// address, stops the gate at start with a usage error that says why; a loopback one
// serves /healthz and /metrics (read by Prometheus' parser) of the real binary.
func TestServeHTTP(t *testing.T) {
	_, bin, roles, sock := gateFixture(t)
	for _, bad := range []struct {
		args []string
		says []string
	}{
		{[]string{"--http", "0.0.0.0:9733"}, []string{"not a loopback IP", "it would expose /metrics to the network", "give --http-allow-non-loopback too"}},
		{[]string{"--http", ":9733"}, []string{"not a loopback IP", "--http-allow-non-loopback"}},
		{[]string{"--http", "localhost:9733"}, []string{"not a loopback IP"}},
		{[]string{"--http", "127.0.0.1"}, []string{"not host:port"}},
		{[]string{"--http", "127.0.0.1:metrics"}, []string{"the port must be a number"}},
		{[]string{"--http-allow-non-loopback"}, []string{"--http-allow-non-loopback without --http"}},
	} {
		args := append([]string{"--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock}, bad.args...)
		p := serve(t, bin, "", args...)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the gate started", bad.args)
		}
		require.Equal(t, exitUsage, p.cmd.ProcessState.ExitCode(), "%v:\n%s", bad.args, p.logs.String())
		for _, s := range bad.says {
			require.Contains(t, p.logs.String(), s, "%v", bad.args)
		}
		if strings.Contains(bad.args[len(bad.args)-1], "127.0.0.1") {
			require.NotContains(t, p.logs.String(), "--http-allow-non-loopback", "no hint where it would not help")
		}
	}

	p := serve(t, bin, sock, "--roles", roles, "--durability", "memory", "--listen", "", "--unix", sock, "--http", "127.0.0.1:0")
	url := httpListening(t, p)
	code, body := httpGet(t, url+"/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok\n", body)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	op := dialListening(t, ctx, sock, servertest.OperatorToken)
	agent := dialListening(t, ctx, sock, servertest.AgentToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	res, err := agent.Admit(ctx, "r", "k", 1, client.AdmitOptions{})
	require.NoError(t, err)
	require.Equal(t, core.AnswerAdmit, res.Answer)

	code, body = httpGet(t, url+"/metrics")
	require.Equal(t, http.StatusOK, code)
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	require.Equal(t, 1.0, sampleOf(fams["soundgate_admits_total"], "answer", "admit"))
	require.Equal(t, 2.0, sampleOf(fams["soundgate_connections"], "role", "agent")+sampleOf(fams["soundgate_connections"], "role", "operator"))
	require.Equal(t, version, fams["soundgate_build_info"].Metric[0].Label[0].GetValue())
	require.Nil(t, fams["soundgate_wal_records_total"], "in memory: no log, no log metrics")
}

// sampleOf is the value of the counter or gauge of f whose first label is name=value.
func sampleOf(f *dto.MetricFamily, name, value string) float64 {
	for _, m := range f.GetMetric() {
		if len(m.Label) > 0 && m.Label[0].GetName() == name && m.Label[0].GetValue() == value {
			if m.Counter != nil {
				return m.Counter.GetValue()
			}
			return m.Gauge.GetValue()
		}
	}
	return -1
}

// unitFile is the systemd unit the repository ships (docs/operations.md).
const unitFile = "../../docs/examples/soundgate.service"

// execStart reads the unit's ExecStart: the binary and its arguments.
func execStart(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var cmd []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "ExecStart="); ok {
			require.Nil(t, cmd, "%s: one ExecStart", path)
			require.NotContains(t, rest, `"`, "%s: no quoting in ExecStart (the test splits it on spaces)", path)
			require.NotContains(t, rest, "\\", "%s: ExecStart on one line", path)
			cmd = strings.Fields(rest)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, cmd, "%s has no ExecStart", path)
	return cmd
}

// TestUnitFile: the ExecStart of docs/examples/soundgate.service is `soundgate serve`
// with flags that `soundgate serve -h` lists, each given as --flag value or --flag
// (a boolean); with its paths moved into a temporary directory and its ports to
// free ones, the real binary starts on exactly those flags, answers /healthz, and
// stops on SIGTERM with exit status 0.
func TestUnitFile(t *testing.T) {
	cmd := execStart(t, unitFile)
	require.Equal(t, "soundgate", filepath.Base(cmd[0]), "ExecStart runs the soundgate binary")
	require.Equal(t, "serve", cmd[1])
	dir, bin, roles, _ := gateFixture(t)

	help, _ := exec.Command(bin, "serve", "-h").CombinedOutput() // -h exits 2
	require.Contains(t, string(help), "Usage: soundgate serve")
	booleans := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z-]+)(?: ([a-z]+))?(?:\t|$)`).FindAllStringSubmatch(string(help), -1) {
		booleans[m[1]] = m[2] == "" // "  -data string", "  -ordered-ids", "  -v\tlog ..."
	}
	require.Equal(t, false, booleans["data"])
	require.Equal(t, true, booleans["v"])
	require.Contains(t, booleans, "http", "serve -h lists --http")

	// Where the unit's paths and ports are not this test's to take.
	moved := map[string]string{
		"roles":      roles,
		"data":       filepath.Join(dir, "data"),
		"unix":       filepath.Join(dir, "gate.sock"),
		"admin-unix": filepath.Join(dir, "admin.sock"),
		"listen":     "127.0.0.1:0",
		"http":       "127.0.0.1:0",
	}
	var args []string
	for i := 2; i < len(cmd); i++ {
		name, ok := strings.CutPrefix(cmd[i], "--")
		require.True(t, ok, "ExecStart argument %q is not a --flag", cmd[i])
		require.NotContains(t, name, "=", "ExecStart gives %s as --flag value", cmd[i])
		boolean, listed := booleans[name]
		require.True(t, listed, "ExecStart gives --%s, which `soundgate serve -h` does not list:\n%s", name, help)
		args = append(args, cmd[i])
		if boolean {
			continue
		}
		require.Less(t, i+1, len(cmd), "--%s needs a value", name)
		i++
		v := cmd[i]
		if m, ok := moved[name]; ok {
			v = m
		}
		args = append(args, v)
	}
	for _, name := range []string{"roles", "data", "http"} {
		require.Contains(t, args, "--"+name, "the unit gives --%s", name)
	}
	p := serve(t, bin, moved["unix"], args...)
	code, body := httpGet(t, httpListening(t, p)+"/healthz")
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the gate did not stop on SIGTERM:\n%s", p.logs.String())
	}
	require.NoError(t, p.err, "%s", p.logs.String())
}
