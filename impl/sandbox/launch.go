package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// startTimeout bounds how long Start waits for the sandbox init to report.
const startTimeout = 30 * time.Second

// Sandbox is a running agent. Its Listener is the only door out of the sandbox:
// the caller serves the egress proxy on it.
type Sandbox struct {
	cmd      *exec.Cmd
	listener net.Listener
	life     *os.File // the write end of the life pipe; closing it ends the sandbox
	port     int

	waitOnce sync.Once
	code     int
	err      error
	waited   chan struct{} // closed when the init has been waited for
}

// Listener returns the proxy listener: inside the sandbox's network namespace (or on
// the host's loopback with Disable.NetNS). The caller accepts on it; Wait closes it.
func (s *Sandbox) Listener() net.Listener { return s.listener }

// ProxyURL returns the proxy's address as the agent sees it ("http://127.0.0.1:3128").
func (s *Sandbox) ProxyURL() string { return "http://127.0.0.1:" + strconv.Itoa(s.port) }

// InitPID returns the host PID of the sandbox init (the reaper).
func (s *Sandbox) InitPID() int { return s.cmd.Process.Pid }

// Signal sends sig to the sandbox init, which forwards SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH to the agent; SIGKILL ends the sandbox.
func (s *Sandbox) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Kill ends the sandbox and every process in it.
func (s *Sandbox) Kill() error { return s.cmd.Process.Kill() }

// Wait waits for the agent and returns its exit status (128+N if signal N ended
// it; ExitSetup or ExitGateGone if the sandbox init ended it). It closes the listener.
func (s *Sandbox) Wait() (int, error) {
	s.waitOnce.Do(func() {
		err := s.cmd.Wait()
		close(s.waited)
		if s.listener != nil {
			s.listener.Close()
		}
		s.life.Close()
		var ee *exec.ExitError
		switch {
		case err == nil:
			s.code = 0
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				s.code = 128 + int(ws.Signal())
			} else {
				s.code = ee.ExitCode()
			}
		default:
			s.code, s.err = -1, err
		}
	})
	return s.code, s.err
}

// Start builds the sandbox and starts the agent in it. On error nothing is left
// running. The process must have called RunStageIfChild at start-up.
func Start(c Config) (*Sandbox, error) {
	c, err := c.normalize()
	if err != nil {
		return nil, err
	}
	if err := ProbeKernel().Check(c.Disable); err != nil {
		return nil, err
	}
	s := &Sandbox{port: c.ProxyPort, waited: make(chan struct{})}
	if c.Disable.NetNS {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(c.ProxyPort)))
		if err != nil {
			return nil, wrap(ErrSetup, err, "proxy listener: %v", err)
		}
		s.listener = l
		s.port = l.Addr().(*net.TCPAddr).Port
		c.ProxyPort = s.port
	}
	ok := false
	defer func() {
		if !ok && s.listener != nil {
			s.listener.Close()
		}
	}()
	ic := initConfig{Argv: c.Argv, Env: c.Env, Dir: c.Dir, Writable: c.Writable,
		ReadOnly: c.ReadOnly, Tmp: c.WritableTmp, ProxyPort: c.ProxyPort, Disable: c.Disable}
	cfgBytes, err := json.Marshal(ic)
	if err != nil || len(cfgBytes) > ConfigBytesMax {
		return nil, wrap(ErrConfig, err, "configuration too large or not encodable")
	}
	var pipes [3][2]*os.File // config, life, status: [read, write]
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, wrap(ErrSetup, err, "pipe: %v", err)
		}
		pipes[i] = [2]*os.File{r, w}
		defer r.Close()
		if i != 1 {
			defer w.Close()
		}
	}
	s.life = pipes[1][1]
	defer func() {
		if !ok {
			s.life.Close()
		}
	}()
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !c.Disable.NetNS {
		flags |= unix.CLONE_NEWNET
	}
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{initArg0},
		Env:        []string{},
		Stdin:      c.Stdin,
		Stdout:     c.Stdout,
		Stderr:     c.Stderr,
		ExtraFiles: []*os.File{pipes[0][0], pipes[1][0], pipes[2][1]},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:                 flags,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
		},
	}
	if !c.Disable.Pdeathsig {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	// The parent-death signal fires when the thread that forked dies, not the
	// process: fork from a thread locked to a goroutine that lives until the init has
	// been waited for, so that it fires only when the gate itself dies. The reaper's
	// pipe is the guarantee; this is the second line.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-s.waited
		}
	}()
	if err := <-started; err != nil {
		return nil, wrap(ErrSetup, err, "start the sandbox init: %v", err)
	}
	s.cmd = cmd
	abort := func(err error) (*Sandbox, error) {
		cmd.Process.Kill()
		s.Wait()
		return nil, err
	}
	pipes[0][0].Close()
	pipes[1][0].Close()
	pipes[2][1].Close()
	if _, err := pipes[0][1].Write(cfgBytes); err != nil {
		return abort(wrap(ErrSetup, err, "hand over the configuration: %v", err))
	}
	pipes[0][1].Close()
	if !c.Disable.NetNS {
		l, err := listenInNetNS(cmd.Process.Pid, c.ProxyPort)
		if err != nil {
			return abort(wrap(ErrSetup, err, "proxy listener in the sandbox: %v", err))
		}
		s.listener = l
	}
	if _, err := s.life.Write([]byte{1}); err != nil {
		return abort(wrap(ErrSetup, err, "go-ahead: %v", err))
	}
	type result struct {
		ok  bool
		msg string
	}
	done := make(chan result, 1)
	go func() {
		ok, msg := readStatus(pipes[2][0])
		done <- result{ok, msg}
	}()
	select {
	case r := <-done:
		if !r.ok {
			return abort(wrap(ErrSetup, nil, "%s", r.msg))
		}
	case <-time.After(startTimeout):
		return abort(wrap(ErrSetup, nil, "no word from the sandbox init in %v", startTimeout))
	}
	ok = true
	return s, nil
}

// listenInNetNS creates a TCP listener on 127.0.0.1:port inside the network namespace
// of pid, after bringing its loopback up. It enters the namespace on one locked OS
// thread and leaves it; a thread that cannot leave is never unlocked, so the Go
// runtime retires it with the goroutine.
func listenInNetNS(pid, port int) (net.Listener, error) {
	target, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, err
	}
	defer target.Close()
	type result struct {
		l   net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, err}
			return
		}
		defer orig.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("setns: %w", err)}
			return
		}
		var r result
		if r.err = loopbackUp(); r.err == nil {
			r.l, r.err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		}
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			if r.l != nil {
				r.l.Close()
			}
			ch <- result{nil, fmt.Errorf("leave the namespace: %w", err)}
			return // the thread stays locked and dies with this goroutine
		}
		runtime.UnlockOSThread()
		ch <- r
	}()
	r := <-ch
	return r.l, r.err
}

// loopbackUp sets IFF_UP on "lo" in the calling thread's network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}
