// Package escape is the escape matrix of the sandbox: for each channel an agent could
// use to get around the gate (TCP direct, MPTCP, UDP, raw, netlink and packet sockets,
// Unix sockets by path and abstract name, io_uring, writes outside the writable paths,
// /dev/shm, mount, unshare, clone into namespaces, ptrace, signals to the gate,
// terminal injection, foreign-architecture system calls) it starts a probe inside a
// sandbox that tries the channel, and checks from the host both the error the probe
// got and that the loopback sink behind the channel received nothing. The allowed
// doors are checked too: a write inside a writable path, and HTTP requests through the
// egress proxy (one admitted and logged as such, one denied with its refusal).
//
// The negative controls run the same matrix with one layer switched off (seccomp,
// Landlock, the network namespace, the read-only root) and name the channels that
// then leak or answer differently: each layer is shown to be what closes them.
//
// The probe is the calling program itself, re-executed inside the sandbox: programs
// that call Run must call RunProbeIfChild (after sandbox.RunStageIfChild) first thing.
package escape
