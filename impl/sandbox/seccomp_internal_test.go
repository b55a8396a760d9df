package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData encodes struct seccomp_data for x/net/bpf's VM, which loads 32-bit words
// in network byte order: each word is stored big-endian at the offset where the
// kernel (little endian) has it, so the VM reads the value the kernel's filter reads.
func seccompData(arch uint32, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))       // low half first
		binary.BigEndian.PutUint32(b[16+8*i+4:], uint32(a>>32)) // then the high half
	}
	return b
}

// TestSeccompProgram runs the filter in a BPF interpreter over a table of calls.
func TestSeccompProgram(t *testing.T) {
	if auditArch != unix.AUDIT_ARCH_X86_64 {
		t.Skip("the table is written for x86_64")
	}
	raw, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	prog, allDecoded := bpf.Disassemble(raw)
	if !allDecoded {
		t.Fatal("the program does not disassemble")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	const (
		allow = unix.SECCOMP_RET_ALLOW
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
		x86   = unix.AUDIT_ARCH_X86_64
		hi    = uint64(1) << 32
	)
	stream := uint64(unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)
	cases := []struct {
		name string
		arch uint32
		nr   uint32
		args []uint64
		want uint32
	}{
		{"read", x86, unix.SYS_READ, nil, allow},
		{"openat", x86, unix.SYS_OPENAT, nil, allow},
		{"i386 getpid", unix.AUDIT_ARCH_I386, 20, nil, kill},
		{"x32 getpid", x86, 0x40000000 | 39, nil, kill},
		{"tcp4", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, stream, 0}, allow},
		{"tcp6 IPPROTO_TCP", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM, unix.IPPROTO_TCP}, allow},
		{"tcp4, high bits on the family", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET | hi, unix.SOCK_STREAM, 0}, allow},
		{"mptcp", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}, deny},
		{"mptcp6", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET6, stream, unix.IPPROTO_MPTCP}, deny},
		{"udp", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM, 0}, deny},
		{"udp with stream's bit", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM | unix.SOCK_STREAM, 0}, deny},
		{"raw", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, deny},
		{"sctp stream", x86, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}, deny},
		{"unix", x86, unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, deny},
		{"unix, high bits", x86, unix.SYS_SOCKET, []uint64{unix.AF_UNIX | hi, unix.SOCK_STREAM, 0}, deny},
		{"netlink", x86, unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, 0}, deny},
		{"packet", x86, unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, deny},
		{"vsock", x86, unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, deny},
		{"unix stream pair", x86, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, stream, 0}, allow},
		{"unix dgram pair", x86, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM, 0}, deny},
		{"inet pair", x86, unix.SYS_SOCKETPAIR, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, deny},
		{"clone (fork)", x86, unix.SYS_CLONE, []uint64{uint64(unix.SIGCHLD)}, allow},
		{"clone (thread)", x86, unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}, allow},
		{"clone NEWUSER", x86, unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, deny},
		{"clone NEWNET", x86, unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET}, deny},
		{"clone3", x86, unix.SYS_CLONE3, nil, nosys},
		{"ioctl TCGETS", x86, unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, allow},
		{"ioctl TIOCSTI", x86, unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI}, deny},
		{"ioctl TIOCSTI, high bits", x86, unix.SYS_IOCTL, []uint64{0, unix.TIOCSTI | hi}, deny},
		{"ioctl TIOCLINUX", x86, unix.SYS_IOCTL, []uint64{0, unix.TIOCLINUX}, deny},
		{"io_uring_setup", x86, unix.SYS_IO_URING_SETUP, nil, deny},
		{"mount", x86, unix.SYS_MOUNT, nil, deny},
		{"open_tree", x86, unix.SYS_OPEN_TREE, nil, deny},
		{"unshare", x86, unix.SYS_UNSHARE, nil, deny},
		{"setns", x86, unix.SYS_SETNS, nil, deny},
		{"ptrace", x86, unix.SYS_PTRACE, nil, deny},
		{"process_vm_writev", x86, unix.SYS_PROCESS_VM_WRITEV, nil, deny},
		{"keyctl", x86, unix.SYS_KEYCTL, nil, deny},
		{"bpf", x86, unix.SYS_BPF, nil, deny},
		{"perf_event_open", x86, unix.SYS_PERF_EVENT_OPEN, nil, deny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := vm.Run(seccompData(tc.arch, tc.nr, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != tc.want {
				t.Fatalf("filter returned %#x, want %#x", uint32(got), tc.want)
			}
		})
	}
}
