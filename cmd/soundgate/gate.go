package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/impl/audit"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/wal"
)

// gateOptions is what serve (and the negative control serve-unsafe) start a gate with.
type gateOptions struct {
	roles, listen, unix string
	adminUnix           string // the socket of approvers and operators only ("": none)
	allowWeakTokens     bool   // accept the demo roles file's tokens
	data                string // the log's directory; "" keeps the state in memory
	core                core.Limits
	server              server.Limits
	waitersMax          int
	snapshotEvery       uint64
	retention           time.Duration // a finished run unchanged this long is retired; 0: never
	orderedIDs          bool          // retirement moves a watermark over ids ordered in time
	trace               string        // a file the node's trace lines are appended to ("": none)
	goroutines          bool
	version             string
	logger              *slog.Logger
	// wrapLog, if set, puts a log of its own between the node and the real one
	// (serve-unsafe's early acknowledgement).
	wrapLog func(*wal.Log) node.Log

	httpAddr             string // the HTTP listener of /metrics and /healthz ("": none)
	httpAllowNonLoopback bool   // httpAddr may be other than a loopback IP
}

// gate is a started gate: the log, the node over it, the server, its listeners.
type gate struct {
	o      gateOptions
	wlog   *wal.Log     // nil in memory
	trail  *audit.Trail // the audit trail beside the log; nil in memory
	node   *node.Node
	srv    *server.Server
	served chan error // one result per listener
}

// startGate opens and replays the log, starts the node and the server and listens.
// On failure it says why on stderr and returns the exit code.
func startGate(o gateOptions) (*gate, int) {
	if o.version == "" {
		o.version = version
	}
	rs, err := o.loadRoles()
	if err != nil {
		return nil, fail(exitUsage, "%v", err)
	}
	if o.allowWeakTokens {
		o.logger.Warn("--allow-weak-tokens: the roles file may hold guessable tokens (for trying the gate out only)")
	}
	g := &gate{o: o}
	if g.node, err = g.openNode(); err != nil {
		g.closeLog()
		return nil, fail(exitFailure, "%v", err)
	}
	g.srv, err = server.New(server.Config{Roles: rs, Node: g.node, Limits: o.server, Logger: o.logger,
		Version: o.version, Goroutines: o.goroutines, Metrics: o.httpAddr != "", Log: g.wlog})
	if err != nil {
		g.close()
		return nil, fail(exitFailure, "%v", err)
	}
	ls, err := g.listen()
	if err != nil {
		g.close()
		return nil, fail(exitFailure, "%v", err)
	}
	g.served = make(chan error, len(ls))
	for _, l := range ls {
		if l.web {
			o.logger.Info("listening", "http", "http://"+l.Addr().String(), "serves", "/metrics /healthz, the approvers' page at /")
			go func() { g.served <- g.srv.ServeWeb(l) }()
			continue
		}
		o.logger.Info("listening", "addr", l.Addr().String(), "admin", l.admin, "durability", g.durability(), "io", g.io())
		serve := g.srv.Serve
		if l.admin {
			serve = g.srv.ServeAdmin
		}
		go func() { g.served <- serve(l) }()
	}
	return g, exitOK
}

func (g *gate) durability() string {
	if g.o.data == "" {
		return "memory"
	}
	return "log"
}

func (g *gate) io() string {
	if g.o.goroutines {
		return "goroutines"
	}
	return "loop"
}

// openTrace opens the trace file for appending, one write per line: the lines of
// every start, crashed ones too, follow each other in one file. A line a crash cut
// short (a kill can interrupt a write part way) is ended first, so that this start's
// first line stands on its own.
func openTrace(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the trace file: %v", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			_, err = f.Write([]byte("\n"))
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open the trace file %s: %v", path, err)
	}
	return f, nil
}

// openNode recovers the node from the log in o.data, or starts one in memory.
func (g *gate) openNode() (*node.Node, error) {
	cfg := node.Config{Limits: g.o.core, Logger: g.o.logger, WaitersMax: g.o.waitersMax, SnapshotEvery: g.o.snapshotEvery,
		Retention: g.o.retention, OrderedIDs: g.o.orderedIDs}
	if g.o.trace != "" {
		f, err := openTrace(g.o.trace)
		if err != nil {
			return nil, err
		}
		cfg.Trace = f
	}
	if g.o.data == "" {
		return node.New(cfg), nil
	}
	start := time.Now()
	var err error
	if g.wlog, err = wal.Open(g.o.data, wal.Options{}); err != nil {
		return nil, fmt.Errorf("open the log in %s: %v", g.o.data, err)
	}
	if g.o.wrapLog != nil {
		cfg.Log = g.o.wrapLog(g.wlog)
	}
	var live atomic.Pointer[node.Node] // what a failed trail fails closed
	trailPath := filepath.Join(g.o.data, audit.FileName)
	if g.trail, err = audit.Open(trailPath, g.wlog.WaitDurable, func(err error) {
		if n := live.Load(); n != nil {
			n.Fail(fmt.Errorf("the audit trail %s: %w", trailPath, err))
		}
	}); err != nil {
		return nil, fmt.Errorf("open the audit trail: %v", err)
	}
	cfg.Audit = g.trail
	n, err := node.Recover(g.wlog, cfg)
	if err != nil {
		return nil, fmt.Errorf("recover from %s: %v", g.o.data, err)
	}
	live.Store(n)
	if err := g.trail.Sync(n.LastLSN()); err != nil { // what the replay filled in
		n.Close()
		return nil, fmt.Errorf("write the audit trail %s: %v", trailPath, err)
	}
	var runs int
	n.Inspect(func(c *core.Gate) { runs = c.Len() })
	g.o.logger.Info("recovered", "dir", g.o.data, "runs", runs, "last_lsn", g.wlog.Last(),
		"torn_bytes", g.wlog.Stats().TornBytes, "took", time.Since(start).Round(time.Microsecond))
	return n, nil
}

// listener is one of the gate's listeners; an admin one is for approvers and
// operators only (server.ServeAdmin), a web one is the HTTP listener
// (server.ServeWeb).
type listener struct {
	net.Listener
	admin, web bool
}

func (g *gate) listen() ([]listener, error) {
	var ls []listener
	for _, a := range []struct {
		network, addr string
		admin, web    bool
	}{{"tcp", g.o.listen, false, false}, {"unix", g.o.unix, false, false}, {"unix", g.o.adminUnix, true, false},
		{"tcp", g.o.httpAddr, false, true}} {
		if a.addr == "" {
			continue
		}
		var l net.Listener
		var err error
		if a.network == "unix" {
			l, err = server.ListenUnix(a.addr)
		} else {
			l, err = net.Listen(a.network, a.addr)
		}
		if err == nil && a.admin {
			// Only the gate's user may connect; put the socket in a directory of
			// the operators' group for them (docs/server.md).
			if err = os.Chmod(a.addr, 0o600); err != nil {
				l.Close()
			}
		}
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return nil, fmt.Errorf("listen on %s: %v", a.addr, err)
		}
		ls = append(ls, listener{l, a.admin, a.web})
	}
	return ls, nil
}

// loadRoles reads the roles file and logs its warnings.
func (o *gateOptions) loadRoles() (*server.Roles, error) {
	rs, err := server.LoadRoles(o.roles, server.RolesOptions{AllowWeakTokens: o.allowWeakTokens})
	if err != nil {
		return nil, err
	}
	for _, w := range rs.Warnings() {
		o.logger.Warn(w)
	}
	return rs, nil
}

// reloadRoles reads the roles file again (SIGHUP), with the rules of the start: a
// file that does not pass keeps the roles the gate has, and the log says why.
func (g *gate) reloadRoles() {
	rs, err := g.o.loadRoles()
	if err == nil {
		var closed int
		if closed, err = g.srv.SetRoles(rs); err == nil {
			g.o.logger.Info("roles reloaded", "file", g.o.roles, "tokens", rs.Len(), "connections_closed", closed)
			return
		}
	}
	g.o.logger.Error("roles reload refused; the roles stay as they were", "err", err)
}

// serveUntil serves until a signal on sig or a failed listener, reloading the roles
// at each signal on hup, then shuts the gate down and returns the exit code.
func (g *gate) serveUntil(sig, hup <-chan os.Signal) int {
	code := exitOK
wait:
	for {
		select {
		case <-hup:
			g.reloadRoles()
		case s := <-sig:
			g.o.logger.Info("shutting down", "signal", s.String())
			break wait
		case err := <-g.served:
			g.o.logger.Error("listener failed", "err", err)
			code = exitFailure
			break wait
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.srv.Shutdown(ctx); err != nil {
		g.o.logger.Error("shutdown", "err", err)
		code = exitFailure
	}
	if f := g.node.Failed(); f != nil {
		g.o.logger.Error("the gate was failed closed", "err", f)
		code = exitFailure
	}
	g.close()
	return code
}

// close stops the node (a snapshot in progress ends first) and closes the log,
// saying how well group commit worked in this life.
func (g *gate) close() {
	if g.node != nil {
		g.node.Close()
	}
	if g.wlog != nil {
		st := g.wlog.Stats()
		g.o.logger.Info("log", "records", st.Records, "fdatasyncs", st.Syncs,
			"records_per_sync", fmt.Sprintf("%.1f", float64(st.Records)/float64(max(st.Syncs, 1))),
			"wakeups", st.Wakeups, "bytes", st.Bytes)
	}
	g.closeLog()
}

func (g *gate) closeLog() {
	if g.trail != nil { // after the node, before the log: it writes what the log made durable
		if err := g.trail.Close(); err != nil {
			g.o.logger.Error("audit trail", "err", err)
		}
		g.trail = nil
	}
	if g.wlog != nil {
		g.wlog.Close()
		g.wlog = nil
	}
}
