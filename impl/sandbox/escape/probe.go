package escape

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeEnv carries the probe's Targets (JSON) or a mode word into the sandbox.
const probeEnv = "SOUNDGATE_ESCAPE_PROBE"

// Probe modes other than the matrix.
const (
	modeSleep = "sleep" // a child to ptrace
	modeExit  = "exit"  // a child that exits at once
	modeI386  = "i386"  // getpid through int 0x80
	modeX32   = "x32"   // getpid through the x32 table
	modeGet   = "get"   // "get URL KEY": one GET through $HTTP_PROXY
)

// x32Getpid is getpid's number in the x32 table (__X32_SYSCALL_BIT | 39).
const x32Getpid = 0x40000000 | 39

// probeTimeout bounds every network attempt of the probe.
const probeTimeout = 5 * time.Second

// payload is what every leaking attempt tries to send to its sink.
const payload = "soundgate-escape-probe\n"

// Targets tells the probe where the sinks are.
type Targets struct {
	TCPSink      string // host:port on the host's loopback
	TCP6Sink     string // [::1]:port, empty if the host has no IPv6 loopback
	OtherAddress string // 127.0.0.2:proxyport on the host's loopback
	UDPSink      string
	UnixPath     string
	UnixAbstract string // without the leading "@"
	ReadOnlyFile string
	ReadOnlyDir  string
	FIFO         string
	ShmName      string
	WritableDir  string
	GatePID      int
	ProxyURL     string
	AdmitURL     string
	AdmitKey     string
	DenyURL      string
	DenyKey      string
}

// Attempt is what the probe reports for one channel.
type Attempt struct {
	Channel string
	Errno   int    // 0: the attempt succeeded
	Step    string // the call that failed (or the last one that ran)
	Sent    int    // bytes the probe managed to send towards the sink
	Status  int    // HTTP status, for proxy channels
	Body    string // HTTP body (truncated), for proxy channels
	Detail  string
}

// RunProbeIfChild runs the escape probe and exits if this process is one; it returns
// at once otherwise.
func RunProbeIfChild() {
	mode, ok := os.LookupEnv(probeEnv)
	if !ok {
		return
	}
	switch mode {
	case modeSleep:
		time.Sleep(10 * time.Second)
		os.Exit(0)
	case modeExit:
		os.Exit(0)
	case modeI386:
		pid, ok := foreignGetpid()
		fmt.Printf("i386 getpid returned %d errno=0 (probed=%v)\n", pid, ok)
		os.Exit(0)
	case modeX32:
		r, _, e := unix.Syscall(x32Getpid, 0, 0, 0)
		fmt.Printf("x32 getpid returned %d errno=%d\n", int(r), int(e))
		os.Exit(0)
	}
	if rest, ok := strings.CutPrefix(mode, modeGet+" "); ok {
		// "get URL KEY": one GET through $HTTP_PROXY; exit 0 on 200, 3 otherwise.
		target, key, _ := strings.Cut(rest, " ")
		a := httpGet(os.Getenv("HTTP_PROXY"), target, key)
		fmt.Printf("status %d: %s %s\n", a.Status, a.Body, a.Detail)
		if a.Status != http.StatusOK {
			os.Exit(3)
		}
		os.Exit(0)
	}
	var t Targets
	if err := json.Unmarshal([]byte(mode), &t); err != nil {
		fmt.Fprintf(os.Stderr, "escape probe: bad targets: %v\n", err)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, p := range probes(&t) {
		a := p.fn()
		a.Channel = p.name
		enc.Encode(a)
	}
	os.Exit(0)
}

type probe struct {
	name string
	fn   func() Attempt
}

func errnoOf(err error) int {
	var e syscall.Errno
	if errors.As(err, &e) {
		return int(e)
	}
	if err != nil {
		return -1
	}
	return 0
}

func fail(step string, err error) Attempt {
	return Attempt{Errno: errnoOf(err), Step: step, Detail: fmt.Sprint(err)}
}

// sockSend creates a socket, connects it to sa and writes the payload.
func sockSend(domain, typ, proto int, sa unix.Sockaddr) Attempt {
	fd, err := unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return fail("socket", err)
	}
	defer unix.Close(fd)
	if sa == nil {
		return Attempt{Step: "socket"}
	}
	tv := unix.NsecToTimeval(probeTimeout.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	if typ == unix.SOCK_DGRAM {
		if err := unix.Sendto(fd, []byte(payload), 0, sa); err != nil {
			return fail("sendto", err)
		}
		return Attempt{Step: "sendto", Sent: len(payload)}
	}
	if err := unix.Connect(fd, sa); err != nil {
		return fail("connect", err)
	}
	n, err := unix.Write(fd, []byte(payload))
	if err != nil {
		return fail("write", err)
	}
	return Attempt{Step: "write", Sent: n}
}

func inet4(hostport string) unix.Sockaddr {
	ap, err := net.ResolveTCPAddr("tcp", hostport)
	if err != nil || ap.IP.To4() == nil {
		return &unix.SockaddrInet4{} // port 0: connect fails visibly
	}
	sa := &unix.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	return sa
}

func inet6(hostport string) unix.Sockaddr {
	ap, err := net.ResolveTCPAddr("tcp", hostport)
	if err != nil || ap.IP.To16() == nil {
		return &unix.SockaddrInet6{}
	}
	sa := &unix.SockaddrInet6{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To16())
	return sa
}

func openWrite(step, path string, flags int) Attempt {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fail(step, err)
	}
	defer unix.Close(fd)
	n, err := unix.Write(fd, []byte(payload))
	if err != nil {
		return fail("write", err)
	}
	return Attempt{Step: "write", Sent: n}
}

// child starts a small program of the view ("sleep 10" for modeSleep, "true"
// otherwise) with extra process attributes; the probe binary itself would do, but a
// race-instrumented test binary takes a second to start on a loaded machine.
func child(mode string, attr *syscall.SysProcAttr) (int, error) {
	name, argv := "true", []string{"true"}
	if mode == modeSleep {
		name, argv = "sleep", []string{"sleep", "10"}
	}
	path := "/usr/bin/" + name
	if _, err := os.Stat(path); err != nil {
		path = "/bin/" + name
	}
	return syscall.ForkExec(path, argv, &syscall.ProcAttr{Files: []uintptr{0, 1, 2}, Sys: attr})
}

func reap(pid int) {
	syscall.Kill(pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
}

func httpGet(proxyURL, target, key string) Attempt {
	pu, err := url.Parse(proxyURL)
	if err != nil {
		return fail("proxy url", err)
	}
	c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: probeTimeout}
	req, _ := http.NewRequest("GET", target, nil)
	req.Header.Set("Soundgate-Key", key)
	resp, err := c.Do(req)
	if err != nil {
		return fail("http", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return Attempt{Step: "http", Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
}

// probes is the probe's side of the matrix: one attempt per channel of Channels.
func probes(t *Targets) []probe {
	tcp := func(sink string) func() Attempt {
		return func() Attempt { return sockSend(unix.AF_INET, unix.SOCK_STREAM, 0, inet4(sink)) }
	}
	unixStream := func(name string) func() Attempt {
		return func() Attempt { return sockSend(unix.AF_UNIX, unix.SOCK_STREAM, 0, &unix.SockaddrUnix{Name: name}) }
	}
	create := func(path string) func() Attempt {
		return func() Attempt { return openWrite("open", path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL) }
	}
	return []probe{
		{"tcp-direct", tcp(t.TCPSink)},
		{"tcp6-direct", func() Attempt { return tcp6(t.TCP6Sink) }},
		{"tcp-other-address", tcp(t.OtherAddress)},
		{"mptcp", func() Attempt { return sockSend(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP, inet4(t.TCPSink)) }},
		{"udp", func() Attempt { return sockSend(unix.AF_INET, unix.SOCK_DGRAM, 0, inet4(t.UDPSink)) }},
		{"raw", func() Attempt { return sockSend(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, nil) }},
		{"netlink", func() Attempt { return sockSend(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE, nil) }},
		{"packet", func() Attempt { return sockSend(unix.AF_PACKET, unix.SOCK_RAW, int(htons(unix.ETH_P_ALL)), nil) }},
		{"unix-path", unixStream(t.UnixPath)},
		{"unix-abstract", unixStream("@" + t.UnixAbstract)},
		{"unix-dgram-pair", unixDgramPair},
		{"io_uring", ioURing},
		{"write-file", func() Attempt { return openWrite("open", t.ReadOnlyFile, unix.O_WRONLY|unix.O_APPEND) }},
		{"create-file", create(t.ReadOnlyDir + "/created-by-probe")},
		{"write-fifo", func() Attempt { return openWrite("open", t.FIFO, unix.O_WRONLY|unix.O_NONBLOCK) }},
		{"dev-shm", create("/dev/shm/" + t.ShmName)},
		{"mount", mountTmpfs},
		{"unshare", func() Attempt { return newUserNS("unshare", &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWUSER}) }},
		{"clone-newuser", func() Attempt { return newUserNS("clone", &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}) }},
		{"ptrace", ptraceChild},
		{"signal-gate", func() Attempt { return signalGate(t.GatePID) }},
		{"tiocsti", func() Attempt { return tiocsti(unix.TIOCSTI) }},
		{"tiocsti-high-bits", func() Attempt { return tiocsti(unix.TIOCSTI | 1<<32) }},
		{"write-writable", create(t.WritableDir + "/written-by-probe")},
		{"http-admitted", func() Attempt { return httpGet(t.ProxyURL, t.AdmitURL, t.AdmitKey) }},
		{"http-denied", func() Attempt { return httpGet(t.ProxyURL, t.DenyURL, t.DenyKey) }},
	}
}

// tcp6 connects over IPv6 to sink; "n/a" where the host has no IPv6 loopback.
func tcp6(sink string) Attempt {
	if sink == "" {
		return Attempt{Step: "n/a"}
	}
	return sockSend(unix.AF_INET6, unix.SOCK_STREAM, 0, inet6(sink))
}

func unixDgramPair() Attempt {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail("socketpair", err)
	}
	unix.Close(fds[0])
	unix.Close(fds[1])
	return Attempt{Step: "socketpair"}
}

func ioURing() Attempt {
	var params [120]byte
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		return fail("io_uring_setup", e)
	}
	unix.Close(int(fd))
	return Attempt{Step: "io_uring_setup"}
}

func mountTmpfs() Attempt {
	if err := unix.Mount("none", "/tmp", "tmpfs", 0, ""); err != nil {
		return fail("mount", err)
	}
	return Attempt{Step: "mount"}
}

// newUserNS starts a child in a new user namespace (attr says how: unshare or
// clone flags); step names the call.
func newUserNS(step string, attr *syscall.SysProcAttr) Attempt {
	pid, err := child(modeExit, attr)
	if err != nil {
		return fail(step, err)
	}
	reap(pid)
	return Attempt{Step: step}
}

// ptraceChild attaches to a child of the probe's own.
func ptraceChild() Attempt {
	pid, err := child(modeSleep, nil)
	if err != nil {
		return fail("fork", err)
	}
	defer reap(pid)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.PtraceAttach(pid); err != nil {
		return fail("ptrace", err)
	}
	unix.PtraceDetach(pid)
	return Attempt{Step: "ptrace"}
}

// signalGate sends signal 0 to the gate's host PID.
func signalGate(pid int) Attempt {
	if err := unix.Kill(pid, 0); err != nil {
		return fail("kill", err)
	}
	return Attempt{Step: "kill"}
}

func tiocsti(cmd uint64) Attempt {
	c := byte('x')
	_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(cmd), uintptr(unsafe.Pointer(&c)))
	if e != 0 {
		return fail("ioctl", e)
	}
	return Attempt{Step: "ioctl", Sent: 1}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
