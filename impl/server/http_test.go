package server_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// webGate starts a durable gate (its log in a temporary directory, or on fsys) with
// its HTTP listener.
func webGate(t *testing.T, goroutines bool, fsys walfs.FS) *servertest.Gate {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if fsys != nil {
		dir = "/data"
	}
	l, err := wal.Open(dir, wal.Options{FS: fsys})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return servertest.Start(t, servertest.Options{Node: node.Config{Log: l}, HTTP: true, Goroutines: goroutines})
}

// get requests url and returns the status and the body.
func get(t *testing.T, method, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// scrape reads the gate's /metrics with Prometheus' own parser.
func scrape(t *testing.T, g *servertest.Gate) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := get(t, http.MethodGet, g.HTTP+"/metrics")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, "text/plain; version=0.0.4; charset=utf-8", resp.Header.Get("Content-Type"))
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	return fams
}

// value is the value of the sample of family name whose labels are exactly labels
// (name, value pairs), or -1 if there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		if len(m.Label)*2 != len(labels) {
			continue
		}
		match := true
		for i, l := range m.Label {
			match = match && l.GetName() == labels[2*i] && l.GetValue() == labels[2*i+1]
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetricsCount: after a scripted sequence against a real gate, /metrics (read
// by Prometheus' parser) shows exactly what happened: admits by answer and reason,
// a parked admit counted once with its final answer, pending approvals and waiting
// admits, refusals, connections by role, the log's records and fdatasyncs.
func TestMetricsCount(t *testing.T) {
	eachTransport(t, func(t *testing.T, goroutines bool) {
		g := webGate(t, goroutines, nil)
		ctx := context.Background()
		op, agent, approver := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken)
		for _, r := range []string{"r1", "r2", "r3"} {
			_, err := op.Open(ctx, r, 0)
			require.NoError(t, err)
		}
		admit := func(run, key string, o client.AdmitOptions, want core.Answer) {
			t.Helper()
			res, err := agent.Admit(ctx, run, key, 1, o)
			require.NoError(t, err)
			require.Equal(t, want, res.Answer, "%s/%s", run, key)
		}
		for _, k := range []string{"a", "b", "c"} {
			admit("r1", k, client.AdmitOptions{}, core.AnswerAdmit)
		}
		admit("r1", "a", client.AdmitOptions{}, core.AnswerDuplicate)
		admit("r2", "x", client.AdmitOptions{Gated: true}, core.AnswerHeld)
		admit("r3", "y", client.AdmitOptions{Gated: true}, core.AnswerHeld)
		_, err := approver.Decide(ctx, "r3", "y", core.Reject)
		require.NoError(t, err)
		admit("r3", "y", client.AdmitOptions{}, core.AnswerDenied)
		parked := servertest.AdmitAsync(agent, "r2", "z", 1, client.AdmitOptions{Wait: time.Minute})
		require.Eventually(t, func() bool { return g.Node.Waiting() == 1 }, 5*time.Second, time.Millisecond)
		_, err = agent.Decide(ctx, "r2", "x", core.Approve)
		require.ErrorIs(t, err, proto.ErrForbidden)
		g.Raw(t) // a connection that says no hello
		require.Eventually(t, func() bool { return g.Server.Connections() == 4 }, 5*time.Second, time.Millisecond)

		sub := g.Server.Subscribe(nil, 0) // a watch of the inbox, as pending --watch's
		fams := scrape(t, g)
		for _, c := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{"soundgate_admits_total", []string{"answer", "admit"}, 3},
			{"soundgate_admits_total", []string{"answer", "duplicate"}, 1},
			{"soundgate_admits_total", []string{"answer", "held"}, 2},
			{"soundgate_admits_total", []string{"answer", "denied", "reason", "rejected"}, 1},
			{"soundgate_admits_total", []string{"answer", "denied", "reason", "cancelled"}, 0},
			{"soundgate_pending_approvals", nil, 1},
			{"soundgate_inbox_subscriptions", nil, 1},
			{"soundgate_waiting_admits", nil, 1},
			{"soundgate_refusals_total", []string{"reason", "forbidden"}, 1},
			{"soundgate_refusals_total", []string{"reason", "quota"}, 0},
			{"soundgate_connections", []string{"role", "agent"}, 1},
			{"soundgate_connections", []string{"role", "approver"}, 1},
			{"soundgate_connections", []string{"role", "operator"}, 1},
			{"soundgate_connections", []string{"role", "none"}, 1},
			{"soundgate_runs", nil, 3},
			{"soundgate_failed_closed", nil, 0},
			// 3 opens, 3 admits, 2 gated helds, the decision, z held behind x
			{"soundgate_wal_records_total", nil, 10},
			{"soundgate_wal_segments", nil, 1},
			{"soundgate_snapshot_duration_seconds", nil, 0},
			{"soundgate_build_info", []string{"version", "test", "goversion", runtimeVersion()}, 1},
		} {
			require.Equal(t, c.want, value(fams, c.name, c.labels...), "%s%v", c.name, c.labels)
		}
		commits := fams["soundgate_wal_commit_records"].Metric[0].Histogram
		require.GreaterOrEqual(t, commits.GetSampleSum(), 9.0, "every record but the parked admit's is durable")
		require.LessOrEqual(t, commits.GetSampleSum(), 10.0)
		syncs := fams["soundgate_wal_fdatasync_duration_seconds"].Metric[0].Histogram
		require.GreaterOrEqual(t, syncs.GetSampleCount(), commits.GetSampleCount())
		require.Greater(t, syncs.GetSampleSum(), 0.0)

		// The approval releases the parked admit: admitted, counted once, with its answer.
		_, err = approver.Decide(ctx, "r2", "x", core.Approve)
		require.NoError(t, err)
		got := <-parked
		require.NoError(t, got.Err)
		require.Equal(t, core.AnswerAdmit, got.Res.Answer)
		fams = scrape(t, g)
		require.Equal(t, 4.0, value(fams, "soundgate_admits_total", "answer", "admit"))
		require.Equal(t, 2.0, value(fams, "soundgate_admits_total", "answer", "held"), "the parked admit is not counted held")
		require.Equal(t, 0.0, value(fams, "soundgate_pending_approvals"))
		require.Equal(t, 0.0, value(fams, "soundgate_waiting_admits"))
		sub.Close()
		require.Equal(t, 0.0, value(scrape(t, g), "soundgate_inbox_subscriptions"))
	})
}

// operationsMetrics reads the table of metrics of docs/operations.md: name, type
// and label names of each row.
func operationsMetrics(t *testing.T) map[string]documented {
	t.Helper()
	f, err := os.Open("../../docs/operations.md")
	require.NoError(t, err)
	defer f.Close()
	out := map[string]documented{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == "## Metrics"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `soundgate_") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		require.Len(t, cells, 4, "docs/operations.md: a row of the metrics has four cells (metric, type, labels, meaning): %s", line)
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		var labels []string
		for _, l := range strings.Split(cells[2], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" && l != "(none)" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		_, dup := out[name]
		require.False(t, dup, "docs/operations.md lists %s twice", name)
		require.NotEmpty(t, strings.TrimSpace(cells[3]), "%s has no meaning in docs/operations.md", name)
		out[name] = documented{typ: strings.TrimSpace(cells[1]), labels: labels}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out, "docs/operations.md has no table under ## Metrics")
	return out
}

type documented struct {
	typ    string
	labels []string
}

// TestMetricsDocumented: every family /metrics exposes is in the table of
// docs/operations.md with its type and labels, and every row of the table is
// exposed: an undocumented metric, or a documented one that went away, fails.
func TestMetricsDocumented(t *testing.T) {
	docs := operationsMetrics(t)
	g := webGate(t, false, nil)
	ctx := context.Background()
	op := g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r", 0) // a commit, so that the log's histograms have counts
	require.NoError(t, err)
	exposed := map[string]documented{}
	for name, f := range scrape(t, g) {
		var labels []string
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		slices.Sort(labels)
		require.NotEmpty(t, f.GetHelp(), "%s has no HELP", name)
		exposed[name] = documented{typ: strings.ToLower(f.GetType().String()), labels: labels}
	}
	for name, e := range exposed {
		d, ok := docs[name]
		require.True(t, ok, "/metrics exposes %s, which docs/operations.md does not list", name)
		require.Equal(t, d, e, "%s: docs/operations.md says %+v, /metrics exposes %+v", name, d, e)
	}
	for name := range docs {
		_, ok := exposed[name]
		require.True(t, ok, "docs/operations.md lists %s, which /metrics does not expose", name)
	}
}

// TestHealthz: /healthz is 200 while the gate serves, and 503 with the reason once
// the log fails (an fdatasync that fails): the gate is failed closed, and /metrics
// says so too.
func TestHealthz(t *testing.T) {
	fsys := walfs.NewFaultFS()
	g := webGate(t, false, fsys)
	ctx := context.Background()
	op := g.Dial(t, servertest.OperatorToken)
	_, err := op.Open(ctx, "r", 0)
	require.NoError(t, err)
	resp, body := get(t, http.MethodGet, g.HTTP+"/healthz")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok\n", body)

	fsys.Inject(walfs.Fault{Op: walfs.OpSync, Path: ".wal", Err: syscall.EIO})
	_, err = op.Open(ctx, "r2", 0)
	require.ErrorIs(t, err, proto.ErrUnavailable)
	resp, body = get(t, http.MethodGet, g.HTTP+"/healthz")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Contains(t, body, "failed closed")
	require.Contains(t, body, "fdatasync")
	require.Contains(t, body, syscall.EIO.Error(), "the reason")
	resp, _ = get(t, http.MethodHead, g.HTTP+"/healthz")
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, 1.0, value(scrape(t, g), "soundgate_failed_closed"))
}

// TestWebRefusals: what the HTTP listener does not serve is refused with a status
// and a message that says what it serves instead.
func TestWebRefusals(t *testing.T) {
	g := webGate(t, false, nil)
	for _, c := range []struct {
		method, path string
		header       []string
		status       int
		says         string
		allow        string
	}{
		{http.MethodPost, "/metrics", nil, http.StatusMethodNotAllowed, "/metrics takes GET or HEAD, not POST", "GET, HEAD"},
		{http.MethodDelete, "/healthz", nil, http.StatusMethodNotAllowed, "/healthz takes GET or HEAD, not DELETE", "GET, HEAD"},
		{http.MethodGet, "/nothing", nil, http.StatusNotFound, `no endpoint "/nothing"; this listener serves /metrics, /healthz, /,`, ""},
		{http.MethodGet, "/metrics/", nil, http.StatusNotFound, `no endpoint "/metrics/"`, ""},
		{http.MethodGet, "/debug/pprof/", nil, http.StatusNotFound, "no endpoint", ""},
		{http.MethodGet, "/metrics", []string{"Host", "attacker.example"}, http.StatusForbidden, `not "attacker.example"`, ""},
		{http.MethodGet, "/healthz", []string{"Host", "10.0.0.1:9733"}, http.StatusForbidden, "loopback host", ""},
		{http.MethodGet, "/healthz", []string{"Host", "localhost:9733"}, http.StatusOK, "ok", ""},
		{http.MethodGet, "/healthz", []string{"Host", "[::1]:9733"}, http.StatusOK, "ok", ""},
		{http.MethodHead, "/metrics", nil, http.StatusOK, "", ""},
	} {
		t.Run(c.method+" "+c.path+" "+strings.Join(c.header, " "), func(t *testing.T) {
			resp, body := get(t, c.method, g.HTTP+c.path, c.header...)
			require.Equal(t, c.status, resp.StatusCode, body)
			require.Contains(t, body, c.says)
			require.Equal(t, c.allow, resp.Header.Get("Allow"))
			require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
			if c.method == http.MethodHead {
				require.Empty(t, body)
			}
		})
	}
}

// TestServeWebNeedsMetrics: a server that does not count cannot serve /metrics.
func TestServeWebNeedsMetrics(t *testing.T) {
	g := servertest.Start(t, servertest.Options{})
	srv, err := server.New(server.Config{Roles: servertest.Roles(), Node: g.Node})
	require.NoError(t, err)
	l, err := listenLoopback()
	require.NoError(t, err)
	require.ErrorIs(t, srv.ServeWeb(l), server.ErrMetricsOff)
}

// TestCheckHTTPAddr: a loopback IP and a port, unless non-loopback addresses are
// allowed; never a name, never a port that is not a number.
func TestCheckHTTPAddr(t *testing.T) {
	for _, c := range []struct {
		addr        string
		nonLoopback bool
		says        string // "": accepted
	}{
		{"127.0.0.1:9733", false, ""},
		{"127.0.0.2:0", false, ""},
		{"[::1]:9733", false, ""},
		{"0.0.0.0:9733", false, "not a loopback IP"},
		{":9733", false, "not a loopback IP"},
		{"[::]:9733", false, "not a loopback IP"},
		{"localhost:9733", false, "not a loopback IP"},
		{"192.168.1.10:9733", false, "is not a loopback IP"},
		{"0.0.0.0:9733", true, ""},
		{":9733", true, ""},
		{"gate.internal:9733", true, ""},
		{"127.0.0.1", false, "not host:port"},
		{"127.0.0.1", true, "not host:port"},
		{"127.0.0.1:http", false, "the port must be a number"},
		{"127.0.0.1:70000", false, "the port must be a number"},
		{"127.0.0.1:-1", true, "the port must be a number"},
		{"127.0.0.1:", false, "the port must be a number"},
	} {
		err := server.CheckHTTPAddr(c.addr, c.nonLoopback)
		if c.says == "" {
			require.NoError(t, err, "%s (non-loopback allowed: %v)", c.addr, c.nonLoopback)
			continue
		}
		require.ErrorIs(t, err, server.ErrHTTPAddr, c.addr)
		require.ErrorContains(t, err, c.says, c.addr)
	}
}

func runtimeVersion() string { return runtime.Version() }

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
