package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Limits of the process harness.
const (
	buildTimeout   = 5 * time.Minute        // go build of the soundgate binary
	startTimeout   = 20 * time.Second       // from exec until every listener accepts
	startPollDelay = 2 * time.Millisecond   // between readiness probes
	stopTimeout    = 10 * time.Second       // graceful stop before SIGKILL
	dialTimeout    = 500 * time.Millisecond // one readiness probe
	// settleTime is how long Stop waits after a start before it sends SIGTERM: the
	// server installs its signal handler just after it starts listening, and a
	// SIGTERM before that ends it without a graceful shutdown.
	settleTime = 300 * time.Millisecond
)

// ErrProcess reports a soundgate process that would not build, start or stop.
var ErrProcess = errors.New("soundgate/servertest: process")

// Build compiles the soundgate command (cmd/soundgate of this module) with the given
// build tags into dir and returns the binary's path. It finds the module's root from
// the working directory upwards.
func Build(ctx context.Context, dir string, tags ...string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	name := strings.Join(append([]string{"soundgate"}, tags...), "-")
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, goTool(), append(args, "./cmd/soundgate")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: go %v: %v\n%s", ErrProcess, args, err, out)
	}
	return bin, nil
}

// moduleRoot is the folder of this module's go.mod, found from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/soundgate/soundgate\n") {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: the module github.com/soundgate/soundgate is not above %s", ErrProcess, dir)
}

func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Process is one soundgate server process over a data directory that survives Kill
// and Start: the real binary, for harnesses that crash it (lincheck, the crash
// harness) or need it as users run it (the probes).
type Process struct {
	// Bin is the soundgate binary; Args its subcommand and extra flags, e.g.
	// ["serve"], ["serve", "--durability", "memory"] or ["serve-unsafe"].
	Bin  string
	Args []string
	Dir  string // working directory: data/, the roles file, the server's log

	TCP  string // 127.0.0.1:port, fixed across restarts; "" listens on no TCP port
	Unix string // the socket path; "" listens on no socket
	// Env is added to the environment of every start (set it before Start to
	// change the next one, e.g. to arm a failpoint).
	Env []string
	// Trace, if set, is the file every start of a serve appends its trace lines to
	// (serve --trace), for trace validation (cmd/tracecheck). NewProcess sets it to a
	// new file in $SOUNDGATE_TRACE_DIR when that is set, so that every harness built on
	// Process (lincheck, the crash harness, the probes) leaves its traces there.
	Trace string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	log     *os.File
	logFrom int64 // where the current life's log begins
	starts  int
	ready   time.Time // when the last Start saw every listener accept
	took    time.Duration
}

// NewProcess prepares a server in dir (created if needed): the roles fixture, a data
// directory, a free TCP port and a socket path. It does not start it.
func NewProcess(bin string, args []string, dir string) (*Process, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProcess, err)
	}
	if _, err := WriteRoles(dir); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProcess, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%w: pick a port: %v", ErrProcess, err)
	}
	addr := l.Addr().String()
	l.Close()
	// Socket paths are limited to about 108 bytes: keep the socket in a short folder.
	sock := filepath.Join(dir, "gate.sock")
	if len(sock) > 100 {
		short, err := os.MkdirTemp("", "sgp")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrProcess, err)
		}
		sock = filepath.Join(short, "gate.sock")
	}
	p := &Process{Bin: bin, Args: args, Dir: dir, TCP: addr, Unix: sock}
	if traces := os.Getenv(TraceDirEnv); traces != "" && len(args) > 0 && args[0] == "serve" {
		p.Trace = filepath.Join(traces, fmt.Sprintf("trace-%d-%d.ndjson", os.Getpid(), traceFiles.Add(1)))
	}
	return p, nil
}

// TraceDirEnv names the directory where NewProcess puts a trace file per server.
const TraceDirEnv = "SOUNDGATE_TRACE_DIR"

var traceFiles atomic.Int64

// LogPath is the file the server's output goes to, over all its lives.
func (p *Process) LogPath() string { return filepath.Join(p.Dir, "server.log") }

// Start runs the server and waits until it accepts on each of its addresses.
func (p *Process) Start(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%w: already running", ErrProcess)
	}
	args := append(append([]string{}, p.Args...), "--roles", filepath.Join(p.Dir, "roles.json"),
		"--data", filepath.Join(p.Dir, "data"), "--listen="+p.TCP)
	if p.Unix != "" {
		args = append(args, "--unix", p.Unix)
	}
	if p.Trace != "" {
		args = append(args, "--trace", p.Trace)
	}
	log, err := os.OpenFile(p.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrProcess, err)
	}
	p.starts++
	fmt.Fprintf(log, "---- servertest: start %d: %s %v\n", p.starts, p.Bin, args)
	p.logFrom, _ = log.Seek(0, io.SeekCurrent)
	cmd := exec.Command(p.Bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.SysProcAttr = dieWithParent()
	began := time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("%w: start %s: %v", ErrProcess, p.Bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	p.cmd, p.exited, p.log = cmd, exited, log
	if err := p.awaitListeners(ctx); err != nil {
		return err
	}
	p.ready = time.Now()
	p.took = p.ready.Sub(began)
	return nil
}

// awaitListeners polls each address until it accepts, the process exits, or
// startTimeout passes.
func (p *Process) awaitListeners(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	for _, a := range []struct{ network, address string }{{"unix", p.Unix}, {"tcp", p.TCP}} {
		if a.address == "" {
			continue
		}
		for {
			var d net.Dialer
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			c, err := d.DialContext(dctx, a.network, a.address)
			cancel()
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-p.exited:
				st := p.cmd.ProcessState
				p.cmd = nil
				p.log.Close()
				return fmt.Errorf("%w: %s exited during start (%v); see %s", ErrProcess, p.Bin, st, p.LogPath())
			default:
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				p.killLocked()
				return fmt.Errorf("%w: not accepting on %s after %v; see %s", ErrProcess, a.address, startTimeout, p.LogPath())
			}
			time.Sleep(startPollDelay)
		}
	}
	return nil
}

// StartTook is how long the last Start took, from exec until every listener accepted.
func (p *Process) StartTook() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.took
}

// Exited is closed when the current life of the process ends (nil before a Start).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Kill sends SIGKILL (a crash: nothing is flushed) and waits for the process to end.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.killLocked()
}

func (p *Process) killLocked() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.endLocked()
}

func (p *Process) endLocked() {
	p.log.Close()
	p.cmd = nil
}

// Reap notes that the process ended by itself (a failpoint): it waits for the end.
func (p *Process) Reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	<-p.exited
	p.endLocked()
}

// Stop asks the server to shut down (SIGTERM) and kills it if it does not within
// stopTimeout. It reports an error when the server exited with a failure.
func (p *Process) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	time.Sleep(time.Until(p.ready.Add(settleTime)))
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		p.killLocked()
		return fmt.Errorf("%w: did not stop within %v", ErrProcess, stopTimeout)
	}
	st := p.cmd.ProcessState
	p.endLocked()
	if !st.Success() {
		return fmt.Errorf("%w: exited with %v; see %s", ErrProcess, st, p.LogPath())
	}
	return nil
}

// Running reports whether the process was started and has not been killed, stopped
// or reaped since.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Log returns what the current (or last) life of the process wrote so far.
func (p *Process) Log() string {
	p.mu.Lock()
	from := p.logFrom
	p.mu.Unlock()
	b, err := os.ReadFile(p.LogPath())
	if err != nil || int64(len(b)) < from {
		return ""
	}
	return string(b[from:])
}
