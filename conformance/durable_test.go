package conformance

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"

	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/walfs"
	"github.com/soundgate/soundgate/model"
)

// durableImpl is a real server whose write-ahead log lives on a file system that can
// crash (walfs.FaultFS: a crash keeps only what was fsynced, plus a random torn
// prefix of the rest). Crash kills the server's life and starts the next one on the
// same log, through the same recovery as `soundgate serve`.
type durableImpl struct {
	*WireImpl
	fs    *walfs.FaultFS
	dir   string // socket directory
	life  int
	log   *wal.Log
	stop  func()
	rng   *rand.Rand
	crash int64 // crashes survived, for the report
	// ackEarly makes the log acknowledge before the fsync: a deliberately broken gate,
	// for the negative control.
	ackEarly bool
}

// earlyLog acknowledges records before they are durable (a broken log).
type earlyLog struct{ *wal.Log }

func (earlyLog) WaitDurable(context.Context, wal.LSN) error { return nil }

func newDurableImpl(dir string, seed uint64, ackEarly bool) (*durableImpl, error) {
	d := &durableImpl{fs: walfs.NewFaultFS(), dir: dir, rng: rand.New(rand.NewPCG(seed, 1)), ackEarly: ackEarly}
	return d, d.start()
}

func (d *durableImpl) start() error {
	l, err := wal.Open("/gate/data", wal.Options{FS: d.fs})
	if err != nil {
		return fmt.Errorf("open the log (life %d): %w", d.life, err)
	}
	o := servertest.Options{Recover: l}
	if d.ackEarly {
		o.Node.Log = earlyLog{l}
	}
	d.life++
	w, stop, err := serveWire(o)
	if err != nil {
		l.Close()
		return fmt.Errorf("start (life %d): %w", d.life, err)
	}
	d.WireImpl, d.log = w, l
	d.stop = func() {
		stop()
		l.Close()
	}
	return nil
}

// Crash simulates a machine crash under the running server and restarts it.
func (d *durableImpl) Crash() error {
	d.fs.Crash(d.rng)
	d.stop() // the dead life's goroutines end; its disk operations fail with ErrCrashed
	d.fs.Restart()
	d.crash++
	return d.start()
}

// crashCommand is a crash-and-recover step of a trace. The model does not change: every
// operation before it was answered, so acknowledged, so it must survive.
type crashCommand struct {
	c       model.Config
	stats   *Stats
	crashes *atomic.Int64
}

func (cc *crashCommand) Run(sut commands.SystemUnderTest) commands.Result {
	d := sut.(*durableImpl)
	if err := d.Crash(); err != nil {
		return err
	}
	cc.crashes.Add(1)
	return stepResult{state: d.Abstract(cc.c)}
}

func (cc *crashCommand) NextState(st commands.State) commands.State {
	ts := st.(*traceState)
	return &traceState{s: ts.s, trace: append(ts.trace[:len(ts.trace):len(ts.trace)], model.Op{Action: "Crash"}), ans: ts.ans}
}

func (cc *crashCommand) PreCondition(commands.State) bool { return true }

func (cc *crashCommand) PostCondition(st commands.State, res commands.Result) *gopter.PropResult {
	if err, ok := res.(error); ok {
		return &gopter.PropResult{Status: gopter.PropError, Error: err}
	}
	ts := st.(*traceState)
	r := res.(stepResult)
	if !sameState(ts.s, r.state) {
		d := &Divergence{Trace: ts.trace, StateDiff: firstDiff(Strip(ts.s).Text(cc.c), r.state.Text(cc.c)),
			ModelState: Strip(ts.s).Text(cc.c), ImplementState: r.state.Text(cc.c)}
		cc.stats.Divergences++
		cc.stats.Smallest = d
		return &gopter.PropResult{Status: gopter.PropFalse, Error: d}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}

func (cc *crashCommand) String() string { return "Crash" }

// TestRandomDurable: random traces through a durable server with crash-and-recover
// steps; after each recovery the gate's state must be exactly the model's (D1: every
// acknowledged decision survives; nothing that contradicts one appears).
func TestRandomDurable(t *testing.T) {
	ops := int64(6_000)
	if *deep {
		ops = 30_000
	}
	if *opsFlag > 0 {
		ops = *opsFlag
	}
	if ok, _ := runDurable(t, ops, false); !ok {
		t.FailNow()
	}
}

// TestDurableCatchesEarlyAck: the negative control of the durable mode. A gate whose
// log acknowledges before the fsync loses acknowledged decisions in a crash, and the
// durable mode must find it.
func TestDurableCatchesEarlyAck(t *testing.T) {
	if *deep {
		t.Skip("the negative control runs in make test")
	}
	ok, d := runDurable(t, 20_000, true)
	if ok {
		t.Fatal("a gate that acknowledges before fsync passed the durable mode")
	}
	t.Logf("found, as it must be:\n%v", d)
}

// runDurable runs the durable mode; it reports whether the property held, and the
// smallest divergence otherwise.
func runDurable(t *testing.T, ops int64, ackEarly bool) (bool, *Divergence) {
	s := defaultSeed()
	t.Logf("seed %d (%s)", s, Describe(s, t.Name()))
	stats := NewStats()
	var crashes atomic.Int64
	base := t.TempDir()
	var traces atomic.Int64
	var live *durableImpl
	defer func() {
		if live != nil {
			live.stop()
		}
	}()
	pc := Commands(RandomConfig, func() Impl {
		if live != nil {
			live.stop()
		}
		n := traces.Add(1)
		d, err := newDurableImpl(filepath.Join(base, fmt.Sprint(n)), uint64(s)+uint64(n), ackEarly)
		if err != nil {
			panic(err)
		}
		live = d
		return d
	}, stats)
	genOps := pc.GenCommandFunc
	pc.GenCommandFunc = func(st commands.State) gopter.Gen {
		return gen.Weighted([]gen.WeightedGen{
			{Weight: 95, Gen: genOps(st)},
			{Weight: 5, Gen: gen.Const(commands.Command(&crashCommand{c: RandomConfig, stats: stats, crashes: &crashes}))},
		})
	}
	params := gopter.DefaultTestParametersWithSeed(s)
	params.MaxSize = traceLenMax
	params.MinSuccessfulTests = int(max(1, ops/(traceLenMax/2)))
	props := gopter.NewProperties(params)
	props.Property("random-durable", commands.Prop(pc))
	var out io.Writer = &testWriter{t}
	if ackEarly {
		out = io.Discard // the failure is expected; the caller prints the divergence
	}
	ok := props.Run(gopter.NewFormatedReporter(true, 160, out))
	if ackEarly {
		return ok, stats.Smallest
	}
	total.Add(stats)
	t.Logf("\n%sconformance random-durable: %d crash-and-recover steps, each followed by a state comparison", stats.Report("random-durable"), crashes.Load())
	if !ok {
		t.Errorf("conformance random-durable failed (seed %d); shrunk:\n%v%s", s, stats.Smallest, Describe(s, t.Name()))
		return false, stats.Smallest
	}
	if m := stats.Missing(); len(m) > 0 {
		t.Errorf("conformance random-durable never reached: %v (seed %d)", m, s)
		return false, nil
	}
	if crashes.Load() == 0 {
		t.Error("no crash happened: the durable mode checked nothing it should")
		return false, nil
	}
	return true, nil
}
