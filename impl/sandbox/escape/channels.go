package escape

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/soundgate/soundgate/impl/sandbox"
)

// Kind says how a channel's outcome is judged.
type Kind int

// The kinds of channel.
const (
	// Blocked: the attempt must fail with Want; its sink (if any) must stay empty.
	Blocked Kind = iota + 1
	// Allowed: the attempt must succeed (a write inside a writable path).
	Allowed
	// Admitted: an HTTP request through the proxy that the gate admits (status 200,
	// reaches the upstream, logged as admitted).
	Admitted
	// Refused: an HTTP request through the proxy that the gate denies (status 403,
	// does not reach the upstream, the body says why).
	Refused
	// Killed: the probe must be killed by SIGSYS (a separate sandbox).
	Killed
)

// Channel is one row of the matrix.
type Channel struct {
	// Name identifies the channel in reports.
	Name string
	// Kind says how the outcome is judged.
	Kind Kind
	// Want is the error the attempt gets with every layer on (Blocked).
	Want syscall.Errno
	// At is the call that must fail with Want (Blocked); getting past it is a leak.
	At string
	// What says what the probe tries.
	What string
}

// Channels is the matrix, in report order.
var Channels = []Channel{
	{"tcp-direct", Blocked, syscall.EACCES, "connect", "TCP connect to a loopback sink on the host"},
	{"tcp6-direct", Blocked, syscall.EACCES, "connect", "TCP connect over IPv6 to a sink on the host's ::1"},
	{"tcp-other-address", Blocked, syscall.ECONNREFUSED, "connect", "TCP connect to 127.0.0.2 at the proxy's port (a host sink listens there)"},
	{"mptcp", Blocked, syscall.EPERM, "socket", "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP), then connect to the TCP sink"},
	{"udp", Blocked, syscall.EPERM, "socket", "socket(AF_INET, SOCK_DGRAM), then sendto a loopback UDP sink"},
	{"raw", Blocked, syscall.EPERM, "socket", "socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)"},
	{"netlink", Blocked, syscall.EPERM, "socket", "socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)"},
	{"packet", Blocked, syscall.EPERM, "socket", "socket(AF_PACKET, SOCK_RAW, ETH_P_ALL)"},
	{"unix-path", Blocked, syscall.EPERM, "socket", "connect to a pathname Unix socket the host listens on (visible in the view)"},
	{"unix-abstract", Blocked, syscall.EPERM, "socket", "connect to an abstract Unix socket the host listens on"},
	{"unix-dgram-pair", Blocked, syscall.EPERM, "socketpair", "socketpair(AF_UNIX, SOCK_DGRAM) (a datagram pair can sendto any path)"},
	{"io_uring", Blocked, syscall.EPERM, "io_uring_setup", "io_uring_setup"},
	{"write-file", Blocked, syscall.EROFS, "open", "open an existing host file outside the writable paths for writing"},
	{"create-file", Blocked, syscall.EROFS, "open", "create a file in a host directory outside the writable paths"},
	{"write-fifo", Blocked, syscall.EACCES, "open", "open a host FIFO outside the writable paths for writing (a reader waits)"},
	{"dev-shm", Blocked, syscall.EROFS, "open", "create a file in /dev/shm"},
	{"mount", Blocked, syscall.EPERM, "mount", "mount a tmpfs"},
	{"unshare", Blocked, syscall.EPERM, "unshare", "unshare(CLONE_NEWUSER) in a fresh single-threaded child"},
	{"clone-newuser", Blocked, syscall.EPERM, "clone", "clone(CLONE_NEWUSER)"},
	{"ptrace", Blocked, syscall.EPERM, "ptrace", "PTRACE_ATTACH to the probe's own child"},
	{"signal-gate", Blocked, syscall.ESRCH, "kill", "kill(gate's host PID, 0)"},
	{"tiocsti", Blocked, syscall.EPERM, "ioctl", "ioctl(0, TIOCSTI)"},
	{"tiocsti-high-bits", Blocked, syscall.EPERM, "ioctl", "ioctl(0, TIOCSTI | 1<<32) (the kernel reads 32 bits)"},
	{"x32-syscall", Killed, 0, "", "getpid through the x32 system call table (number | 1<<30)"},
	{"i386-syscall", Killed, 0, "", "getpid through int 0x80 (i386 system call table), where the kernel runs i386 calls"},
	{"write-writable", Allowed, 0, "", "create a file inside a writable path"},
	{"http-admitted", Admitted, 0, "", "GET through the proxy, admitted by the gate"},
	{"http-denied", Refused, 0, "", "GET through the proxy of an effect the gate rejected"},
}

// Control is a negative control: one layer off and what must then be seen.
type Control struct {
	// Name of the control ("seccomp off").
	Name string
	// Disable is the layer switched off.
	Disable sandbox.Layers
	// Leaks must leak: the sink receives bytes or the call succeeds.
	Leaks []string
	// Differs must answer other than Want (the layer was what answered).
	Differs []string
}

// Controls are the negative controls.
var Controls = []Control{
	{"seccomp off", sandbox.Layers{Seccomp: true},
		[]string{"unix-path", "mptcp", "udp", "netlink", "unix-dgram-pair", "io_uring", "unshare", "clone-newuser", "ptrace", "i386-syscall"},
		[]string{"tiocsti", "tiocsti-high-bits", "x32-syscall"}},
	{"landlock off", sandbox.Layers{Landlock: true},
		[]string{"write-fifo"},
		[]string{"tcp-direct", "tcp6-direct"}},
	{"netns off", sandbox.Layers{NetNS: true},
		[]string{"tcp-other-address"},
		nil},
	{"readonly-root off", sandbox.Layers{ReadOnlyRoot: true},
		nil,
		[]string{"write-file", "create-file", "dev-shm"}},
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
