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

// receiveListener receives the proxy listener the sandbox init created inside the
// network namespace.
func receiveListener(handoff *os.File) (net.Listener, error) {
	fd := int(handoff.Fd())
	tv := unix.NsecToTimeval(startTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, err
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if n != 1 || oobn == 0 {
		return nil, errors.New("the sandbox init sent no listener")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("bad control message: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, f := range fds {
			unix.Close(f)
		}
		return nil, fmt.Errorf("bad rights: %v", err)
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	defer f.Close()
	return net.FileListener(f)
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
		if err := s.listenOnHost(c.ProxyPort); err != nil {
			return nil, err
		}
		c.ProxyPort = s.port
	}
	ok := false
	defer func() {
		if !ok && s.listener != nil {
			s.listener.Close()
		}
	}()
	cfgBytes, err := encodeInitConfig(c)
	if err != nil {
		return nil, err
	}
	files, err := openInitFiles()
	if err != nil {
		return nil, err
	}
	defer files.close()
	s.life = files.lifeW
	defer func() {
		if !ok {
			s.life.Close()
		}
	}()
	if err := s.startInit(c, files); err != nil {
		return nil, err
	}
	if err := s.handshake(files, cfgBytes, !c.Disable.NetNS); err != nil {
		s.cmd.Process.Kill()
		s.Wait()
		return nil, err
	}
	ok = true
	return s, nil
}

// listenOnHost opens the proxy listener on the host's loopback (Disable.NetNS), at
// port or, with 0, a free one.
func (s *Sandbox) listenOnHost(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return wrap(ErrSetup, err, "proxy listener: %v", err)
	}
	s.listener = l
	s.port = l.Addr().(*net.TCPAddr).Port
	return nil
}

// encodeInitConfig is the initConfig of c as the sandbox init reads it.
func encodeInitConfig(c Config) ([]byte, error) {
	ic := initConfig{Argv: c.Argv, Env: c.Env, Dir: c.Dir, Writable: c.Writable,
		ReadOnly: c.ReadOnly, Tmp: c.WritableTmp, ProxyPort: c.ProxyPort, Disable: c.Disable}
	b, err := json.Marshal(ic)
	if err != nil || len(b) > ConfigBytesMax {
		return nil, wrap(ErrConfig, err, "configuration too large or not encodable")
	}
	return b, nil
}

// initFiles are both ends of what the gate hands the sandbox init: the config, life
// and status pipes, and the handoff socket over which the init sends the proxy
// listener.
type initFiles struct {
	configR, configW      *os.File
	lifeR, lifeW          *os.File
	statusR, statusW      *os.File
	handoff, handoffChild *os.File
}

// openInitFiles opens the pipes and the handoff socket; on error it closes what it
// opened.
func openInitFiles() (*initFiles, error) {
	f := &initFiles{}
	for _, p := range []struct{ r, w **os.File }{{&f.configR, &f.configW}, {&f.lifeR, &f.lifeW}, {&f.statusR, &f.statusW}} {
		r, w, err := os.Pipe()
		if err != nil {
			f.close()
			f.lifeW.Close()
			return nil, wrap(ErrSetup, err, "pipe: %v", err)
		}
		*p.r, *p.w = r, w
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		f.close()
		f.lifeW.Close()
		return nil, wrap(ErrSetup, err, "socketpair: %v", err)
	}
	f.handoff, f.handoffChild = os.NewFile(uintptr(pair[0]), "handoff"), os.NewFile(uintptr(pair[1]), "handoff-child")
	return f, nil
}

// child lists the init's ends, in the order of fdConfig, fdLife, fdStatus, fdHandoff.
func (f *initFiles) child() []*os.File {
	return []*os.File{f.configR, f.lifeR, f.statusW, f.handoffChild}
}

// close closes every end but lifeW, which the Sandbox keeps (closing it ends the
// sandbox). Closing a file twice, or a nil one, does nothing.
func (f *initFiles) close() {
	for _, x := range []*os.File{f.handoffChild, f.handoff, f.statusW, f.statusR, f.lifeR, f.configW, f.configR} {
		x.Close()
	}
}

// startInit starts the sandbox init in its new namespaces.
func (s *Sandbox) startInit(c Config, files *initFiles) error {
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
		ExtraFiles: files.child(),
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
		return wrap(ErrSetup, err, "start the sandbox init: %v", err)
	}
	s.cmd = cmd
	return nil
}

// handshake hands the started init its configuration, receives the proxy listener
// from it (inNetNS), gives the go-ahead and waits for the init's word that the agent
// runs. On error the caller kills the init.
func (s *Sandbox) handshake(files *initFiles, cfgBytes []byte, inNetNS bool) error {
	files.configR.Close()
	files.lifeR.Close()
	files.statusW.Close()
	files.handoffChild.Close()
	if _, err := files.configW.Write(cfgBytes); err != nil {
		return wrap(ErrSetup, err, "hand over the configuration: %v", err)
	}
	files.configW.Close()
	if inNetNS {
		l, err := receiveListener(files.handoff)
		if err != nil {
			// The init says why in its status line, if it could.
			if ok, msg := readStatus(files.statusR); !ok && msg != "" {
				err = errors.New(msg)
			}
			return wrap(ErrSetup, err, "proxy listener in the sandbox: %v", err)
		}
		s.listener = l
	}
	if _, err := s.life.Write([]byte{1}); err != nil {
		return wrap(ErrSetup, err, "go-ahead: %v", err)
	}
	type result struct {
		ok  bool
		msg string
	}
	done := make(chan result, 1)
	go func() {
		ok, msg := readStatus(files.statusR)
		done <- result{ok, msg}
	}()
	select {
	case r := <-done:
		if !r.ok {
			return wrap(ErrSetup, nil, "%s", r.msg)
		}
	case <-time.After(startTimeout):
		return wrap(ErrSetup, nil, "no word from the sandbox init in %v", startTimeout)
	}
	return nil
}
