package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter is a deny list in front of an allow-by-default policy: an agent
// is an arbitrary program (a Python or Node interpreter, a shell), so an allow list
// of every system call it may use is not something this gate can promise. What it
// denies is what Landlock (from LandlockABIMin) and the namespaces leave open:
//
//   - socket() except TCP over IPv4/IPv6: Landlock's TCP rules do not cover MPTCP;
//     UDP needs Landlock ABI 10 and connecting to a pathname Unix socket ABI 9. Raw,
//     packet, netlink, Unix (path and abstract) and every other family are refused,
//     and so are socketpair() other than a Unix stream pair (a datagram pair can
//     sendto() any pathname socket).
//   - io_uring (its operations escape the seccomp filter itself).
//   - mount and the new mount API, pivot_root, chroot; unshare, setns and clone()
//     with namespace flags; clone3 answers ENOSYS so that libc falls back to clone.
//   - ptrace, process_vm_readv/writev, pidfd_getfd, kcmp.
//   - keyctl, add_key, request_key; bpf, perf_event_open, userfaultfd; module,
//     kexec, reboot, swap, acct, quota and clock setting calls.
//   - ioctl TIOCSTI and TIOCLINUX (typing into the user's terminal).
//
// Every call of a foreign architecture (i386 through int 0x80 on x86_64, arm on
// arm64) and every x32 call kills the process: go-seccomp-bpf jumps to the default
// action for a foreign architecture and this default is allow, so the prologue
// below does the architecture check itself before the library's program runs.

// errnoDenied is what a denied system call returns.
const errnoDenied = unix.EPERM

// auditArch and x32Bit describe the native architecture for the prologue.
var auditArch, x32Bit = func() (uint32, uint32) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, 0x40000000
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, 0
	}
	return 0, 0
}()

// deniedCalls are refused outright with errnoDenied.
var deniedCalls = []string{
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
	"fsmount", "fsconfig", "fspick", "mount_setattr",
	"unshare", "setns",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"keyctl", "add_key", "request_key",
	"bpf", "perf_event_open", "userfaultfd",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
}

// nsCloneFlags are the clone() flags that create namespaces (CLONE_NEWTIME shares its
// bit with the exit signal in clone(), so only unshare and clone3 could ask for it).
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// sockTypeMask selects the socket type from socket()'s type argument (the rest are
// the SOCK_NONBLOCK and SOCK_CLOEXEC flags).
const sockTypeMask = 0xf

// seccompPolicy is the library part of the filter: unconditional denials by name.
// The argument checks (socket, socketpair, clone, ioctl) are in the prologue: the
// library's argument conditions (go-seccomp-bpf v1.6.0) leave an argument in the
// accumulator when they do not match, so that later comparisons against system call
// numbers would compare that argument. The prologue reloads the number before every
// check.
func seccompPolicy() seccomp.Policy {
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: seccomp.ActionErrno, Names: deniedCalls}, // EPERM
			{ // clone3's flags are behind a pointer: make libc fall back to clone().
				Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS),
				Names:  []string{"clone3"},
			},
		},
	}
}

// asm is a tiny BPF assembler with forward labels.
type asm struct {
	prog   []bpf.Instruction
	labels map[string]int
	jumps  []jump
}

type jump struct {
	at     int
	t, f   string // "": the next instruction
	always bool
}

func (a *asm) add(in ...bpf.Instruction) { a.prog = append(a.prog, in...) }
func (a *asm) label(name string)         { a.labels[name] = len(a.prog) }

// jeq and jset jump to t if the accumulator equals (has bits of) v, else to f.
func (a *asm) jeq(v uint32, t, f string)  { a.cond(bpf.JumpEqual, v, t, f) }
func (a *asm) jset(v uint32, t, f string) { a.cond(bpf.JumpBitsSet, v, t, f) }
func (a *asm) cond(c bpf.JumpTest, v uint32, t, f string) {
	a.jumps = append(a.jumps, jump{at: len(a.prog), t: t, f: f})
	a.add(bpf.JumpIf{Cond: c, Val: v})
}
func (a *asm) ja(t string) {
	a.jumps = append(a.jumps, jump{at: len(a.prog), t: t, always: true})
	a.add(bpf.Jump{})
}

func (a *asm) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, l string) (int, error) {
		if l == "" {
			return 0, nil
		}
		to, ok := a.labels[l]
		if !ok || to <= from {
			return 0, fmt.Errorf("soundgate/sandbox: bpf label %q unresolved", l)
		}
		return to - from - 1, nil
	}
	for _, j := range a.jumps {
		t, err := skip(j.at, j.t)
		if err != nil {
			return nil, err
		}
		if j.always {
			a.prog[j.at] = bpf.Jump{Skip: uint32(t)}
			continue
		}
		f, err := skip(j.at, j.f)
		if err != nil {
			return nil, err
		}
		if t > 255 || f > 255 {
			return nil, fmt.Errorf("soundgate/sandbox: bpf jump too long")
		}
		in := a.prog[j.at].(bpf.JumpIf)
		in.SkipTrue, in.SkipFalse = uint8(t), uint8(f)
		a.prog[j.at] = in
	}
	return a.prog, nil
}

// seccompProgram assembles the whole filter: the prologue, then the policy.
func seccompProgram() ([]bpf.RawInstruction, error) {
	if auditArch == 0 {
		return nil, wrap(ErrKernel, nil, "seccomp filter not defined for %s", runtime.GOARCH)
	}
	policy := seccompPolicy()
	body, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("soundgate/sandbox: seccomp policy: %w", err)
	}
	pro, err := seccompPrologue()
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(append(pro, body...))
}

// The prologue's return values.
const (
	retKill  = unix.SECCOMP_RET_KILL_PROCESS
	retAllow = unix.SECCOMP_RET_ALLOW
	retDeny  = unix.SECCOMP_RET_ERRNO | uint32(errnoDenied)
)

// loadNr and loadArch load the call number and the architecture of struct seccomp_data.
var (
	loadNr   = bpf.LoadAbsolute{Off: 0, Size: 4}
	loadArch = bpf.LoadAbsolute{Off: 4, Size: 4}
)

// argLo loads the low half of argument i (little endian): the kernel reads these
// arguments as 32-bit values, so the high half must not matter.
func argLo(i uint32) bpf.Instruction { return bpf.LoadAbsolute{Off: 16 + 8*i, Size: 4} }

// sockType loads socket()'s and socketpair()'s type argument without its flags.
var sockType = []bpf.Instruction{argLo(1), bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask}}

// call starts the check of system call nr at label name: it reloads the call number
// (an argument check leaves its argument in the accumulator) and goes on at next
// unless the call is nr.
func (a *asm) call(name string, nr uint32, next string) {
	a.label(name)
	a.add(loadNr)
	a.jeq(nr, "", next)
}

// seccompPrologue is the part of the filter that the library cannot be trusted with
// (seccompPolicy): the architecture check, then every argument check. One listing, in
// the order the filter runs it; it falls through to the library's program.
func seccompPrologue() ([]bpf.Instruction, error) {
	a := &asm{labels: map[string]int{}}
	a.add(loadArch)
	a.jeq(auditArch, "", "kill")
	a.add(loadNr)
	if x32Bit != 0 {
		a.jset(x32Bit, "kill", "")
	}
	// ioctl: no typing into the terminal.
	a.jeq(unix.SYS_IOCTL, "", "socket")
	a.add(argLo(1))
	a.jeq(unix.TIOCSTI, "deny", "")
	a.jeq(unix.TIOCLINUX, "deny", "allow")
	// socket: TCP over IPv4 or IPv6 only.
	a.call("socket", unix.SYS_SOCKET, "socketpair")
	a.add(argLo(0))
	a.jeq(unix.AF_INET, "socket-type", "")
	a.jeq(unix.AF_INET6, "socket-type", "deny")
	a.label("socket-type")
	a.add(sockType...)
	a.jeq(unix.SOCK_STREAM, "", "deny")
	a.add(argLo(2))
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "deny")
	// socketpair: a Unix stream pair only.
	a.call("socketpair", unix.SYS_SOCKETPAIR, "clone")
	a.add(argLo(0))
	a.jeq(unix.AF_UNIX, "", "deny")
	a.add(sockType...)
	a.jeq(unix.SOCK_STREAM, "allow", "deny")
	// clone: no namespace flags (clone reads the low 32 bits of its flags).
	a.call("clone", unix.SYS_CLONE, "body")
	a.add(argLo(0))
	a.jset(nsCloneFlags, "deny", "allow")
	a.label("allow")
	a.add(bpf.RetConstant{Val: retAllow})
	a.label("deny")
	a.add(bpf.RetConstant{Val: retDeny})
	a.label("kill")
	a.add(bpf.RetConstant{Val: retKill})
	a.label("body")
	a.add(bpf.Jump{}) // a target for the jumps to "body", dropped below: the library's program follows
	pro, err := a.resolve()
	if err != nil {
		return nil, err
	}
	return pro[:len(pro)-1], nil
}

// installSeccomp loads the filter on every thread of the process (TSYNC). The
// caller must have set no_new_privs on every thread.
func installSeccomp() error {
	raw, err := seccompProgram()
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, in := range raw {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return fmt.Errorf("soundgate/sandbox: seccomp(SET_MODE_FILTER, TSYNC): %w", e)
	}
	return nil
}
