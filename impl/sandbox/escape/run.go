package escape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
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
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	sinks := map[string]*sink{}
	addSink := func(name string, s *sink) { sinks[name] = s; cleanups = append(cleanups, s.close) }

	// Sinks on the host's loopback. The 127.0.0.2 sink takes a free port that then
	// becomes the proxy's port, so that only the network namespace keeps them apart.
	other, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return nil, fmt.Errorf("soundgate/escape: sink on 127.0.0.2: %w", err)
	}
	proxyPort := other.Addr().(*net.TCPAddr).Port
	addSink("tcp-other-address", streamSink(other))
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("soundgate/escape: TCP sink: %w", err)
	}
	tcpSink := streamSink(tcp)
	addSink("tcp-direct", tcpSink)
	sinks["mptcp"] = tcpSink
	tcp6Addr := ""
	if tcp6, err := net.Listen("tcp6", "[::1]:0"); err == nil {
		tcp6Addr = tcp6.Addr().String()
		addSink("tcp6-direct", streamSink(tcp6))
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("soundgate/escape: UDP sink: %w", err)
	}
	addSink("udp", packetSink(udp))

	dir, err := os.MkdirTemp("", "soundgate-escape-")
	if err != nil {
		return nil, err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	roDir, wDir := filepath.Join(dir, "outside"), filepath.Join(dir, "writable")
	for _, d := range []string{roDir, wDir} {
		if err := os.Mkdir(d, 0o777); err != nil {
			return nil, err
		}
	}
	unixPath := filepath.Join(roDir, "sink.sock")
	ul, err := net.Listen("unix", unixPath)
	if err != nil {
		return nil, fmt.Errorf("soundgate/escape: Unix sink: %w", err)
	}
	addSink("unix-path", streamSink(ul))
	abstract := fmt.Sprintf("soundgate-escape-%d-%d", os.Getpid(), time.Now().UnixNano())
	al, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		return nil, fmt.Errorf("soundgate/escape: abstract Unix sink: %w", err)
	}
	addSink("unix-abstract", streamSink(al))
	fifo := filepath.Join(roDir, "sink.fifo")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		return nil, err
	}
	// A reader (and a writer, so no end of file), never blocking.
	ffd, err := unix.Open(fifo, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	fifoSink := &sink{close: func() { unix.Close(ffd) }}
	addSink("write-fifo", fifoSink)
	roFile := filepath.Join(roDir, "file.txt")
	const roContent = "the host's file\n"
	if err := os.WriteFile(roFile, []byte(roContent), 0o666); err != nil {
		return nil, err
	}
	shmName := filepath.Base(dir)
	cleanups = append(cleanups, func() { os.Remove("/dev/shm/" + shmName) })

	// The gate: a local core with one run; the denied key was rejected by an approver.
	gate := egress.NewLocalGate()
	if err := gate.Open(runID); err != nil {
		return nil, err
	}
	if _, err := gate.Pause(runID, denyKey); err != nil {
		return nil, err
	}
	if err := gate.Decide(runID, denyKey, core.Reject); err != nil {
		return nil, err
	}
	var upHits sync.Map
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := upHits.LoadOrStore(r.URL.Path, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		io.WriteString(w, "upstream answered "+r.URL.Path)
	}))
	cleanups = append(cleanups, up.Close)
	hits := func(path string) int64 {
		if n, ok := upHits.Load(path); ok {
			return n.(*atomic.Int64).Load()
		}
		return 0
	}
	var evMu sync.Mutex
	var events []egress.Event
	proxy := &egress.Proxy{Admitter: gate, Run: runID, HeldWaitMax: 5 * time.Second, Log: func(e egress.Event) {
		evMu.Lock()
		events = append(events, e)
		evMu.Unlock()
	}}

	t := Targets{
		TCPSink: tcp.Addr().String(), TCP6Sink: tcp6Addr, OtherAddress: other.Addr().String(), UDPSink: udp.LocalAddr().String(),
		UnixPath: unixPath, UnixAbstract: abstract, ReadOnlyFile: roFile, ReadOnlyDir: roDir, FIFO: fifo,
		ShmName: shmName, WritableDir: wDir, GatePID: os.Getpid(),
		ProxyURL: fmt.Sprintf("http://127.0.0.1:%d", proxyPort),
		AdmitURL: up.URL + "/admitted", AdmitKey: string(admitKey),
		DenyURL: up.URL + "/denied", DenyKey: string(denyKey),
	}
	tj, _ := json.Marshal(t)
	cfg := sandbox.Config{
		Argv:      []string{exe},
		Env:       []string{probeEnv + "=" + string(tj), "PATH=/usr/bin:/bin"},
		Dir:       "/",
		Writable:  []string{wDir},
		ReadOnly:  []string{dir, filepath.Dir(exe)},
		ProxyPort: proxyPort,
		Disable:   d,
	}
	out, code, err := runSandbox(cfg, proxy)
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
	if n, _ := unix.Read(ffd, buf); n > 0 {
		fifoSink.n.Add(int64(n))
	}
	settle(sinks)

	// The other-architecture probes die (or not) on their own, one sandbox each.
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
		fout, fcode, err := runSandbox(cfg, proxy)
		if err != nil {
			return nil, err
		}
		a.Errno = fcode // the exit status: 128+SIGSYS when killed
		a.Detail = strings.TrimSpace(tail(fout))
		attempts[k.name] = a
	}

	rep := &Report{Disable: d}
	evMu.Lock()
	rep.Events = append(rep.Events, events...)
	evMu.Unlock()
	for _, ch := range Channels {
		a, ok := attempts[ch.Name]
		res := Result{Channel: ch, Attempt: a}
		if s, has := sinks[ch.Name]; has {
			res.SinkBytes = int(s.n.Load())
		}
		switch {
		case !ok:
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
			if a.Step == "skipped" {
				res.OK, res.NA = true, true
				res.Why = "not run: only seccomp closes it, and this control switches off another layer"
				break
			}
			if a.Step == "n/a" {
				res.OK, res.NA, res.Why = true, true, a.Detail
				break
			}
			// Status 0 and errno=0: the call ran in the other table and succeeded.
			res.Leaked = a.Errno == 0 && strings.Contains(a.Detail, "errno=0")
			res.OK = a.Errno == 128+int(syscall.SIGSYS)
			if !res.OK {
				res.Why = fmt.Sprintf("want the probe killed by SIGSYS (status %d), got status %d (%s)", 128+int(syscall.SIGSYS), a.Errno, a.Detail)
			}
		case ch.Kind == Allowed:
			b, err := os.ReadFile(filepath.Join(wDir, "written-by-probe"))
			res.OK = a.Errno == 0 && err == nil && string(b) == payload
			if !res.OK {
				res.Why = fmt.Sprintf("the write inside the writable path failed: %s at %s; on the host: %q %v", errName(syscall.Errno(a.Errno)), a.Step, b, err)
			}
		case ch.Kind == Admitted:
			ev, logged := findEvent(rep.Events, admitKey)
			res.OK = a.Status == 200 && hits("/admitted") == 1 && logged && ev.Answer == core.AnswerAdmit
			if !res.OK {
				res.Why = fmt.Sprintf("status %d %q, upstream hits %d, logged %v (%v)", a.Status, a.Body, hits("/admitted"), logged, ev)
			}
		case ch.Kind == Refused:
			ev, logged := findEvent(rep.Events, denyKey)
			res.OK = a.Status == 403 && strings.Contains(a.Body, "denied (rejected)") && hits("/denied") == 0 &&
				logged && ev.Answer == core.AnswerDenied
			res.Leaked = hits("/denied") > 0
			if !res.OK {
				res.Why = fmt.Sprintf("status %d %q, upstream hits %d, logged %v (%v)", a.Status, a.Body, hits("/denied"), logged, ev)
			}
		}
		rep.Results = append(rep.Results, res)
	}
	// Host-side checks of the file channels: nothing changed outside the writable paths.
	if b, err := os.ReadFile(roFile); err != nil || string(b) != roContent {
		markLeak(rep, "write-file", fmt.Sprintf("the host file now holds %q", b))
	}
	if _, err := os.Lstat(filepath.Join(roDir, "created-by-probe")); err == nil {
		markLeak(rep, "create-file", "the file appeared on the host")
	}
	if _, err := os.Lstat("/dev/shm/" + shmName); err == nil {
		markLeak(rep, "dev-shm", "the file appeared in the host's /dev/shm")
	}
	return rep, nil
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

// ErrCaught is returned by CheckControl when a negative control shows nothing.
var ErrCaught = errors.New("soundgate/escape: the negative control did not catch its leak")

// CheckControl says whether rep (run with c.Disable) shows what c says the layer
// closes; it returns the channels caught and an error naming what was not.
func CheckControl(c Control, rep *Report) ([]string, error) {
	var caught, missed []string
	for _, name := range c.Leaks {
		if r, ok := rep.Result(name); ok && r.NA {
			continue
		}
		if r, ok := rep.Result(name); ok && r.Leaked {
			caught = append(caught, name)
		} else {
			missed = append(missed, name+" (did not leak)")
		}
	}
	for _, name := range c.Differs {
		if r, ok := rep.Result(name); ok && r.NA {
			continue
		}
		if r, ok := rep.Result(name); ok && !r.OK {
			caught = append(caught, name)
		} else {
			missed = append(missed, name+" (answered as with every layer on)")
		}
	}
	if len(missed) > 0 {
		return caught, fmt.Errorf("%w: %s: %s", ErrCaught, c.Name, strings.Join(missed, ", "))
	}
	return caught, nil
}
