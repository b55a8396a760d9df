//go:build brokengate

package main

// A deliberately unsafe server, for the negative controls of the linearizability
// check (lincheck): built only with -tags brokengate, never in a normal build. Its
// log acknowledges every record at once (WaitDurable returns before the record is
// even written) and writes records to the real write-ahead log only every
// unsafeFlushEvery, so a SIGKILL loses answers the gate already gave. lincheck must
// report such a server as not linearizable once it is killed and restarted.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/wal"
)

// unsafeFlushEvery is how long the unsafe log keeps acknowledged records in memory.
const unsafeFlushEvery = 100 * time.Millisecond

func init() {
	register(&command{name: "serve-unsafe", summary: "BROKEN ON PURPOSE: acknowledges before the log is written (tests only)",
		usage: "soundgate serve-unsafe --roles FILE --data DIR [--listen ADDR] [--unix PATH]", run: serveUnsafeMain})
}

// earlyAckLog is a node.Log whose WaitDurable lies: records wait in memory and
// reach the real log only on the next flush.
type earlyAckLog struct {
	real    *wal.Log
	mu      sync.Mutex
	pending [][]byte
	next    wal.LSN
}

func (l *earlyAckLog) Append(rec []byte) (wal.LSN, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, append([]byte(nil), rec...))
	l.next++
	return l.next, nil
}

// WaitDurable returns at once: the defect under test.
func (l *earlyAckLog) WaitDurable(context.Context, wal.LSN) error { return nil }

func (l *earlyAckLog) flushLoop() {
	for range time.Tick(unsafeFlushEvery) {
		l.mu.Lock()
		batch := l.pending
		l.pending = nil
		var last wal.LSN
		for _, rec := range batch {
			lsn, err := l.real.Append(rec)
			if errors.Is(err, wal.ErrClosed) {
				l.mu.Unlock()
				return // the gate shut down
			}
			if err != nil {
				l.mu.Unlock()
				fmt.Fprintln(os.Stderr, "serve-unsafe: append:", err)
				os.Exit(exitFailure)
			}
			last = lsn
		}
		l.mu.Unlock()
		if last > 0 {
			l.real.WaitDurable(context.Background(), last)
		}
	}
}

func serveUnsafeMain(args []string) int {
	fs := flag.NewFlagSet("serve-unsafe", flag.ContinueOnError)
	o := gateOptions{core: core.DefaultLimits(), server: server.DefaultLimits(), waitersMax: node.WaitersMaxDefault,
		version: version + "-unsafe", logger: slog.New(slog.DiscardHandler)}
	fs.StringVar(&o.listen, "listen", "", "TCP address")
	fs.StringVar(&o.unix, "unix", "", "Unix socket path")
	fs.StringVar(&o.roles, "roles", "", "roles file")
	fs.StringVar(&o.data, "data", "", "log directory")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if o.roles == "" || o.data == "" || (o.listen == "" && o.unix == "") {
		return fail(exitUsage, "serve-unsafe needs --roles, --data and --listen or --unix")
	}
	o.wrapLog = func(real *wal.Log) node.Log {
		ul := &earlyAckLog{real: real, next: real.Last()}
		go ul.flushLoop()
		return ul
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	g, code := startGate(o)
	if g == nil {
		return code
	}
	fmt.Fprintln(os.Stderr, "serve-unsafe: WARNING: this gate acknowledges before its log is written (negative control)")
	g.serveUntil(sig, nil) // no roles reload: a negative control
	return exitOK
}
