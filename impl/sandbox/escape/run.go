package escape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/sandbox"
	"golang.org/x/sys/unix"
)

// Limits of one matrix run.
const (
	// runTimeout bounds one sandboxed probe.
	runTimeout = 60 * time.Second
	// sinkBytesMax bounds what a sink reads (one payload is enough to call a leak).
	sinkBytesMax = 4096
	// outputBytesMax bounds the probe's output the runner reads.
	outputBytesMax = 1 << 20
)

// The gate's run and keys in the matrix.
const (
	runID    = core.RunID("escape-matrix")
	admitKey = core.Key("probe-admitted")
	denyKey  = core.Key("probe-denied")
)

// Result is the outcome of one channel.
type Result struct {
	Channel Channel
	Attempt Attempt
	// SinkBytes is what the channel's host sink received.
	SinkBytes int
	// Leaked: the sink received bytes, or a blocked call succeeded.
	Leaked bool
	// OK: the outcome is the one expected with every layer on.
	OK bool
	// NA: the channel does not exist on this machine (Why says why).
	NA bool
	// Why explains a result that is not OK, or not applicable.
	Why string
}

// Report is one run of the matrix.
type Report struct {
	Disable sandbox.Layers
	Results []Result
	// Events is the proxy's log of the run.
	Events []egress.Event
}

// Result returns the result of the named channel.
func (r *Report) Result(name string) (Result, bool) {
	for _, x := range r.Results {
		if x.Channel.Name == name {
			return x, true
		}
	}
	return Result{}, false
}

// Failures lists the results that are not as expected.
func (r *Report) Failures() []Result {
	var out []Result
	for _, x := range r.Results {
		if !x.OK {
			out = append(out, x)
		}
	}
	return out
}

// sink counts the bytes that reach one host endpoint.
type sink struct {
	n     atomic.Int64
	close func()
}

func (s *sink) count(r io.Reader) {
	n, _ := io.Copy(io.Discard, io.LimitReader(r, sinkBytesMax))
	s.n.Add(n)
}

// settleQuiet is how long the sinks' total must stay unchanged before it is read;
// settleMax bounds the wait (a connection may still sit in a listener's backlog
// when the probe exits).
const (
	settleQuiet = 200 * time.Millisecond
	settleMax   = 3 * time.Second
)

// settle waits until no sink has received anything for settleQuiet.
func settle(sinks map[string]*sink) {
	total := func() (n int64) {
		for _, s := range sinks {
			n += s.n.Load()
		}
		return n
	}
	last, since := total(), time.Now()
	for start := time.Now(); time.Since(start) < settleMax; time.Sleep(20 * time.Millisecond) {
		if t := total(); t != last {
			last, since = t, time.Now()
		} else if time.Since(since) >= settleQuiet {
			return
		}
	}
}

func streamSink(l net.Listener) *sink {
	s := &sink{close: func() { l.Close() }}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(runTimeout))
				s.count(c)
			}()
		}
	}()
	return s
}

func packetSink(pc net.PacketConn) *sink {
	s := &sink{close: func() { pc.Close() }}
	go func() {
		buf := make([]byte, sinkBytesMax)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.n.Add(int64(n))
		}
	}()
	return s
}

// Run runs the matrix once with the layers d switched off. exe is the probe binary
// (normally os.Executable()); the calling program must call RunProbeIfChild.
func Run(exe string, d sandbox.Layers) (*Report, error) {
	m := &matrix{sinks: map[string]*sink{}}
	defer m.close()
	if err := m.openNetSinks(); err != nil {
		return nil, err
	}
	if err := m.openFileSinks(); err != nil {
		return nil, err
	}
	if err := m.openGate(); err != nil {
		return nil, err
	}
	tj, _ := json.Marshal(m.targets)
	cfg := sandbox.Config{
		Argv:      []string{exe},
		Env:       []string{probeEnv + "=" + string(tj), "PATH=/usr/bin:/bin"},
		Dir:       "/",
		Writable:  []string{m.targets.WritableDir},
		ReadOnly:  []string{m.dir, filepath.Dir(exe)},
		ProxyPort: m.proxyPort,
		Disable:   d,
	}
	attempts, err := m.probeMatrix(cfg)
	if err != nil {
		return nil, err
	}
	if err := m.probeForeign(exe, cfg, attempts); err != nil {
		return nil, err
	}
	rep := &Report{Disable: d}
	m.evMu.Lock()
	rep.Events = append(rep.Events, m.events...)
	m.evMu.Unlock()
	for _, ch := range Channels {
		a, ok := attempts[ch.Name]
		rep.Results = append(rep.Results, m.judge(ch, a, ok, rep.Events))
	}
	m.checkHostFiles(rep)
	return rep, nil
}

// roContent is what the read-only host file holds.
const roContent = "the host's file\n"

// matrix is the host's side of one run: the sinks behind the channels, the files the
// probe attacks, the gate and the upstream behind the proxy, and what to undo.
type matrix struct {
	cleanups  []func()
	sinks     map[string]*sink
	targets   Targets
	proxyPort int
	dir       string // holds the read-only and the writable directory
	fifoFD    int    // the host FIFO's reader
	fifoSink  *sink
	proxy     *egress.Proxy
	upHits    sync.Map // upstream path -> *atomic.Int64
	evMu      sync.Mutex
	events    []egress.Event
}

// close undoes the run's set-up, last first.
func (m *matrix) close() {
	for i := len(m.cleanups) - 1; i >= 0; i-- {
		m.cleanups[i]()
	}
}

func (m *matrix) addSink(name string, s *sink) {
	m.sinks[name] = s
	m.cleanups = append(m.cleanups, s.close)
}

// openNetSinks opens the sinks on the host's loopback. The 127.0.0.2 sink takes a
// free port that then becomes the proxy's port, so that only the network namespace
// keeps them apart.
func (m *matrix) openNetSinks() error {
	other, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return fmt.Errorf("soundgate/escape: sink on 127.0.0.2: %w", err)
	}
	m.proxyPort = other.Addr().(*net.TCPAddr).Port
	m.addSink("tcp-other-address", streamSink(other))
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("soundgate/escape: TCP sink: %w", err)
	}
	tcpSink := streamSink(tcp)
	m.addSink("tcp-direct", tcpSink)
	m.sinks["mptcp"] = tcpSink
	if tcp6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		m.targets.TCP6Sink = tcp6.Addr().String()
		m.addSink("tcp6-direct", streamSink(tcp6))
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("soundgate/escape: UDP sink: %w", err)
	}
	m.addSink("udp", packetSink(udp))
	m.targets.TCPSink, m.targets.OtherAddress = tcp.Addr().String(), other.Addr().String()
	m.targets.UDPSink = udp.LocalAddr().String()
	return nil
}

// openFileSinks makes the host's directories (one read-only to the agent, one
// writable), the Unix socket sinks, the FIFO and the read-only file, and names the
// /dev/shm file the probe tries to create.
func (m *matrix) openFileSinks() error {
	dir, err := os.MkdirTemp("", "soundgate-escape-")
	if err != nil {
		return err
	}
	m.dir = dir
	m.cleanups = append(m.cleanups, func() { os.RemoveAll(dir) })
	roDir, wDir := filepath.Join(dir, "outside"), filepath.Join(dir, "writable")
	for _, d := range []string{roDir, wDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			return err
		}
	}
	unixPath := filepath.Join(roDir, "sink.sock")
	ul, err := net.Listen("unix", unixPath)
	if err != nil {
		return fmt.Errorf("soundgate/escape: Unix sink: %w", err)
	}
	m.addSink("unix-path", streamSink(ul))
	abstract := fmt.Sprintf("soundgate-escape-%d-%d", os.Getpid(), time.Now().UnixNano())
	al, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		return fmt.Errorf("soundgate/escape: abstract Unix sink: %w", err)
	}
	m.addSink("unix-abstract", streamSink(al))
	fifo := filepath.Join(roDir, "sink.fifo")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		return err
	}
	// A reader (and a writer, so no end of file), never blocking.
	ffd, err := unix.Open(fifo, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	m.fifoFD, m.fifoSink = ffd, &sink{close: func() { unix.Close(ffd) }}
	m.addSink("write-fifo", m.fifoSink)
	roFile := filepath.Join(roDir, "file.txt")
	if err := os.WriteFile(roFile, []byte(roContent), 0o666); err != nil {
		return err
	}
	shmName := filepath.Base(dir)
	m.cleanups = append(m.cleanups, func() { os.Remove("/dev/shm/" + shmName) })
	t := &m.targets
	t.UnixPath, t.UnixAbstract, t.ReadOnlyFile, t.ReadOnlyDir, t.FIFO = unixPath, abstract, roFile, roDir, fifo
	t.ShmName, t.WritableDir = shmName, wDir
	return nil
}

// openGate sets up the gate (a local core with one run, whose denied key an approver
// rejected; this process), the upstream the proxy forwards to, and the proxy, logging
// its events.
func (m *matrix) openGate() error {
	gate := egress.NewLocalGate()
	if err := gate.Open(runID); err != nil {
		return err
	}
	if _, err := gate.Pause(runID, denyKey); err != nil {
		return err
	}
	if err := gate.Decide(runID, denyKey, core.Reject); err != nil {
		return err
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := m.upHits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		io.WriteString(w, "upstream answered "+r.URL.Path)
	}))
	m.cleanups = append(m.cleanups, up.Close)
	m.proxy = &egress.Proxy{Admitter: gate, Run: runID, HeldWaitMax: 5 * time.Second, Log: func(e egress.Event) {
		m.evMu.Lock()
		m.events = append(m.events, e)
		m.evMu.Unlock()
	}}
	t := &m.targets
	t.GatePID = os.Getpid()
	t.ProxyURL = fmt.Sprintf("http://127.0.0.1:%d", m.proxyPort)
	t.AdmitURL, t.AdmitKey = up.URL+"/admitted", string(admitKey)
	t.DenyURL, t.DenyKey = up.URL+"/denied", string(denyKey)
	return nil
}

// hits is how many requests for path reached the upstream.
func (m *matrix) hits(path string) int64 {
	if n, ok := m.upHits.Load(path); ok {
		return n.(*atomic.Int64).Load()
	}
	return 0
}

// probeMatrix runs the probe over every channel in one sandbox and collects its
// attempts, then what reached the FIFO, and lets the sinks settle.
func (m *matrix) probeMatrix(cfg sandbox.Config) (map[string]Attempt, error) {
	out, code, err := runSandbox(cfg, m.proxy)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("soundgate/escape: the probe exited with status %d: %s", code, tail(out))
	}
	attempts := map[string]Attempt{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var a Attempt
		if json.Unmarshal(sc.Bytes(), &a) == nil && a.Channel != "" {
			attempts[a.Channel] = a
		}
	}
	// The FIFO's reader: drain what is buffered without blocking.
	buf := make([]byte, sinkBytesMax)
	if n, _ := unix.Read(m.fifoFD, buf); n > 0 {
		m.fifoSink.n.Add(int64(n))
	}
	settle(m.sinks)
	return attempts, nil
}

// probeForeign runs the other-architecture probes, which die (or not) on their own,
// in one sandbox each, and adds their attempts.
func (m *matrix) probeForeign(exe string, cfg sandbox.Config, attempts map[string]Attempt) error {
	d := cfg.Disable
	for _, k := range []struct{ name, mode string }{{"x32-syscall", modeX32}, {"i386-syscall", modeI386}} {
		a := Attempt{Channel: k.name, Step: k.mode}
		if d.Landlock || d.NetNS || d.ReadOnlyRoot {
			// Only seccomp closes these; a control of another layer skips them.
			a.Step = "skipped"
			attempts[k.name] = a
			continue
		}
		if k.mode == modeX32 && runtime.GOARCH != "amd64" {
			a.Step, a.Detail = "n/a", "not applicable: the x32 table exists on x86_64 only"
			attempts[k.name] = a
			continue
		}
		if k.mode == modeI386 && !i386Supported(exe) {
			a.Step, a.Detail = "n/a", "not applicable: this kernel does not run i386 system calls (int 0x80 faults outside the sandbox too)"
			attempts[k.name] = a
			continue
		}
		cfg.Env = []string{probeEnv + "=" + k.mode}
		fout, fcode, err := runSandbox(cfg, m.proxy)
		if err != nil {
			return err
		}
		a.Errno = fcode // the exit status: 128+SIGSYS when killed
		a.Detail = strings.TrimSpace(tail(fout))
		attempts[k.name] = a
	}
	return nil
}

// judge says whether the attempt a at channel ch (reported is false if the probe
// said nothing of it) is what every layer on should give.
func (m *matrix) judge(ch Channel, a Attempt, reported bool, events []egress.Event) Result {
	res := Result{Channel: ch, Attempt: a}
	if s, has := m.sinks[ch.Name]; has {
		res.SinkBytes = int(s.n.Load())
	}
	switch {
	case !reported:
		res.Why = "the probe reported nothing"
	case ch.Kind == Blocked && a.Step == "n/a":
		res.OK, res.NA = true, true
		res.Why = "not applicable: the host has no IPv6 loopback"
	case ch.Kind == Blocked:
		res.Leaked = res.SinkBytes > 0 || a.Errno == 0 || a.Step != ch.At
		res.OK = !res.Leaked && syscall.Errno(a.Errno) == ch.Want
		if !res.OK {
			res.Why = fmt.Sprintf("want %s, got %s at %s, sink received %d bytes", errName(ch.Want), errName(syscall.Errno(a.Errno)), a.Step, res.SinkBytes)
		}
	case ch.Kind == Killed:
		judgeKilled(&res)
	case ch.Kind == Allowed:
		b, err := os.ReadFile(filepath.Join(m.targets.WritableDir, "written-by-probe"))
		res.OK = a.Errno == 0 && err == nil && string(b) == payload
		if !res.OK {
			res.Why = fmt.Sprintf("the write inside the writable path failed: %s at %s; on the host: %q %v", errName(syscall.Errno(a.Errno)), a.Step, b, err)
		}
	case ch.Kind == Admitted:
		ev, logged := findEvent(events, admitKey)
		res.OK = a.Status == 200 && m.hits("/admitted") == 1 && logged && ev.Answer == core.AnswerAdmit
		if !res.OK {
			res.Why = fmt.Sprintf("status %d %q, upstream hits %d, logged %v (%v)", a.Status, a.Body, m.hits("/admitted"), logged, ev)
		}
	case ch.Kind == Refused:
		ev, logged := findEvent(events, denyKey)
		res.OK = a.Status == 403 && strings.Contains(a.Body, "denied (rejected)") && m.hits("/denied") == 0 &&
			logged && ev.Answer == core.AnswerDenied
		res.Leaked = m.hits("/denied") > 0
		if !res.OK {
			res.Why = fmt.Sprintf("status %d %q, upstream hits %d, logged %v (%v)", a.Status, a.Body, m.hits("/denied"), logged, ev)
		}
	}
	return res
}

// judgeKilled judges a foreign-architecture probe: it must be killed by SIGSYS.
func judgeKilled(res *Result) {
	a := res.Attempt
	switch a.Step {
	case "skipped":
		res.OK, res.NA = true, true
		res.Why = "not run: only seccomp closes it, and this control switches off another layer"
		return
	case "n/a":
		res.OK, res.NA, res.Why = true, true, a.Detail
		return
	}
	// Status 0 and errno=0: the call ran in the other table and succeeded.
	res.Leaked = a.Errno == 0 && strings.Contains(a.Detail, "errno=0")
	res.OK = a.Errno == 128+int(syscall.SIGSYS)
	if !res.OK {
		res.Why = fmt.Sprintf("want the probe killed by SIGSYS (status %d), got status %d (%s)", 128+int(syscall.SIGSYS), a.Errno, a.Detail)
	}
}

// checkHostFiles checks from the host that nothing changed outside the writable
// paths.
func (m *matrix) checkHostFiles(rep *Report) {
	t := &m.targets
	if b, err := os.ReadFile(t.ReadOnlyFile); err != nil || string(b) != roContent {
		markLeak(rep, "write-file", fmt.Sprintf("the host file now holds %q", b))
	}
	if _, err := os.Lstat(filepath.Join(t.ReadOnlyDir, "created-by-probe")); err == nil {
		markLeak(rep, "create-file", "the file appeared on the host")
	}
	if _, err := os.Lstat("/dev/shm/" + t.ShmName); err == nil {
		markLeak(rep, "dev-shm", "the file appeared in the host's /dev/shm")
	}
}

func markLeak(rep *Report, name, why string) {
	for i := range rep.Results {
		if rep.Results[i].Channel.Name == name {
			rep.Results[i].Leaked, rep.Results[i].OK = true, false
			rep.Results[i].Why = why
		}
	}
}

func findEvent(evs []egress.Event, k core.Key) (egress.Event, bool) {
	for _, e := range evs {
		if e.Key == k {
			return e, true
		}
	}
	return egress.Event{}, false
}

// runSandbox runs one probe with the proxy serving its listener.
func runSandbox(cfg sandbox.Config, proxy *egress.Proxy) ([]byte, int, error) {
	var out, errb limitedBuffer
	cfg.Stdout, cfg.Stderr = &out, &errb
	sb, err := sandbox.Start(cfg)
	if err != nil {
		return nil, 0, err
	}
	go proxy.Serve(sb.Listener())
	timer := time.AfterFunc(runTimeout, func() { sb.Kill() })
	defer timer.Stop()
	code, err := sb.Wait()
	if err != nil {
		return nil, 0, err
	}
	b := out.Bytes()
	if e := errb.Bytes(); len(e) > 0 {
		b = append(b, e...)
	}
	return b, code, nil
}

// limitedBuffer keeps the first outputBytesMax bytes written to it and drops the rest
// (a probe cannot make the runner hold more); exec's copying goroutine and the runner
// may use it at once.
type limitedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := outputBytesMax - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// tail is the end of a probe's output, for an error message.
func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func errName(e syscall.Errno) string {
	if e == 0 {
		return "success"
	}
	if name := unix.ErrnoName(e); name != "" {
		return name
	}
	return fmt.Sprintf("errno %d", int(e))
}

var (
	i386Once sync.Once
	i386OK   bool
)

// i386Supported reports whether the kernel runs i386 system calls, by running the
// probe outside any sandbox: where int 0x80 faults, the channel does not exist.
func i386Supported(exe string) bool {
	i386Once.Do(func() {
		if !foreignArchProbed {
			return
		}
		cmd := exec.Command(exe)
		cmd.Env = []string{probeEnv + "=" + modeI386}
		out, err := cmd.Output()
		i386OK = err == nil && strings.Contains(string(out), "i386 getpid returned")
	})
	return i386OK
}
