// Package sandbox runs an agent so that the kernel leaves it one way out: the gate.
//
// Start launches the agent in new user, mount, PID, IPC, UTS and network namespaces.
// The network namespace has only a loopback interface, and the only thing listening
// on it is the gate's egress proxy: the sandbox init creates that listener inside the
// namespace and hands the descriptor to the gate over a Unix socket; the gate accepts
// on it and dials upstream from the host side once the request is admitted
// (impl/egress). No step needs privileges outside the new user namespace, so the
// sandbox also runs for an unprivileged user where user namespaces are allowed.
// The agent sees a read-only view of the host's root with the paths named in
// Config.Writable bound read-write, empty tmpfs mounts over the directories where
// sockets live (/tmp, /run), a minimal /dev and a fresh /proc. It runs with no
// capabilities, under a Landlock domain (LandlockABIMin or newer, or Start refuses)
// and a seccomp filter (seccomp.go) that closes what Landlock leaves open at that
// ABI: socket families and protocols other than TCP (MPTCP, UDP, raw, netlink,
// packet, Unix), io_uring, mount, namespaces, ptrace, keyrings and terminal injection.
//
// The first process in the namespaces is a reaper (the sandbox init, PID 1 of the new
// PID namespace). It builds the mount view, waits for the gate's go-ahead, restricts
// itself, starts the agent, reaps orphans and exits with the agent's status. It holds
// the read end of a pipe whose write end only the gate has: when the gate dies, even
// by SIGKILL, the kernel closes that end, the reaper sees end of file and exits, and
// the kernel kills every process left in the PID namespace. Pdeathsig is set too, but
// only as a second line: Go ties it to the thread that forked.
//
// The init stage runs in the same binary as the gate (re-executed through
// /proc/self/exe): every program that calls Start must call RunStageIfChild first
// thing in main (or TestMain).
//
// Layers can be switched off one at a time (Config.Disable) for the negative controls
// of the escape matrix (impl/sandbox/escape); nothing else should use that switch.
package sandbox
