package egress_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
)

// scripted is a fake gate: it answers each key from a table and records the calls.
type scripted struct {
	mu        sync.Mutex
	answers   map[core.Key][]egress.Verdict // consumed in order; the last one repeats
	err       error
	admits    []core.Key
	completes []string
}

func (s *scripted) Admit(_ context.Context, _ core.RunID, k core.Key) (egress.Verdict, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.admits = append(s.admits, k)
	if s.err != nil {
		return egress.Verdict{}, s.err
	}
	q := s.answers[k]
	if len(q) == 0 {
		return egress.Verdict{Answer: core.AnswerAdmit}, nil
	}
	v := q[0]
	if len(q) > 1 {
		s.answers[k] = q[1:]
	}
	return v, nil
}

func (s *scripted) Complete(_ context.Context, r core.RunID, k core.Key, o core.Outcome, result string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completes = append(s.completes, fmt.Sprintf("%s %s %s %s", r, k, o, result))
	return nil
}

// upstream is a loopback HTTP server that counts what reaches it.
type upstream struct {
	*httptest.Server
	hits    atomic.Int64
	headers chan http.Header
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{headers: make(chan http.Header, 16)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		select {
		case u.headers <- r.Header.Clone():
		default:
		}
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "upstream saw %s %s body=%q", r.Method, r.URL.Path, b)
	}))
	t.Cleanup(u.Close)
	return u
}

// startProxy serves p on a loopback listener and returns a client that uses it.
func startProxy(t *testing.T, p *egress.Proxy) (*http.Client, string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { l.Close() })
	pu, _ := url.Parse("http://" + l.Addr().String())
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true},
		Timeout: 10 * time.Second}, l.Addr().String()
}

type logged struct {
	mu sync.Mutex
	ev []egress.Event
}

func (l *logged) add(e egress.Event) { l.mu.Lock(); l.ev = append(l.ev, e); l.mu.Unlock() }
func (l *logged) last(t *testing.T) egress.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ev) == 0 {
		t.Fatal("no event logged")
	}
	return l.ev[len(l.ev)-1]
}

func TestForwardAnswers(t *testing.T) {
	held := egress.Verdict{Answer: core.AnswerHeld}
	cases := []struct {
		name       string
		answers    []egress.Verdict
		gateErr    error
		wait       time.Duration
		status     int
		body       string // substring
		forwarded  bool
		wantAnswer core.Answer
	}{
		{"admit", nil, nil, 0, 200, "upstream saw POST /x body=\"hello\"", true, core.AnswerAdmit},
		{"held then admit", []egress.Verdict{held, held, {Answer: core.AnswerAdmit}}, nil, 0, 200, "upstream saw", true, core.AnswerAdmit},
		{"held then cancelled", []egress.Verdict{held, {Answer: core.AnswerDenied, Reason: core.ReasonCancelled}}, nil, 0, 403, "denied (cancelled); nothing was sent", false, core.AnswerDenied},
		{"rejected", []egress.Verdict{{Answer: core.AnswerDenied, Reason: core.ReasonRejected}}, nil, 0, 403, "denied (rejected)", false, core.AnswerDenied},
		{"timed out", []egress.Verdict{{Answer: core.AnswerDenied, Reason: core.ReasonTimedOut}}, nil, 0, 403, "denied (timed_out)", false, core.AnswerDenied},
		{"duplicate", []egress.Verdict{{Answer: core.AnswerDuplicate}}, nil, 0, 409, "already admitted (duplicate)", false, core.AnswerDuplicate},
		{"held past the wait", []egress.Verdict{held}, nil, 150 * time.Millisecond, 504, "still held (approval pending)", false, core.AnswerHeld},
		{"gate unreachable", nil, errors.New("connection refused"), 0, 502, "could not be asked", false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newUpstream(t)
			gate := &scripted{answers: map[core.Key][]egress.Verdict{"k1": tc.answers}, err: tc.gateErr}
			var log logged
			client, _ := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1", Log: log.add, HeldWaitMax: tc.wait})
			req, _ := http.NewRequest("POST", up.URL+"/x", strings.NewReader("hello"))
			req.Header.Set(egress.HeaderKey, "k1")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, b, tc.status, tc.body)
			}
			if got := up.hits.Load() > 0; got != tc.forwarded {
				t.Fatalf("forwarded=%v, want %v", got, tc.forwarded)
			}
			ev := log.last(t)
			if ev.Answer != tc.wantAnswer || ev.Key != "k1" || ev.Run != "r1" || ev.Status != tc.status {
				t.Fatalf("logged %v", ev)
			}
			gate.mu.Lock()
			defer gate.mu.Unlock()
			if tc.forwarded != (len(gate.completes) == 1) {
				t.Fatalf("completes %q", gate.completes)
			}
			if tc.forwarded && gate.completes[0] != "r1 k1 ok HTTP 200" {
				t.Fatalf("complete %q", gate.completes[0])
			}
			if tc.forwarded {
				if h := <-up.headers; h.Get(egress.HeaderKey) != "" || h.Get(egress.HeaderRun) != "" {
					t.Fatalf("gate headers reached upstream: %v", h)
				}
			}
		})
	}
}

func TestDerivedKeysCountRepeats(t *testing.T) {
	up := newUpstream(t)
	gate := &scripted{}
	client, _ := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1"})
	for range 2 {
		resp, err := client.Get(up.URL + "/same")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := client.Get(up.URL + "/other")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if len(gate.admits) != 3 {
		t.Fatalf("admits %q", gate.admits)
	}
	a, b, c := string(gate.admits[0]), string(gate.admits[1]), string(gate.admits[2])
	host := strings.TrimPrefix(up.URL, "http://")
	if !strings.HasPrefix(a, "GET "+host+" ") || !strings.HasSuffix(a, " #1") || !strings.HasSuffix(b, " #2") ||
		strings.TrimSuffix(a, "#1") != strings.TrimSuffix(b, "#2") || !strings.HasSuffix(c, " #1") || c[:len(c)-3] == a[:len(a)-3] {
		t.Fatalf("derived keys %q %q %q", a, b, c)
	}
}

func TestRefusesNonProxyRequests(t *testing.T) {
	gate := &scripted{}
	_, addr := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1"})
	resp, err := http.Get("http://" + addr + "/direct")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "not a proxy request") || len(gate.admits) != 0 {
		t.Fatalf("got %d %q, admits %v", resp.StatusCode, b, gate.admits)
	}
}

func TestNoRunIsRefused(t *testing.T) {
	up := newUpstream(t)
	client, _ := startProxy(t, &egress.Proxy{Admitter: &scripted{}})
	resp, err := client.Get(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || up.hits.Load() != 0 {
		t.Fatalf("status %d, hits %d", resp.StatusCode, up.hits.Load())
	}
}

// echoServer is a raw TCP sink that echoes one line and counts connections.
func echoServer(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, "echo: "+line)
			}()
		}
	}()
	return l.Addr().String(), &n
}

func connect(t *testing.T, proxyAddr, target, key string) (*bufio.Reader, net.Conn, string) {
	c, err := net.DialTimeout("tcp", proxyAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s: %s\r\n\r\n", target, target, egress.HeaderKey, key)
	br := bufio.NewReader(c)
	status, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil || line == "\r\n" {
			break
		}
	}
	return br, c, status
}

func TestConnectTunnel(t *testing.T) {
	target, conns := echoServer(t)
	gate := &scripted{answers: map[core.Key][]egress.Verdict{
		"no": {{Answer: core.AnswerDenied, Reason: core.ReasonRejected}},
	}}
	_, addr := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1"})

	br, c, status := connect(t, addr, target, "no")
	if !strings.Contains(status, "403") {
		t.Fatalf("denied CONNECT answered %q", status)
	}
	body, _ := io.ReadAll(br)
	if !strings.Contains(string(body), "denied (rejected)") || conns.Load() != 0 {
		t.Fatalf("denied CONNECT: body %q, upstream connections %d", body, conns.Load())
	}
	c.Close()

	br, c, status = connect(t, addr, target, "yes")
	if !strings.Contains(status, "200") {
		t.Fatalf("admitted CONNECT answered %q", status)
	}
	io.WriteString(c, "ping\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "echo: ping\n" || conns.Load() != 1 {
		t.Fatalf("tunnel: %q %v, upstream connections %d", line, err, conns.Load())
	}
}

// TestLocalGatePause runs the proxy against the real core: a request is held while
// the run has a pending approval, forwarded after approve; after cancel it is denied.
func TestLocalGatePause(t *testing.T) {
	up := newUpstream(t)
	gate := egress.NewLocalGate()
	if err := gate.Open("r1"); err != nil {
		t.Fatal(err)
	}
	if a, err := gate.Pause("r1", "plan"); err != nil || a != core.AnswerHeld {
		t.Fatalf("pause: %v %v", a, err)
	}
	var log logged
	client, _ := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1", Log: log.add})
	type res struct {
		status int
		err    error
	}
	get := func(key string) chan res {
		ch := make(chan res, 1)
		go func() {
			req, _ := http.NewRequest("GET", up.URL+"/"+key, nil)
			req.Header.Set(egress.HeaderKey, key)
			resp, err := client.Do(req)
			if err != nil {
				ch <- res{0, err}
				return
			}
			resp.Body.Close()
			ch <- res{resp.StatusCode, nil}
		}()
		return ch
	}
	first := get("fetch-1")
	waitHeld(t, gate, "r1", "fetch-1")
	if up.hits.Load() != 0 {
		t.Fatal("a held request reached upstream")
	}
	if err := gate.Decide("r1", "plan", core.Approve); err != nil {
		t.Fatal(err)
	}
	if r := <-first; r.err != nil || r.status != 200 || up.hits.Load() != 1 {
		t.Fatalf("after approve: %+v, hits %d", r, up.hits.Load())
	}
	if e, _ := gate.Effect("r1", "fetch-1"); e.Status != core.EffectCompleted {
		t.Fatalf("fetch-1 is %v, want completed", e.Status)
	}

	if a, _ := gate.Pause("r1", "plan-2"); a != core.AnswerHeld {
		t.Fatalf("second pause answered %v", a)
	}
	second := get("fetch-2")
	waitHeld(t, gate, "r1", "fetch-2")
	if err := gate.Cancel("r1"); err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.err != nil || r.status != 403 || up.hits.Load() != 1 {
		t.Fatalf("after cancel: %+v, hits %d", r, up.hits.Load())
	}
	if ev := log.last(t); ev.Answer != core.AnswerDenied || ev.Reason != core.ReasonCancelled {
		t.Fatalf("logged %v", ev)
	}
}

func waitHeld(t *testing.T, g *egress.LocalGate, r core.RunID, k core.Key) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if e, _ := g.Effect(r, k); e.Status == core.EffectHeld {
			return
		}
	}
	t.Fatalf("%s/%s never became held", r, k)
}

// TestRunIsPinned: a proxy with a run refuses requests that name another run, so that
// an agent cannot move its effects to a run that is not paused.
func TestRunIsPinned(t *testing.T) {
	up := newUpstream(t)
	gate := &scripted{}
	hc, _ := startProxy(t, &egress.Proxy{Admitter: gate, Run: "r1"})
	for _, tc := range []struct {
		run    string
		status int
	}{{"r2", 403}, {"r1", 200}, {"", 200}} {
		req, _ := http.NewRequest("GET", up.URL+"/x", nil)
		if tc.run != "" {
			req.Header.Set(egress.HeaderRun, tc.run)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("run %q: %d %q, want %d", tc.run, resp.StatusCode, b, tc.status)
		}
	}
	if up.hits.Load() != 2 || len(gate.admits) != 2 {
		t.Fatalf("hits %d, admits %v", up.hits.Load(), gate.admits)
	}
}

// TestEventStringShowsWhatTheAgentChose: a target or method that would forge a log
// line or reverse it is quoted in the egress log, as ids are on the wire's tools.
func TestEventStringShowsWhatTheAgentChose(t *testing.T) {
	for _, c := range []struct{ method, target, want string }{
		{"GET", "http://example.test/a", "GET http://example.test/a answer="},
		{"GET", "http://example.test/\u202egnp.exe", `GET "http://example.test/\u202egnp.exe" answer=`},
		{"GET", "http://example.test/a\negress run=r1 key=\"k\" GET http://ok answer=admit", `GET "http://example.test/a\negress run=r1`},
		{"G\x1bET", "http://example.test/", `"G\x1bET" http://example.test/`},
	} {
		line := egress.Event{Run: "r1", Key: "k", Method: c.method, Target: c.target}.String()
		if !strings.Contains(line, c.want) || strings.ContainsAny(line, "\n\x1b\u202e") {
			t.Errorf("Event{%q %q}.String() = %q, want it to hold %q and no raw control or bidirectional character", c.method, c.target, line, c.want)
		}
	}
}
