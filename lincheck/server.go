package lincheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// The tokens of the roles file the checker writes for the server it drives.
const (
	agentToken    = "lincheck-agent-token-0001"
	approverToken = "lincheck-approver-token-0001"
	operatorToken = "lincheck-operator-token-0001"
)

const rolesJSON = `{"tokens": [
  {"name": "lincheck-agent", "token": "` + agentToken + `", "role": "agent", "runs": ["*"]},
  {"name": "lincheck-approver", "token": "` + approverToken + `", "role": "approver"},
  {"name": "lincheck-operator", "token": "` + operatorToken + `", "role": "operator"}
]}`

// Limits of the process harness.
const (
	buildTimeout   = 5 * time.Minute        // go build of the server binary
	startTimeout   = 20 * time.Second       // from exec until both listeners accept
	startPollDelay = 5 * time.Millisecond   // between readiness probes
	stopTimeout    = 10 * time.Second       // graceful stop before SIGKILL
	dialTimeout    = 500 * time.Millisecond // one readiness probe
)

// ErrServer reports a server process that would not build, start or stop.
var ErrServer = errors.New("soundgate/lincheck: server process")

// Build compiles the soundgate command (package cmd/soundgate of this module) with the
// given build tags into dir and returns the binary's path. It runs `go build` in the
// current directory, which must be inside the module.
func Build(ctx context.Context, dir string, tags ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	name := "soundgate"
	for _, t := range tags {
		name += "-" + t
	}
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", joinComma(tags))
	}
	args = append(args, "github.com/soundgate/soundgate/cmd/soundgate")
	cmd := exec.CommandContext(ctx, goTool(), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: go %v: %v\n%s", ErrServer, args, err, out)
	}
	return bin, nil
}

func goTool() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// Server is one `soundgate serve` process listening on TCP and on a Unix socket, over
// one data directory that survives Kill and Start.
type Server struct {
	// Bin is the soundgate binary; Command its subcommand and extra flags, e.g.
	// ["serve"] or ["serve", "--durability", "memory"] or ["serve-unsafe"].
	Bin     string
	Command []string
	Dir     string // working directory: data/, the roles file, the socket, the log

	TCP  string // 127.0.0.1:port, fixed across restarts
	Unix string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	stderr *os.File
	starts int
	ready  time.Time // when the last Start saw both listeners accept
}

// settleTime is how long Stop waits after a start before it sends SIGTERM: the
// server installs its signal handler just after it starts listening, and a SIGTERM
// before that ends it without a graceful shutdown.
const settleTime = 300 * time.Millisecond

// NewServer prepares a server in dir (created if needed): roles file, data dir, a
// free TCP port, a socket path. It does not start it.
func NewServer(bin string, command []string, dir string) (*Server, error) {
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "roles.json"), []byte(rolesJSON), 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServer, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%w: pick a port: %v", ErrServer, err)
	}
	addr := l.Addr().String()
	l.Close()
	// Unix socket paths are limited to ~108 bytes: keep the socket in a short dir.
	sock := filepath.Join(dir, "gate.sock")
	if len(sock) > 100 {
		f, err := os.MkdirTemp("", "lc")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrServer, err)
		}
		sock = filepath.Join(f, "gate.sock")
	}
	return &Server{Bin: bin, Command: command, Dir: dir, TCP: addr, Unix: sock}, nil
}

// Start runs the server and waits until it accepts on both addresses.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("%w: already running", ErrServer)
	}
	args := append([]string{}, s.Command...)
	args = append(args, "--roles", filepath.Join(s.Dir, "roles.json"), "--data", filepath.Join(s.Dir, "data"),
		"--listen", s.TCP, "--unix", s.Unix)
	errf, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrServer, err)
	}
	s.starts++
	fmt.Fprintf(errf, "---- lincheck: start %d: %s %v\n", s.starts, s.Bin, args)
	cmd := exec.Command(s.Bin, args...)
	cmd.Stdout, cmd.Stderr = errf, errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		errf.Close()
		return fmt.Errorf("%w: start %s: %v", ErrServer, s.Bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited, s.stderr = cmd, exited, errf
	deadline := time.Now().Add(startTimeout)
	for _, addr := range []struct{ network, address string }{{"unix", s.Unix}, {"tcp", s.TCP}} {
		for {
			var d net.Dialer
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			c, err := d.DialContext(dctx, addr.network, addr.address)
			cancel()
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				s.cmd = nil
				errf.Close()
				return fmt.Errorf("%w: %s exited during start (exit %v); see %s", ErrServer, s.Bin, cmd.ProcessState, errf.Name())
			default:
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				s.killLocked()
				return fmt.Errorf("%w: not accepting on %s after %v; see %s", ErrServer, addr.address, startTimeout, errf.Name())
			}
			time.Sleep(startPollDelay)
		}
	}
	s.ready = time.Now()
	return nil
}

// Kill sends SIGKILL (a crash: nothing is flushed) and waits for the process to end.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.stderr.Close()
	s.cmd = nil
}

// Stop asks the server to shut down (SIGTERM) and kills it if it does not within
// stopTimeout. It reports an error when the server exited with a failure.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	time.Sleep(time.Until(s.ready.Add(settleTime)))
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		s.killLocked()
		return fmt.Errorf("%w: did not stop within %v", ErrServer, stopTimeout)
	}
	st := s.cmd.ProcessState
	s.stderr.Close()
	s.cmd = nil
	if !st.Success() {
		return fmt.Errorf("%w: exited with %v; see %s", ErrServer, st, filepath.Join(s.Dir, "server.log"))
	}
	return nil
}

// Running reports whether the process was started and not yet killed or stopped.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}
