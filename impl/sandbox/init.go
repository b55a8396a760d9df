package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// initArg0 is the argv[0] under which the gate re-executes itself as the sandbox init.
const initArg0 = "soundgate:sandbox-init"

// The file descriptors the gate hands to the sandbox init.
const (
	fdConfig  = 3 // the initConfig, JSON, then end of file
	fdLife    = 4 // one go-ahead byte, then end of file when the gate dies
	fdStatus  = 5 // "ok\n" once the agent runs, or "err MESSAGE\n"
	fdHandoff = 6 // a Unix socket: the proxy listener goes to the gate over it
)

// Exit statuses of the sandbox init itself (the agent's status otherwise).
const (
	// ExitSetup: the sandbox could not be built or the agent not started.
	ExitSetup = 125
	// ExitGateGone: the gate died; the agent's tree was killed with the init.
	ExitGateGone = 137
)

// initConfig is what the gate tells the sandbox init.
type initConfig struct {
	Argv      []string
	Env       []string
	Dir       string
	Writable  []string
	ReadOnly  []string
	Tmp       bool // WritableTmp
	ProxyPort int
	Disable   Layers
}

// RunStageIfChild runs the sandbox init and exits if this process is one; it
// returns at once otherwise. Call it first thing in main (and in TestMain) of every
// program that calls Start.
func RunStageIfChild() {
	if len(os.Args) == 0 || os.Args[0] != initArg0 {
		return
	}
	os.Exit(sandboxInit())
}

// sandboxInit is PID 1 of the sandbox. It returns the exit status.
func sandboxInit() int {
	status := os.NewFile(fdStatus, "status")
	life := os.NewFile(fdLife, "life")
	for _, fd := range []int{fdConfig, fdLife, fdStatus, fdHandoff} {
		unix.CloseOnExec(fd)
	}
	fail := func(err error) int {
		fmt.Fprintf(status, "err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return ExitSetup
	}
	c, err := readInitConfig()
	if err != nil {
		return fail(err)
	}
	if err := buildView(&c); err != nil {
		return fail(err)
	}
	if !c.Disable.NetNS {
		if err := handOffListener(c.ProxyPort); err != nil {
			return fail(err)
		}
	}
	if !awaitGoAhead(life) {
		return ExitGateGone
	}
	dir := c.Dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = "/"
	}
	path, err := lookPath(c.Argv[0], c.Env, dir)
	if err != nil {
		return fail(err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	if err := restrictSelf(&c); err != nil {
		return fail(err)
	}
	pid, err := startAgent(path, dir, &c, sigs)
	if err != nil {
		return fail(fmt.Errorf("soundgate/sandbox: start %s: %w", c.Argv[0], err))
	}
	fmt.Fprintf(status, "ok\n")
	status.Close()
	return reapUntil(pid)
}

// readInitConfig reads the gate's initConfig from fdConfig.
func readInitConfig() (initConfig, error) {
	var c initConfig
	cf := os.NewFile(fdConfig, "config")
	if err := json.NewDecoder(io.LimitReader(cf, ConfigBytesMax)).Decode(&c); err != nil {
		return c, fmt.Errorf("soundgate/sandbox: read configuration: %w", err)
	}
	cf.Close()
	return c, nil
}

// awaitGoAhead waits for the gate's byte on life (its proxy listener is ready then)
// and reports whether it came. From then on, end of file on life (the gate is gone)
// exits this process: that ends the PID namespace, and with it every process the
// agent started.
func awaitGoAhead(life *os.File) bool {
	var b [1]byte
	if n, _ := life.Read(b[:]); n != 1 {
		return false
	}
	go func() {
		io.Copy(io.Discard, life)
		os.Exit(ExitGateGone)
	}()
	return true
}

// startAgent forks and executes the agent, then passes the signals of sigs on to it,
// both from one locked thread: Landlock (ABI below 8) gives every thread its own
// domain, and a signal may only go to a process in the sender's domain or below, so
// the agent must be in that thread's domain.
func startAgent(path, dir string, c *initConfig, sigs <-chan os.Signal) (int, error) {
	type forked struct {
		pid int
		err error
	}
	forkedC := make(chan forked, 1)
	// With a terminal, the terminal's signals (^C, ^\\, resizes) reach the agent
	// directly (it is in the terminal's foreground process group): passing them on
	// too would deliver them twice.
	_, ttyErr := unix.IoctlGetTermios(0, unix.TCGETS)
	fromTTY := ttyErr == nil
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as we do
		pid, err := syscall.ForkExec(path, c.Argv, &syscall.ProcAttr{
			Dir: dir, Env: c.Env, Files: []uintptr{0, 1, 2},
		})
		forkedC <- forked{pid, err}
		if err != nil {
			return
		}
		for s := range sigs {
			if fromTTY && (s == syscall.SIGINT || s == syscall.SIGQUIT || s == syscall.SIGWINCH) {
				continue
			}
			syscall.Kill(pid, s.(syscall.Signal))
		}
	}()
	f := <-forkedC
	return f.pid, f.err
}

// reapUntil reaps every child (orphans of the agent's tree are re-parented to this
// process) until the agent, pid, exits, and returns its status: it becomes ours, and
// our exit kills whatever it left behind.
func reapUntil(pid int) int {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return ExitSetup
		}
		if wpid != pid {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
}

// handOffListener brings up the loopback of the sandbox's network namespace, listens
// on 127.0.0.1:port there and sends the listener to the gate over fdHandoff: the gate
// accepts on it, and dials upstream from the host's namespace. This process keeps no
// copy: the agent never holds the proxy's listener.
func handOffListener(port int) error {
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("soundgate/sandbox: loopback: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("soundgate/sandbox: proxy listener: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("soundgate/sandbox: bind 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(fd, listenBacklog); err != nil {
		return fmt.Errorf("soundgate/sandbox: listen: %w", err)
	}
	if err := unix.Sendmsg(fdHandoff, []byte{1}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("soundgate/sandbox: hand the listener to the gate: %w", err)
	}
	unix.Close(fdHandoff)
	return nil
}

// listenBacklog is the proxy listener's backlog.
const listenBacklog = 128

// loopbackUp sets IFF_UP on "lo" in this process's network namespace.
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

// lookPath resolves name the way a shell would, with the agent's PATH.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := executable(name); err != nil {
			return "", fmt.Errorf("soundgate/sandbox: %s: %w", name, err)
		}
		return name, nil
	}
	pathEnv := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("soundgate/sandbox: %s: not found in the sandbox's PATH", name)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("not an executable file")
	}
	return nil
}

// readStatus reads the init's one status line.
func readStatus(r io.Reader) (ok bool, msg string) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, 64<<10), 4096).ReadString('\n')
	line = strings.TrimSuffix(line, "\n")
	switch {
	case line == "ok":
		return true, ""
	case strings.HasPrefix(line, "err "):
		return false, strings.TrimPrefix(line, "err ")
	case err != nil:
		return false, "the sandbox init exited before starting the agent"
	}
	return false, "unexpected status " + fmt.Sprintf("%q", line)
}
