package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/wal"
)

func init() {
	register(&command{name: "serve", summary: "run the gate", usage: "soundgate serve --roles FILE [flags]", run: serveMain})
}

func serveMain(args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: soundgate serve --roles FILE [flags]

Runs the gate. Agents admit effects, approvers decide, operators open, cancel and fence
runs (docs/protocol.md). By default every decision is written to a write-ahead log in
--data and fdatasynced before it is answered; on start the log is replayed. If the
log cannot be written the gate refuses everything (unavailable) until restarted.

Flags:
`)
		fs.PrintDefaults()
	}
	cl, sl := core.DefaultLimits(), server.DefaultLimits()
	listen := fs.String("listen", "127.0.0.1:7433", "TCP address to listen on (empty: none)")
	unix := fs.String("unix", "", "Unix socket path to listen on (empty: none)")
	roles := fs.String("roles", "", "roles file: tokens and what each may do (required; see docs/server.md)")
	data := fs.String("data", "soundgate-data", "directory of the write-ahead log")
	durability := fs.String("durability", "log", "log: durable (write-ahead log, fsync before reply); memory: in-memory, for tests only")
	snapEvery := fs.Int("snapshot-every", 100000, "log compaction: a snapshot waits for at least this many records, and for as many records as the last snapshot held runs and effects")
	fs.IntVar(&cl.RunsMax, "max-runs", cl.RunsMax, "runs the gate keeps, tombstones included")
	fs.IntVar(&cl.KeysPerRunMax, "max-keys-per-run", cl.KeysPerRunMax, "effects per run")
	fs.IntVar(&cl.PendingPerRunMax, "max-pending-per-run", cl.PendingPerRunMax, "open approvals per run")
	fs.IntVar(&cl.ResultBytesMax, "max-result-bytes", cl.ResultBytesMax, "bytes of a completed effect's result")
	fs.IntVar(&sl.ConnectionsMax, "max-connections", sl.ConnectionsMax, "open connections")
	fs.IntVar(&sl.WaitersMax, "max-waiters", sl.WaitersMax, "admits waiting for a decision, across connections")
	ioModel := fs.String("io", "loop", "loop: one event loop serves every connection (Linux epoll; elsewhere goroutines); goroutines: a reader and a writer goroutine per connection")
	verbose := fs.Bool("v", false, "log every connection-level event")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		return fail(exitUsage, "serve takes no arguments (got %q)", fs.Args())
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max-runs", cl.RunsMax}, {"max-keys-per-run", cl.KeysPerRunMax}, {"max-pending-per-run", cl.PendingPerRunMax},
		{"max-result-bytes", cl.ResultBytesMax}, {"max-connections", sl.ConnectionsMax}, {"max-waiters", sl.WaitersMax}} {
		if f.v < 1 {
			return fail(exitUsage, "--%s must be at least 1", f.name)
		}
	}
	if *ioModel != "loop" && *ioModel != "goroutines" {
		return fail(exitUsage, "--io must be loop or goroutines, not %q", *ioModel)
	}
	if cl.ResultBytesMax > proto.ResultBytesMax {
		return fail(exitUsage, "--max-result-bytes is at most %d (the wire's limit)", proto.ResultBytesMax)
	}
	// Signals are caught from the start, so that a SIGTERM during recovery or start-up
	// still ends in an orderly shutdown.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if *roles == "" {
		return fail(exitUsage, "serve needs --roles FILE (an open gate would fail open); see docs/server.md")
	}
	rs, err := server.LoadRoles(*roles)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if *listen == "" && *unix == "" {
		return fail(exitUsage, "nothing to listen on: give --listen or --unix")
	}

	cfg := server.Config{Roles: rs, Core: cl, Limits: sl, Logger: logger, Version: version, Goroutines: *ioModel == "goroutines"}
	var wlog *wal.Log
	var last wal.LSN
	switch *durability {
	case "log":
		start := time.Now()
		if wlog, err = wal.Open(*data, wal.Options{}); err != nil {
			return fail(exitFailure, "open the log in %s: %v", *data, err)
		}
		defer wlog.Close()
		if cfg.Gate, last, err = server.Recover(wlog, cl); err != nil {
			return fail(exitFailure, "recover from %s: %v", *data, err)
		}
		cfg.Log, cfg.LastLSN = wlog, last
		st := wlog.Stats()
		logger.Info("recovered", "dir", *data, "runs", cfg.Gate.Len(), "last_lsn", last,
			"torn_bytes", st.TornBytes, "took", time.Since(start).Round(time.Microsecond))
	case "memory":
		logger.Warn("in-memory mode: nothing survives a restart (for tests only)")
	default:
		return fail(exitUsage, "--durability must be log or memory, not %q", *durability)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}

	var ls []net.Listener
	if *listen != "" {
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			return fail(exitFailure, "listen on %s: %v", *listen, err)
		}
		ls = append(ls, l)
	}
	if *unix != "" {
		os.Remove(*unix) // a stale socket from a killed gate
		l, err := net.Listen("unix", *unix)
		if err != nil {
			return fail(exitFailure, "listen on %s: %v", *unix, err)
		}
		ls = append(ls, l)
	}
	errc := make(chan error, len(ls))
	for _, l := range ls {
		logger.Info("listening", "addr", l.Addr().String(), "durability", *durability, "io", *ioModel)
		go func() { errc <- srv.Serve(l) }()
	}
	stopSnap, snapDone := make(chan struct{}), make(chan struct{})
	if wlog != nil && *snapEvery > 0 {
		go func() {
			defer close(snapDone)
			snapshotLoop(srv, wlog, uint64(*snapEvery), wlog.Stats().SnapshotLSN, logger, stopSnap)
		}()
	} else {
		close(snapDone)
	}

	code := exitOK
	select {
	case s := <-sig:
		logger.Info("shutting down", "signal", s.String())
	case err := <-errc:
		logger.Error("listener failed", "err", err)
		code = exitFailure
	}
	close(stopSnap)
	<-snapDone // a compaction in progress ends before the log closes (wlog.Close, deferred)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		logger.Error("shutdown", "err", err)
		code = exitFailure
	}
	if f := srv.Failed(); f != nil {
		logger.Error("the gate was failed closed", "err", f)
		code = exitFailure
	}
	if wlog != nil {
		// How well group commit worked in this life: records per fdatasync, and how
		// often a request waiting for the disk was woken (once each is the least).
		st := wlog.Stats()
		logger.Info("log", "records", st.Records, "fdatasyncs", st.Syncs,
			"records_per_sync", fmt.Sprintf("%.1f", float64(st.Records)/float64(max(st.Syncs, 1))),
			"wakeups", st.Wakeups, "bytes", st.Bytes)
	}
	return code
}

// snapshotLoop compacts the log: it writes a snapshot once snapshotDue says so, and
// the log then deletes the segments the snapshot covers, so that the disk stays
// bounded.
func snapshotLoop(srv *server.Server, l *wal.Log, every uint64, lastSnap wal.LSN, logger *slog.Logger, stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	entries := 0 // runs and effects in the last snapshot (0: none taken by this process)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if !snapshotDue(uint64(l.Last()-lastSnap), every, entries) {
			continue
		}
		began := time.Now()
		lsn, state, err := srv.Snapshot()
		encoded := time.Since(began) // the server's lock was held for this long
		if err == nil {
			err = l.WaitDurable(context.Background(), lsn)
		}
		if err == nil {
			err = l.Snapshot(lsn, state)
		}
		if err != nil {
			if !errors.Is(err, wal.ErrFailed) {
				logger.Error("snapshot", "err", err)
			}
			continue
		}
		lastSnap, entries = lsn, srv.Entries()
		logger.Info("snapshot", "lsn", lsn, "bytes", len(state), "segments", l.Stats().Segments, "encode", encoded.Round(time.Microsecond))
	}
}

// snapshotDue: a snapshot is due once at least every records follow the last one,
// and at least as many as the last snapshot held runs and effects (entries). A
// snapshot encodes the whole state under the server's lock, so with a fixed count
// alone a large gate paid for its whole state every `every` records: at 100k
// admissions/s, a stall every second that grew with the state (about 13% of a 5 s
// pipelined bench, docs/verify/wal.md). With the second condition each snapshot is
// paid for by as many records as it encodes entries (Redis rewrites its append-only
// file on a like rule, by size), and the disk holds at most the snapshot, plus
// max(every, entries) records, plus what one second of load appends, plus a segment.
func snapshotDue(recordsSince, every uint64, entries int) bool {
	return recordsSince >= every && recordsSince >= uint64(entries)
}
