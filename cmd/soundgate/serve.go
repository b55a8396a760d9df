package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
)

func init() {
	register(&command{name: "serve", summary: "run the gate", usage: "soundgate serve --roles FILE [flags]", run: serveMain})
}

const serveUsage = `Usage: soundgate serve --roles FILE [flags]

Runs the gate. Agents admit effects, approvers decide, operators open, cancel and fence
runs (docs/protocol.md). By default every decision is written to a write-ahead log in
--data and fdatasynced before it is answered; on start the log is replayed. If the
log cannot be written the gate refuses everything (unavailable) until restarted.
SIGHUP reads the roles file again: a file that does not pass keeps the roles the
gate has (the log says why); connections of tokens it removed or changed are closed.

Flags:
`

func serveMain(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	o := gateOptions{core: core.DefaultLimits(), server: server.DefaultLimits(), waitersMax: node.WaitersMaxDefault}
	fs.StringVar(&o.listen, "listen", "127.0.0.1:7433", "TCP address to listen on (empty: none)")
	fs.StringVar(&o.unix, "unix", "", "Unix socket path to listen on (empty: none)")
	fs.StringVar(&o.adminUnix, "admin-unix", "", "Unix socket path for approvers and operators only, with connections of its own, created mode 0600: where agents cannot open it, no agent can keep an operator from cancel (empty: none)")
	fs.StringVar(&o.httpAddr, "http", "", "serve /metrics (Prometheus text format), /healthz and the approvers' page (docs/approvers.md) over HTTP on this address, a loopback IP:PORT such as 127.0.0.1:9733 (empty: none; docs/operations.md)")
	fs.BoolVar(&o.httpAllowNonLoopback, "http-allow-non-loopback", false, "let --http listen on an address that is not a loopback IP (every interface, a LAN): anyone who reaches it reads the gate's metrics, and approvers' tokens cross the network unencrypted")
	fs.StringVar(&o.roles, "roles", "", "roles file: tokens and what each may do (required; see docs/server.md)")
	fs.BoolVar(&o.allowWeakTokens, "allow-weak-tokens", false, "accept short, repetitive or placeholder tokens in the roles file (the demo file's; for trying the gate out only)")
	fs.StringVar(&o.data, "data", "soundgate-data", "directory of the write-ahead log")
	durability := fs.String("durability", "log", "log: durable (write-ahead log, fsync before reply); memory: in-memory, for tests only")
	fs.Uint64Var(&o.snapshotEvery, "snapshot-every", 100000, "log compaction: a snapshot waits for at least this many records, and for as many records as the last snapshot held runs and effects (0: never)")
	o.limitFlags(fs)
	ioModel := fs.String("io", "loop", "loop: one event loop serves every connection (Linux epoll; elsewhere goroutines); goroutines: a reader and a writer goroutine per connection")
	verbose := fs.Bool("v", false, "log every connection-level event")
	fs.StringVar(&o.trace, "trace", "", "append one JSON line per step of the core, per answer and per start to this file, for trace validation against the spec (go run ./cmd/tracecheck FILE); slows every request by a write: for verification, not for production")
	gcPercent := fs.Int("gc-percent", gcPercentDefault, "the Go collector's target: the heap may grow this many percent over what is live before a collection (the GOGC environment variable, when set, wins unless this flag is given)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *gcPercent < 1 {
		return fail(exitUsage, "--gc-percent must be at least 1 (the collector cannot be turned off)")
	}
	if fs.NArg() != 0 {
		return fail(exitUsage, "serve takes no arguments (got %q)", fs.Args())
	}
	if err := o.check(); err != nil {
		return fail(exitUsage, "%v", err)
	}
	switch *ioModel {
	case "loop", "goroutines":
		o.goroutines = *ioModel == "goroutines"
	default:
		return fail(exitUsage, "--io must be loop or goroutines, not %q", *ioModel)
	}
	switch *durability {
	case "log":
	case "memory":
		o.data = ""
	default:
		return fail(exitUsage, "--durability must be log or memory, not %q", *durability)
	}
	// Signals are caught from the start, so that a SIGTERM during recovery or start-up
	// still ends in an orderly shutdown.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	// SIGHUP too: its default action ends the process, so one sent as soon as the gate
	// says it listens (a supervisor's reload) must already find it caught.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	o.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	setGCPercent(fs, *gcPercent, o.logger)
	if o.data == "" {
		o.logger.Warn("in-memory mode: nothing survives a restart (for tests only)")
	}
	g, code := startGate(o)
	if g == nil {
		return code
	}
	return g.serveUntil(sig, hup)
}

// gcPercentDefault keeps the gate's resident size near its live heap: what the gate
// holds lives long (runs until they retire, retired ids for good), so the default
// GOGC=100 would let the process grow to twice the state for little speed gained.
const gcPercentDefault = 25

// setGCPercent sets the collector's target: the flag if given, else GOGC from the
// environment if set, else the default.
func setGCPercent(fs *flag.FlagSet, percent int, logger *slog.Logger) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "gc-percent" })
	if env, ok := os.LookupEnv("GOGC"); ok && !given {
		logger.Info("collector target from the environment", "GOGC", env)
		return
	}
	debug.SetGCPercent(percent)
	logger.Debug("collector target", "gc_percent", percent)
}

// limitFlags defines the flags of the gate's limits and quotas, and of retention.
func (o *gateOptions) limitFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.core.RunsMax, "max-runs", o.core.RunsMax, "runs the gate keeps, tombstones included, retired ones not")
	fs.DurationVar(&o.retention, "retention", 24*time.Hour, "a finished run (cancelled, timed out, or nothing pending, held or admitted and not completed) that has not changed this long is retired: its id stays taken, its effects are forgotten, a replay of one is denied (0: never)")
	fs.BoolVar(&o.orderedIDs, "ordered-ids", false, "run ids order in time as bytes (ULIDs, UUIDv7 in lower case, zero-padded sequence numbers): a retired run then costs nothing, as every id up to the highest retired one that the gate does not hold is retired, never-opened ones included, so an id must be opened within --retention of any later id's (docs/server.md)")
	fs.IntVar(&o.core.RetiredMax, "max-retired", o.core.RetiredMax, "retired runs the gate keeps the ids of (each costs its id's bytes and 4 more); once reached, finished runs are kept")
	fs.Int64Var(&o.core.StateBytesMax, "max-state-bytes", o.core.StateBytesMax, "the memory budget of the state: bytes of run ids, keys and results, with 256 per run and 96 per effect; past it, new runs, effects and results are refused (state_full) until runs retire")
	fs.IntVar(&o.core.KeysPerRunMax, "max-keys-per-run", o.core.KeysPerRunMax, "effects per run")
	fs.IntVar(&o.core.PendingPerRunMax, "max-pending-per-run", o.core.PendingPerRunMax, "open approvals per run")
	fs.IntVar(&o.core.ResultBytesMax, "max-result-bytes", o.core.ResultBytesMax, "bytes of a completed effect's result")
	fs.IntVar(&o.server.ConnectionsMax, "max-connections", o.server.ConnectionsMax, "open connections of --listen and --unix together")
	fs.IntVar(&o.server.ReservedConnections, "reserved-connections", 0, "of --max-connections, those agents may not take, kept for approvers and operators (0: a sixty-fourth of --max-connections, at most 64)")
	fs.IntVar(&o.server.ConnectionsPerTokenMax, "max-connections-per-token", o.server.ConnectionsPerTokenMax, "open connections of one token")
	fs.IntVar(&o.server.AdminConnectionsMax, "max-admin-connections", o.server.AdminConnectionsMax, "open connections of --admin-unix")
	fs.IntVar(&o.server.WatchesMax, "max-watches", o.server.WatchesMax, "connections that watch the inbox at once (pending --watch; one more watch is refused with overloaded)")
	fs.DurationVar(&o.server.HelloTimeout, "hello-timeout", o.server.HelloTimeout, "a connection that has not said hello this long after it was accepted is closed")
	fs.DurationVar(&o.server.IdleTimeout, "idle-timeout", o.server.IdleTimeout, "an agent's connection with no admit waiting and no answer due, that has sent and been sent nothing this long, is closed; approvers' and operators' never are (0: the default)")
	fs.IntVar(&o.waitersMax, "max-waiters", o.waitersMax, "admits waiting for a decision, across connections")
	fs.IntVar(&o.server.WaitersPerTokenMax, "max-waiters-per-token", o.server.WaitersPerTokenMax, "admits of one token waiting for a decision (one more is refused with quota)")
	fs.IntVar(&o.server.RunsPerTokenMax, "max-runs-per-token", o.server.RunsPerTokenMax, "runs one token opened that are not retired yet (one more open is refused with quota; counted from the gate's start)")
	fs.IntVar(&o.server.ResultBytesPerTokenMax, "max-result-bytes-per-token", o.server.ResultBytesPerTokenMax, "bytes of results one token recorded in runs not retired yet (a complete that would pass it is refused with quota; counted from the gate's start)")
}

// check refuses limits that cannot work, before anything starts.
func (o *gateOptions) check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"max-runs", o.core.RunsMax}, {"max-keys-per-run", o.core.KeysPerRunMax}, {"max-pending-per-run", o.core.PendingPerRunMax},
		{"max-result-bytes", o.core.ResultBytesMax}, {"max-connections", o.server.ConnectionsMax}, {"max-waiters", o.waitersMax},
		{"max-connections-per-token", o.server.ConnectionsPerTokenMax},
		{"max-admin-connections", o.server.AdminConnectionsMax}, {"max-waiters-per-token", o.server.WaitersPerTokenMax},
		{"max-runs-per-token", o.server.RunsPerTokenMax}, {"max-result-bytes-per-token", o.server.ResultBytesPerTokenMax},
		{"max-retired", o.core.RetiredMax}, {"max-watches", o.server.WatchesMax}} {
		if f.v < 1 {
			return fmt.Errorf("--%s must be at least 1", f.name)
		}
	}
	if o.core.StateBytesMax < 1 {
		return fmt.Errorf("--max-state-bytes must be at least 1")
	}
	if o.core.ResultBytesMax > proto.ResultBytesMax {
		return fmt.Errorf("--max-result-bytes is at most %d (the wire's limit)", proto.ResultBytesMax)
	}
	if o.roles == "" {
		return fmt.Errorf("serve needs --roles FILE (an open gate would fail open); see docs/server.md")
	}
	if o.listen == "" && o.unix == "" {
		return fmt.Errorf("nothing to listen on: give --listen or --unix")
	}
	if o.httpAllowNonLoopback && o.httpAddr == "" {
		return fmt.Errorf("--http-allow-non-loopback without --http: give the address it allows")
	}
	if o.httpAddr != "" {
		if err := server.CheckHTTPAddr(o.httpAddr, o.httpAllowNonLoopback); err != nil {
			hint := ""
			if server.CheckHTTPAddr(o.httpAddr, true) == nil {
				hint = "; give --http-allow-non-loopback too to mean it"
			}
			return fmt.Errorf("--http: %v: it would expose /metrics to the network%s", err, hint)
		}
	}
	if o.retention < 0 {
		return fmt.Errorf("--retention must not be negative (0: never retire)")
	}
	if o.orderedIDs && o.retention == 0 {
		return fmt.Errorf("--ordered-ids moves the watermark as runs retire: it needs --retention above 0")
	}
	if o.server.HelloTimeout < time.Millisecond {
		return fmt.Errorf("--hello-timeout must be at least 1ms")
	}
	if o.server.IdleTimeout < 0 {
		return fmt.Errorf("--idle-timeout must not be negative (0: the default, %v)", server.DefaultLimits().IdleTimeout)
	}
	if o.server.IdleTimeout > 0 && o.server.IdleTimeout < time.Millisecond {
		return fmt.Errorf("--idle-timeout must be at least 1ms (0: the default, %v)", server.DefaultLimits().IdleTimeout)
	}
	if o.server.ReservedConnections < 0 {
		return fmt.Errorf("--reserved-connections must not be negative")
	}
	if o.server.ReservedConnections >= o.server.ConnectionsMax {
		return fmt.Errorf("--reserved-connections (%d) must be under --max-connections (%d): agents would get none", o.server.ReservedConnections, o.server.ConnectionsMax)
	}
	return nil
}
