package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/sandbox"
	"golang.org/x/sys/unix"
)

func init() {
	// A sandbox's init re-executes this binary; it never reaches main.
	sandbox.RunStageIfChild()
	register(&command{name: "run", summary: "run an agent whose only way out is the gate (kernel-enforced)",
		usage: "soundgate run [flags] -- COMMAND [ARGS...]", run: runMain})
}

// pathsFlag collects a repeatable path flag.
type pathsFlag []string

func (p *pathsFlag) String() string     { return strings.Join(*p, ",") }
func (p *pathsFlag) Set(s string) error { *p = append(*p, s); return nil }

// proxyEnv are the variables that point HTTP clients at the gate's proxy.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"}

// agentEnv is the agent's environment: the caller's, without the gate's credential,
// with the proxy variables pointing at the gate and SOUNDGATE_RUN set.
func agentEnv(base []string, proxyURL string, run core.RunID) []string {
	drop := map[string]bool{"SOUNDGATE_TOKEN": true, "SOUNDGATE_TOKEN_FILE": true, "SOUNDGATE_ADDR": true, "SOUNDGATE_RUN": true,
		"NO_PROXY": true, "no_proxy": true}
	for _, k := range proxyEnv {
		drop[k] = true
	}
	env := make([]string, 0, len(base)+len(proxyEnv)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	for _, k := range proxyEnv {
		env = append(env, k+"="+proxyURL)
	}
	return append(env, "SOUNDGATE_RUN="+string(run))
}

// runUsage is the help text of soundgate run, before its flags.
const runUsage = `Usage: soundgate run [flags] -- COMMAND [ARGS...]

Runs COMMAND so that the kernel leaves it one way out: the gate's HTTP(S) proxy
(docs/mediation.md). The agent gets new user, mount, PID, IPC, UTS and network
namespaces (only loopback, where the proxy listens), a read-only view of the host
with --writable paths bound read-write, no capabilities, Landlock and a seccomp
filter. Every request through the proxy (absolute-URI or CONNECT) is admitted
through the gate first: held while the run is paused, refused after a cancel or a
rejection, forwarded only once admitted. HTTP_PROXY, HTTPS_PROXY and SOUNDGATE_RUN
are set for the agent; the gate's credential is not passed on. The exit status is
the agent's (128+N if signal N ended it; 125 if the sandbox could not be built).

Flags:
`

// runFlags are the flags and the command of soundgate run.
type runFlags struct {
	gateAddr, token, tokenFile, run, dir, logPath string
	local, tmp                                    bool
	writable, readOnly                            pathsFlag
	port                                          int
	heldWait                                      time.Duration
	argv                                          []string
}

func runMain(args []string) int {
	f, code := parseRunFlags(args)
	if f == nil {
		return code
	}
	runID := core.RunID(f.run)
	admitter, closeAdmitter, code := runAdmitter(f, runID)
	if admitter == nil {
		return code
	}
	defer closeAdmitter()
	logw, closeLog, err := openEgressLog(f.logPath)
	if err != nil {
		return fail(exitUsage, "egress log: %v", err)
	}
	defer closeLog()
	var logMu sync.Mutex
	proxy := &egress.Proxy{Admitter: admitter, Run: runID, HeldWaitMax: f.heldWait, Log: func(e egress.Event) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(logw, "%s %s\n", e.Time.UTC().Format(time.RFC3339Nano), e)
	}}
	proxyURL := fmt.Sprintf("http://127.0.0.1:%d", f.port)
	sb, err := sandbox.Start(sandbox.Config{
		Argv: f.argv, Env: agentEnv(os.Environ(), proxyURL, runID), Dir: f.dir,
		Writable: f.writable, ReadOnly: f.readOnly, WritableTmp: f.tmp, ProxyPort: f.port,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
	})
	switch {
	case errors.Is(err, sandbox.ErrConfig):
		return fail(exitUsage, "%v", err)
	case err != nil:
		return fail(sandbox.ExitSetup, "%v", err)
	}
	go proxy.Serve(sb.Listener())
	stop := forwardSignals(sb)
	defer stop()
	code, err = sb.Wait()
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	return code
}

// parseRunFlags parses soundgate run's arguments; a nil result comes with the exit
// status (help, or a usage error already printed).
func parseRunFlags(args []string) (*runFlags, int) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), runUsage)
		fs.PrintDefaults()
	}
	addr := os.Getenv("SOUNDGATE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7433"
	}
	f := &runFlags{}
	fs.StringVar(&f.gateAddr, "addr", addr, "gate address: host:port, or unix:/path (env SOUNDGATE_ADDR)")
	fs.StringVar(&f.token, "token", "", "an agent's credential (env SOUNDGATE_TOKEN); other local users see it in ps: prefer --token-file")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding an agent's credential (env SOUNDGATE_TOKEN_FILE)")
	fs.StringVar(&f.run, "run", os.Getenv("SOUNDGATE_RUN"), "the run the agent's effects belong to (env SOUNDGATE_RUN; an operator opens it)")
	fs.BoolVar(&f.local, "local", false, "no gate server: an in-process gate with no approver and no log (demos and tests)")
	fs.Var(&f.writable, "writable", "host path the agent may write (repeatable)")
	fs.Var(&f.readOnly, "read-only", "host path to show read-only where the view hides the host, e.g. under /tmp (repeatable)")
	fs.BoolVar(&f.tmp, "tmp", true, "give the agent a private writable /tmp")
	fs.StringVar(&f.dir, "dir", "", "working directory of the agent (default: the current one)")
	fs.IntVar(&f.port, "port", sandbox.DefaultProxyPort, "TCP port of the proxy inside the sandbox")
	fs.DurationVar(&f.heldWait, "held-wait", egress.DefaultHeldWaitMax, "how long a request waits while its run is paused")
	fs.StringVar(&f.logPath, "log", "-", "egress log: one line per request (-: standard error)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK
		}
		return nil, exitUsage
	}
	f.argv = fs.Args()
	if len(f.argv) == 0 {
		fs.Usage()
		return nil, exitUsage
	}
	if f.run == "" {
		return nil, fail(exitUsage, "no run: give --run or set SOUNDGATE_RUN")
	}
	return f, 0
}

// runAdmitter is the gate the proxy asks: an in-process one with --local, else the
// gate server, dialled with an agent's credential, where the run must be open. A nil
// admitter comes with the exit status (the failure already printed); release closes
// the connection.
func runAdmitter(f *runFlags, runID core.RunID) (a egress.Admitter, release func(), code int) {
	if f.local {
		g := egress.NewLocalGate()
		if err := g.Open(runID); err != nil {
			return nil, nil, fail(exitUsage, "run %q: %v", f.run, err)
		}
		return g, func() {}, 0
	}
	token, err := credential(f.token, f.tokenFile)
	if err != nil {
		return nil, nil, fail(exitUsage, "%v (or --local)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, f.gateAddr, token)
	if err != nil {
		return nil, nil, fail(exitFailure, "%v", err)
	}
	if c.Role != proto.RoleAgent {
		defer c.Close()
		return nil, nil, fail(exitUsage, "the credential's role is %s; soundgate run needs an agent's", c.Role)
	}
	ca := &egress.ClientAdmitter{C: c, Closed: func(err error) bool { return errors.Is(err, client.ErrClosed) },
		// the gate closes an agent's connection after --idle-timeout of silence
		Redial: func(ctx context.Context) (egress.Conn, error) { return client.Dial(ctx, f.gateAddr, token) }}
	if _, err := ca.Epoch(ctx, runID); err != nil {
		defer ca.Close()
		return nil, nil, fail(exitRefused, "run %q: %v (an operator opens it: soundgate open %s)", f.run, err, f.run)
	}
	return ca, func() { ca.Close() }, 0
}

// openEgressLog opens the egress log at path ("-": standard error) for appending;
// release closes it.
func openEgressLog(path string) (w io.Writer, release func(), err error) {
	if path == "-" {
		return os.Stderr, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// forwardSignals passes SIGTERM and SIGHUP on to the agent (through the sandbox's
// init), and SIGINT unless a terminal delivered it to the agent already; stop ends
// that.
func forwardSignals(sb *sandbox.Sandbox) (stop func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	_, ttyErr := unix.IoctlGetTermios(int(os.Stdin.Fd()), unix.TCGETS)
	go func() {
		for s := range sigs {
			if s == syscall.SIGINT && ttyErr == nil {
				continue
			}
			sb.Signal(s)
		}
	}()
	return func() { signal.Stop(sigs) }
}
