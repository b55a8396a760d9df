package escape_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
)

// Limits of the framework probe test.
const (
	// frameworkStepWait bounds each step the test waits for (a line from the
	// probe, a held request, the probe's exit).
	frameworkStepWait = 30 * time.Second
	// frameworkPauseWindow is how long the test keeps watching the sink while the
	// run is paused and the sibling's request is held, after seeing it held. The
	// zero-bytes assertion does not depend on it: it only widens the window in
	// which a leak would be seen.
	frameworkPauseWindow = 300 * time.Millisecond
	// frameworkPoll is the polling interval of bounded waits.
	frameworkPoll = 10 * time.Millisecond
	// leakyAskWait bounds one ask of the negative control's admitter.
	leakyAskWait = 200 * time.Millisecond
)

// requireProbesEnv, set to 1 (ci/mk/mediated-probe.mk sets it, after the probes'
// npm install), makes missing node or node_modules a failure instead of a skip.
// It is not SOUNDGATE_REQUIRE_KERNEL: CI runs `make test` on a clean clone before
// `make probes` installs node_modules, and there this test can only skip.
const requireProbesEnv = "SOUNDGATE_REQUIRE_PROBES"

// frameworkProbe is the probe script, relative to the repository root.
const frameworkProbe = "probes/js/mediated-run/langgraph-http.mjs"

// sinkRequest is one request the loopback sink received.
type sinkRequest struct {
	At   time.Time
	Path string
	Body string
}

// sink is a loopback HTTP server that counts every byte any connection sends it
// and records every request with the time it arrived.
type sink struct {
	mu    sync.Mutex
	bytes int64
	conns int
	reqs  []sinkRequest
	srv   *http.Server
	url   string
}

type countingConn struct {
	net.Conn
	s *sink
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.s.mu.Lock()
	c.s.bytes += int64(n)
	c.s.mu.Unlock()
	return n, err
}

type countingListener struct {
	net.Listener
	s *sink
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	l.s.conns++
	l.s.mu.Unlock()
	return countingConn{c, l.s}, nil
}

func startSink(t *testing.T) *sink {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{url: "http://" + l.Addr().String()}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		s.mu.Lock()
		s.reqs = append(s.reqs, sinkRequest{At: time.Now(), Path: r.URL.Path, Body: string(b)})
		s.mu.Unlock()
		io.WriteString(w, "sunk\n")
	}), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(countingListener{l, s})
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// snapshot returns the bytes, connections and requests the sink has seen.
func (s *sink) snapshot() (int64, int, []sinkRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.conns, append([]sinkRequest(nil), s.reqs...)
}

// lineWriter passes the probe's output on as lines and keeps a transcript.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	all   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.buf.Next(i + 1))
		select {
		case w.lines <- strings.TrimSpace(line):
		default: // the test reads only the protocol lines it waits for
		}
	}
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.all.String()
}

// hiddenInSandbox reports whether path lies where the sandbox mounts an empty tmpfs.
func hiddenInSandbox(path string) bool {
	for _, dir := range []string{"/tmp", "/run", "/var/run"} {
		if path == dir || strings.HasPrefix(path, dir+"/") {
			return true
		}
	}
	return false
}

// requireFrameworkProbe finds node and the probe's node_modules, or skips saying
// how to install them (fails with SOUNDGATE_REQUIRE_PROBES=1).
func requireFrameworkProbe(t *testing.T) (node, root string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	node, err = exec.LookPath("node")
	if err != nil {
		missing = "node is not on PATH: install Node.js >= 20"
	} else if _, err := os.Stat(filepath.Join(root, "probes", "js", "node_modules", "@langchain", "langgraph", "package.json")); err != nil {
		missing = "probes/js/node_modules lacks @langchain/langgraph: run probes/install.sh (or npm ci --prefix probes/js)"
	}
	if missing == "" {
		if node, err = filepath.EvalSymlinks(node); err != nil {
			t.Fatal(err)
		}
		return node, root
	}
	if os.Getenv(requireProbesEnv) == "1" {
		t.Fatalf("%s (%s=1: a missing probe dependency is a failure)", missing, requireProbesEnv)
	}
	t.Skipf("skipped: %s (%s=1, as make probes-mediated-run sets it, makes this a failure)", missing, requireProbesEnv)
	return "", ""
}

// TestMediatedRun is `soundgate run` end to end against a real gate server: the agent
// in the sandbox makes a real HTTP request while its run is paused; nothing reaches the
// upstream until the approver approves; after a cancel the next agent's request is
// refused and again nothing reaches the upstream.
func TestMediatedRun(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	ctx := context.Background()
	ops, alice, agent := gate(t)
	up := startSink(t)
	hits := func() int { _, _, reqs := up.snapshot(); return len(reqs) }
	if _, err := ops.Open(ctx, "run-1", 0); err != nil {
		t.Fatal(err)
	}
	// The framework pauses the run: a gated step waits for its approval.
	if res, err := agent.Admit(ctx, "run-1", "plan", 1, client.AdmitOptions{Gated: true}); err != nil || res.Answer != core.AnswerHeld {
		t.Fatalf("gated admit: %+v %v", res, err)
	}
	runAgent := func(key string) (chan int, *bytes.Buffer) {
		var out bytes.Buffer
		proxy := &egress.Proxy{Admitter: &egress.ClientAdmitter{C: agent}, Run: "run-1", HeldWaitMax: 20 * time.Second}
		done := startProxied(t, sandbox.Config{
			Argv:     []string{exe(t)},
			Env:      []string{"SOUNDGATE_ESCAPE_PROBE=get " + up.url + "/effect " + key, "HTTP_PROXY=http://127.0.0.1:3128"},
			Dir:      "/",
			ReadOnly: []string{filepath.Dir(exe(t))},
			Stdout:   &out, Stderr: &out,
		}, proxy)
		return done, &out
	}
	done, out := runAgent("fetch-1")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := agent.Status(ctx, "run-1", "fetch-1")
		if err == nil && st.Effect != nil && st.Effect.Status == core.EffectHeld {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's request never became held: %v %+v; agent said %q", err, st, out.String())
		}
	}
	time.Sleep(200 * time.Millisecond)
	if hits() != 0 {
		t.Fatal("the request reached the upstream while the run was paused")
	}
	if _, err := alice.Decide(ctx, "run-1", "plan", core.Approve); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 || hits() != 1 {
			t.Fatalf("after approve: exit %d, upstream hits %d; agent said %q", code, hits(), out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not finish after approve")
	}
	if _, err := ops.Cancel(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	done, out = runAgent("fetch-2")
	select {
	case code := <-done:
		if code != 3 || hits() != 1 || !strings.Contains(out.String(), "status 403") || !strings.Contains(out.String(), "cancelled") {
			t.Fatalf("after cancel: exit %d, upstream hits %d; agent said %q", code, hits(), out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not finish after cancel")
	}
}

// TestFrameworkProbe runs the LangGraph.js workflow of the probes (interrupt() in
// one node while a sibling node runs in the same superstep) inside the sandbox of
// `soundgate run`, its effects real HTTP POSTs through the gate's proxy to a
// loopback sink. While the run is paused on the gated node's approval the
// sibling's POST is held at the proxy and the sink receives zero bytes; after an
// approval it arrives exactly once (and the gated node's own POST once); after a
// rejection it is refused and the sink never receives anything.
func TestFrameworkProbe(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	node, root := requireFrameworkProbe(t)
	ctx := context.Background()
	ops, alice, agent := gate(t)

	cases := []struct {
		name     string
		decision core.Decision
		word     string
		sibling  string   // the sibling's line, as the probe prints it
		wantSunk []string // paths the sink must receive, each once (after the decision unless leaky)
		leaky    bool     // the proxy's admitter answers admit where the gate says held
	}{
		{name: "approve", decision: core.Approve, word: "approve", sibling: "sibling status=200 verdict=admit",
			wantSunk: []string{"/send_email", "/delete"}},
		{name: "reject", decision: core.Reject, word: "reject", sibling: "sibling status=403"},
		// The negative control: a proxy whose admitter lets held requests through.
		// The same checks must see the sibling's POST reach the sink during the pause.
		{name: "control-leaky-admitter", leaky: true, decision: core.Approve, word: "approve", sibling: "sibling status=200 verdict=admit",
			wantSunk: []string{"/send_email", "/delete"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			run := "framework-" + tc.name
			if _, err := ops.Open(ctx, run, 0); err != nil {
				t.Fatal(err)
			}
			sk := startSink(t)
			// An *os.File goes to the agent as it is: with an io.Pipe the sandbox's
			// Wait would also wait for a copying goroutine blocked on our end.
			stdinR, stdinW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stdinR.Close(); stdinW.Close() })
			out := &lineWriter{lines: make(chan string, 64)}
			proxyURL := fmt.Sprintf("http://127.0.0.1:%d", sandbox.DefaultProxyPort)
			cfg := sandbox.Config{
				Argv: []string{node, filepath.Join(root, frameworkProbe)},
				Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "HTTP_PROXY=" + proxyURL, "http_proxy=" + proxyURL,
					"SOUNDGATE_RUN=" + run, "SOUNDGATE_PROBE_SINK=" + sk.url},
				Dir:         filepath.Join(root, "probes", "js"),
				WritableTmp: true,
				Stdin:       stdinR, Stdout: out, Stderr: out,
			}
			if hiddenInSandbox(root) {
				// A checkout under /tmp or /run (a CI clone) is covered by the sandbox's
				// empty tmpfs: show the probe's folder read-only. A read-only path under
				// /tmp excludes a writable /tmp (sandbox.Config.ReadOnly).
				cfg.ReadOnly = []string{filepath.Join(root, "probes", "js")}
				cfg.WritableTmp = false
			}
			var evMu sync.Mutex
			var events []egress.Event
			var admitter egress.Admitter = &egress.ClientAdmitter{C: agent}
			if tc.leaky {
				admitter = leakyAdmitter{admitter}
			}
			proxy := &egress.Proxy{Admitter: admitter, Run: core.RunID(run), HeldWaitMax: frameworkStepWait,
				Log: func(e egress.Event) { evMu.Lock(); events = append(events, e); evMu.Unlock() }}
			done := startProxied(t, cfg, proxy)

			waitLine := func(prefix string) string {
				t.Helper()
				timer := time.NewTimer(frameworkStepWait)
				defer timer.Stop()
				for {
					select {
					case line := <-out.lines:
						if strings.HasPrefix(line, prefix) {
							return line
						}
					case code := <-done:
						// Its output is written before Wait returns: look at what is left.
						for more := true; more; {
							select {
							case line := <-out.lines:
								if strings.HasPrefix(line, prefix) {
									done <- code
									return line
								}
							default:
								more = false
							}
						}
						t.Fatalf("the probe exited %d before %q; it said:\n%s", code, prefix, out.String())
					case <-timer.C:
						t.Fatalf("no %q from the probe in %v; it said:\n%s", prefix, frameworkStepWait, out.String())
					}
				}
			}
			send := func(s string) {
				t.Helper()
				if _, err := io.WriteString(stdinW, s+"\n"); err != nil {
					t.Fatalf("writing %q to the probe: %v", s, err)
				}
			}
			waitEffect := func(key string, want core.EffectStatus) {
				t.Helper()
				for deadline := time.Now().Add(frameworkStepWait); ; time.Sleep(frameworkPoll) {
					st, err := agent.Status(ctx, run, key)
					if err == nil && st.Effect != nil && st.Effect.Status == want {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("effect %s never became %v: %v %+v; the probe said:\n%s", key, want, err, st, out.String())
					}
				}
			}

			// The plan node registers the gated effect: the run is paused from here.
			waitLine("plan P1 gated=delete")
			planAt := time.Since(start)
			if res, err := agent.Admit(ctx, run, "delete", 1, client.AdmitOptions{Gated: true}); err != nil || res.Answer != core.AnswerHeld {
				t.Fatalf("gated admit: %+v %v", res, err)
			}
			send("go")
			// The superstep runs: the gated node interrupts, the sibling's POST
			// reaches the proxy and is held there.
			waitEffect("send_email", core.EffectHeld)
			if tc.leaky {
				for deadline := time.Now().Add(frameworkStepWait); ; time.Sleep(frameworkPoll) {
					if _, _, r := sk.snapshot(); len(r) > 0 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("negative control: the leaky proxy's request never reached the sink; the probe said:\n%s", out.String())
					}
				}
				if st, err := agent.Status(ctx, run, "delete"); err != nil || len(st.Pending) != 1 || st.Pending[0] != "delete" {
					t.Fatalf("negative control: the run is not paused on delete: %+v %v", st, err)
				}
			} else if b, c, r := sk.snapshot(); b != 0 || c != 0 || len(r) != 0 {
				t.Fatalf("while paused the sink received %d bytes, %d connections, %d requests", b, c, len(r))
			}
			if !tc.leaky {
				time.Sleep(frameworkPauseWindow)
			}
			pausedBytes, pausedConns, pausedReqs := sk.snapshot()
			if tc.leaky && pausedBytes == 0 {
				t.Fatal("negative control: the sink check saw no bytes during the pause")
			}
			if !tc.leaky && (pausedBytes != 0 || pausedConns != 0 || len(pausedReqs) != 0) {
				t.Fatalf("while paused the sink received %d bytes, %d connections, %d requests", pausedBytes, pausedConns, len(pausedReqs))
			}
			decided := time.Now()
			if _, err := alice.Decide(ctx, run, "delete", tc.decision); err != nil {
				t.Fatal(err)
			}
			sib := waitLine("sibling ")
			if !strings.HasPrefix(sib, tc.sibling) {
				t.Fatalf("sibling: got %q, want %q...; the probe said:\n%s", sib, tc.sibling, out.String())
			}
			waitLine("interrupt ")
			send(tc.word)
			stdinW.Close() // the probe reads nothing more
			if tc.decision == core.Approve {
				if g := waitLine("gated "); g != "gated status=200 verdict=admit" {
					t.Fatalf("gated node: %q; the probe said:\n%s", g, out.String())
				}
			}
			waitLine("done ")
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("probe exit %d; it said:\n%s", code, out.String())
				}
			case <-time.After(frameworkStepWait):
				t.Fatalf("the probe did not exit; it said:\n%s", out.String())
			}

			b, _, reqs := sk.snapshot()
			got := map[string]int{}
			for _, r := range reqs {
				got[r.Path]++
				if leaked := tc.leaky && r.Path == "/send_email"; leaked == r.At.After(decided) {
					t.Errorf("%s reached the sink at %v, decision at %v (leaky proxy: %v)", r.Path, r.At, decided, tc.leaky)
				}
			}
			if len(reqs) != len(tc.wantSunk) {
				t.Errorf("the sink received %d requests %v, want %v", len(reqs), got, tc.wantSunk)
			}
			for _, p := range tc.wantSunk {
				if got[p] != 1 {
					t.Errorf("the sink received %s %d times, want once", p, got[p])
				}
			}
			if tc.decision == core.Reject {
				if b != 0 {
					t.Errorf("after the rejection the sink received %d bytes", b)
				}
				waitEffect("send_email", core.EffectRejected)
				if !strings.Contains(sib, "rejected") {
					t.Errorf("the sibling's refusal does not say rejected: %q", sib)
				}
			}
			evMu.Lock()
			for _, e := range events {
				t.Logf("egress: %s", e)
			}
			evMu.Unlock()
			sibAt := ""
			for _, r := range reqs {
				if r.Path == "/send_email" {
					sibAt = fmt.Sprintf(", sibling arrived %v after the decision", r.At.Sub(decided).Round(time.Millisecond))
					if tc.leaky {
						sibAt = fmt.Sprintf(", sibling arrived %v before the decision (the leak)", decided.Sub(r.At).Round(time.Millisecond))
					}
				}
			}
			t.Logf("%s: while paused %d bytes, %d connections, %d requests at the sink; after the decision %d requests %v%s; %v (node and LangGraph up after %v, decision at %v)",
				tc.name, pausedBytes, pausedConns, len(pausedReqs), len(reqs), got, sibAt, time.Since(start).Round(time.Millisecond),
				planAt.Round(time.Millisecond), decided.Sub(start).Round(time.Millisecond))
		})
	}
}

// leakyAdmitter is the negative control's admitter: it answers admit whenever the
// gate answers held, so the proxy forwards during the pause.
type leakyAdmitter struct{ egress.Admitter }

func (a leakyAdmitter) Admit(ctx context.Context, run core.RunID, key core.Key) (egress.Verdict, error) {
	// A short deadline: the gate answers held at once instead of parking the ask.
	ctx, cancel := context.WithTimeout(ctx, leakyAskWait)
	defer cancel()
	v, err := a.Admitter.Admit(ctx, run, key)
	if err == nil && v.Answer == core.AnswerHeld {
		v = egress.Verdict{Answer: core.AnswerAdmit}
	}
	return v, err
}
