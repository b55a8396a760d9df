package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/mcpproxy"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
)

func init() {
	register(&command{name: "mcp-proxy", summary: "stand in for an MCP server: every tools/call asks the gate (agent)",
		usage: "soundgate mcp-proxy [flags] -- COMMAND [ARGS...]", run: mcpProxyMain})
}

// mcpProxyUsage is the help text of soundgate mcp-proxy, before its flags.
const mcpProxyUsage = `Usage: soundgate mcp-proxy [flags] -- COMMAND [ARGS...]

Put in an MCP host's config in place of an MCP server's command (stdio): the proxy
launches COMMAND as the upstream server, re-exposes its tools unchanged, and asks
the gate before forwarding each tools/call (docs/integrations/mcp.md). admit:
forwarded once, and its result recorded; duplicate: answered from the record, not
forwarded; denied: a tool error saying it was NOT executed; held: kept open (with
progress notifications) until the decision, a cancel or --max-hold, or with
--deferred answered at once "pending approval, call again". Resources, prompts and
completions are forwarded without asking the gate.

With --http ADDR the host reaches the proxy over Streamable HTTP instead of stdio, at
http://ADDR/mcp (a loopback address only), each request with the header
"Authorization: Bearer <the token in --http-token-file>".

The run is the call's _meta["soundgate/run"], else --run; an operator opens it. The
credential is an agent's: --token-file, or SOUNDGATE_TOKEN_FILE / SOUNDGATE_TOKEN.
Logs go to standard error (the host's MCP log). Exit codes: 0 the host disconnected,
1 failure (gate or upstream unreachable), 2 usage (and -h; a bad policy file),
5 refused by the gate (the run is not open, the credential is not an agent's).

Flags:
`

// mcpProxyFlags are the flags and the upstream command of soundgate mcp-proxy.
type mcpProxyFlags struct {
	run, policy, gateAddr, gateUnix, tokenFile, server string
	httpAddr, httpTokenFile                            string
	maxHold, progressEvery                             time.Duration
	deferred                                           bool
	argv                                               []string
}

// parseMCPProxyFlags parses the arguments; a nil result comes with the exit status
// (help, or a usage error already printed).
func parseMCPProxyFlags(args []string) (*mcpProxyFlags, int) {
	fs := flag.NewFlagSet("mcp-proxy", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), mcpProxyUsage)
		fs.PrintDefaults()
	}
	addr := os.Getenv("SOUNDGATE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7433"
	}
	f := &mcpProxyFlags{}
	fs.StringVar(&f.run, "run", os.Getenv("SOUNDGATE_RUN"), "the run of calls whose _meta names none (env SOUNDGATE_RUN)")
	fs.StringVar(&f.policy, "policy", "", "policy file: which tools are gated (default: every tool)")
	fs.StringVar(&f.gateAddr, "gate", addr, "gate address: host:port, or unix:/path (env SOUNDGATE_ADDR)")
	fs.StringVar(&f.gateUnix, "gate-unix", "", "the gate's Unix socket (instead of --gate)")
	fs.StringVar(&f.tokenFile, "token-file", "", "file holding an agent's credential (env SOUNDGATE_TOKEN_FILE; or SOUNDGATE_TOKEN)")
	fs.StringVar(&f.server, "server", "", "the server's name in the policy and in keys (default: the base name of COMMAND)")
	fs.DurationVar(&f.maxHold, "max-hold", mcpproxy.DefaultMaxHold, "how long a held call stays open waiting for a decision")
	fs.DurationVar(&f.progressEvery, "progress-every", mcpproxy.DefaultProgressEvery, "interval of progress notifications while a call is held")
	fs.BoolVar(&f.deferred, "deferred", false, "answer a held call at once: pending approval, call again with the same arguments")
	fs.StringVar(&f.httpAddr, "http", "", "serve the host over Streamable HTTP at http://ADDR/mcp (loopback only) instead of stdio")
	fs.StringVar(&f.httpTokenFile, "http-token-file", "", "with --http: file holding the bearer token the host must send (at least 16 bytes)")
	if err := fs.Parse(args); err != nil {
		return nil, exitUsage // -h too: nothing was proxied
	}
	f.argv = fs.Args()
	switch {
	case len(f.argv) == 0:
		fmt.Fprintln(os.Stderr, "soundgate: mcp-proxy: no upstream command: give it after --")
		fs.Usage()
		return nil, exitUsage
	case f.gateUnix != "" && explicitFlag(fs, "gate"):
		return nil, fail(exitUsage, "mcp-proxy: give --gate or --gate-unix, not both")
	case f.maxHold <= 0 || f.progressEvery <= 0:
		return nil, fail(exitUsage, "mcp-proxy: --max-hold and --progress-every must be positive")
	case f.httpAddr == "" && f.httpTokenFile != "":
		return nil, fail(exitUsage, "mcp-proxy: --http-token-file without --http")
	case f.httpAddr != "" && f.httpTokenFile == "":
		return nil, fail(exitUsage, "mcp-proxy: --http needs --http-token-file: the endpoint acts with the agent's credential")
	}
	if f.httpAddr != "" {
		// A host that needs the endpoint from elsewhere runs its own proxy next to it:
		// the endpoint acts with the agent's credential, never served on a network.
		if err := server.CheckHTTPAddr(f.httpAddr, false); err != nil {
			return nil, fail(exitUsage, "mcp-proxy: --http: %v: the endpoint acts with the agent's credential, so it is not served on a network", err)
		}
	}
	if f.gateUnix != "" {
		f.gateAddr = "unix:" + f.gateUnix
	}
	if f.server == "" {
		f.server = filepath.Base(f.argv[0])
	}
	return f, 0
}

// serveOn serves a handler on ln until ctx ends; held calls keep their streams open,
// so after a short graceful shutdown the rest are closed.
func serveOn(ln net.Listener) mcpproxy.Serve {
	return func(ctx context.Context, h http.Handler) error {
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		stop := context.AfterFunc(ctx, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			hs.Close()
		})
		defer stop()
		return hs.Serve(ln)
	}
}

// explicitFlag reports whether name was given on the command line.
func explicitFlag(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

func mcpProxyMain(args []string) int {
	f, code := parseMCPProxyFlags(args)
	if f == nil {
		return code
	}
	policy, err := mcpproxy.LoadPolicy(f.policy)
	if err != nil {
		return fail(exitUsage, "mcp-proxy: %v", err)
	}
	token, err := credential("", f.tokenFile)
	if err != nil {
		return fail(exitUsage, "mcp-proxy: %v", err)
	}
	var httpToken string
	if f.httpAddr != "" {
		if httpToken, err = client.Token("", f.httpTokenFile, ""); err != nil {
			return fail(exitUsage, "mcp-proxy: --http-token-file: %v", err)
		}
		if len(httpToken) < mcpproxy.HTTPTokenBytesMin {
			return fail(exitUsage, "mcp-proxy: --http-token-file: the token is %d bytes, fewer than %d", len(httpToken), mcpproxy.HTTPTokenBytesMin)
		}
		if httpToken == token {
			return fail(exitUsage, "mcp-proxy: --http-token-file holds the agent's gate credential: give the host a token of its own")
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, err := client.Dial(dialCtx, f.gateAddr, token)
	cancel()
	if err != nil {
		return fail(exitFailure, "mcp-proxy: the gate: %v", err)
	}
	if c.Role != proto.RoleAgent {
		c.Close()
		return fail(exitRefused, "mcp-proxy: the credential's role is %s; the proxy needs an agent's", c.Role)
	}
	if f.run != "" {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		st, err := c.Status(sctx, f.run, "")
		cancel()
		switch {
		case err != nil:
			c.Close()
			return fail(exitRefused, "mcp-proxy: run %q: %v (an operator opens it: soundgate open %s)", f.run, err, f.run)
		case st.Status != core.RunActive:
			c.Close()
			return fail(exitRefused, "mcp-proxy: run %q is %s, not active: every call would be denied", f.run, st.Status)
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p, err := mcpproxy.New(mcpproxy.Config{Server: f.server, Run: f.run, Policy: policy, Gate: gateConn{c},
		Redial: func(ctx context.Context) (mcpproxy.Conn, error) {
			nc, err := client.Dial(ctx, f.gateAddr, token)
			if err != nil {
				return nil, err
			}
			return gateConn{nc}, nil
		},
		Closed:  func(err error) bool { return errors.Is(err, client.ErrClosed) },
		MaxHold: f.maxHold, ProgressEvery: f.progressEvery, Deferred: f.deferred, Logger: logger, Version: version})
	if err != nil {
		c.Close()
		return fail(exitUsage, "mcp-proxy: %v", err)
	}
	cmd := exec.Command(f.argv[0], f.argv[1:]...)
	cmd.Stderr = os.Stderr // the upstream's log joins the proxy's, in the host's MCP log
	upstream := &mcp.CommandTransport{Command: cmd}
	if f.httpAddr != "" {
		ln, lerr := net.Listen("tcp", f.httpAddr)
		if lerr != nil {
			c.Close()
			return fail(exitFailure, "mcp-proxy: --http: %v", lerr)
		}
		logger.Info("serving the host over Streamable HTTP", "url", "http://"+ln.Addr().String()+mcpproxy.HTTPPath)
		err = p.RunHTTP(ctx, serveOn(ln), httpToken, upstream)
	} else {
		err = p.Run(ctx, p.HostTransport(os.Stdin, os.Stdout), upstream)
	}
	switch {
	case errors.Is(err, mcpproxy.ErrHTTPConfig):
		return fail(exitUsage, "mcp-proxy: %v", err)
	case errors.Is(err, mcpproxy.ErrPolicy):
		return fail(exitUsage, "mcp-proxy: %v", err)
	case err != nil:
		return fail(exitFailure, "mcp-proxy: %v", err)
	}
	return exitOK
}

// gateConn adapts the Go client to mcpproxy.Conn.
type gateConn struct{ *client.Client }

func (g gateConn) Admit(ctx context.Context, run, key string, epoch uint64, gated bool, wait time.Duration) (proto.AdmitResult, error) {
	return g.Client.Admit(ctx, run, key, epoch, client.AdmitOptions{Gated: gated, Wait: wait})
}
