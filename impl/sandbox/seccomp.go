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
// denies is what Landlock (ABI 6 or 7 here) and the namespaces leave open:
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

// sockTypeStreamOnly matches a socket type argument that is SOCK_STREAM with at
// most SOCK_NONBLOCK and SOCK_CLOEXEC: bit 0 set and no bit outside streamTypeBits.
const streamTypeBits = unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC

func streamSocket(family uint64, protocol uint64) seccomp.NameWithConditions {
	return seccomp.NameWithConditions{Name: "socket", Conditions: seccomp.ArgumentConditions{
		{Argument: 0, Operation: seccomp.Equal, Value: family},
		{Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_STREAM},
		{Argument: 1, Operation: seccomp.BitsNotSet, Value: ^uint64(streamTypeBits)},
		{Argument: 2, Operation: seccomp.Equal, Value: protocol},
	}}
}

// seccompPolicy is the library part of the filter: first match wins.
func seccompPolicy() seccomp.Policy {
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{ // TCP over IPv4 and IPv6, protocol 0 or IPPROTO_TCP; a Unix stream pair.
				Action: seccomp.ActionAllow,
				NamesWithCondtions: []seccomp.NameWithConditions{
					streamSocket(unix.AF_INET, 0), streamSocket(unix.AF_INET, unix.IPPROTO_TCP),
					streamSocket(unix.AF_INET6, 0), streamSocket(unix.AF_INET6, unix.IPPROTO_TCP),
					{Name: "socketpair", Conditions: seccomp.ArgumentConditions{
						{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_UNIX},
						{Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_STREAM},
						{Argument: 1, Operation: seccomp.BitsNotSet, Value: ^uint64(streamTypeBits)},
					}},
				},
			},
			{ // Every other socket, and clone() asking for namespaces.
				Action: seccomp.ActionErrno, // EPERM
				Names:  append([]string{"socket", "socketpair"}, deniedCalls...),
				NamesWithCondtions: []seccomp.NameWithConditions{
					{Name: "clone", Conditions: seccomp.ArgumentConditions{
						{Argument: 0, Operation: seccomp.BitsSet, Value: nsCloneFlags},
					}},
				},
			},
			{ // clone3's flags are behind a pointer: make libc fall back to clone().
				Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS),
				Names:  []string{"clone3"},
			},
		},
	}
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
	const (
		nrOff   = 0
		archOff = 4
		arg1Lo  = 16 + 8*1 // little endian: the low half of args[1]
		kill    = unix.SECCOMP_RET_KILL_PROCESS
		allow   = unix.SECCOMP_RET_ALLOW
		deny    = unix.SECCOMP_RET_ERRNO | uint32(errnoDenied)
	)
	// Prologue. Instruction indices are in the comments; jumps are relative.
	pro := []bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: archOff, Size: 4},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		/* 2 */ bpf.RetConstant{Val: kill},
		/* 3 */ bpf.LoadAbsolute{Off: nrOff, Size: 4},
	}
	if x32Bit != 0 {
		pro = append(pro,
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32Bit, SkipFalse: 1},
			bpf.RetConstant{Val: kill},
		)
	}
	// ioctl: the kernel reads the command as 32 bits, so compare the low half only
	// (the library compares all 64 bits, which a caller could dodge with high bits).
	pro = append(pro,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_IOCTL, SkipFalse: 5},
		bpf.LoadAbsolute{Off: arg1Lo, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCSTI, SkipTrue: 2},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.TIOCLINUX, SkipTrue: 1},
		bpf.RetConstant{Val: allow},
		bpf.RetConstant{Val: deny},
	)
	return bpf.Assemble(append(pro, body...))
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
