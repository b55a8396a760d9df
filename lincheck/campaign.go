package lincheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/server/servertest"
)

// Config is one campaign: many histories against one server process (and its data
// directory), which a nemesis kills with SIGKILL and restarts while they run.
type Config struct {
	Bin     string   // the soundgate binary (see Build)
	Command []string // its subcommand and flags; nil: ["serve"]
	Dir     string   // working directory of the server (data, roles, log)
	OutDir  string   // where failure reports go; "": Dir

	Histories int // histories to run and check
	Parallel  int // histories running at once (each with Shape.Clients clients); 0: 1
	Shape     Shape
	// CrashEvery is the mean time between two crashes (SIGKILL, then restart on the
	// same data directory); 0 means no crash.
	CrashEvery time.Duration
	Seed       uint64
	// CheckTimeout bounds porcupine's search per history; a history it cannot decide
	// in time is counted as inconclusive (and the campaign fails).
	CheckTimeout time.Duration
	// StopAfter stops the campaign after this many non-linearizable histories (0: run
	// them all).
	StopAfter int
	Log       io.Writer // progress and failure paths; nil: discard
}

// Result counts what a campaign did.
type Result struct {
	Histories     int      // histories run and checked
	Requests      int      // requests sent
	Ops           int      // operations checked (requests less unanswered status reads)
	Unknown       int      // of which with an unknown outcome
	Crashes       int      // SIGKILL + restart cycles
	CrashedHist   int      // histories during which at least one crash happened
	Failures      int      // histories that are not linearizable
	Inconclusive  int      // histories the checker could not decide in time
	Reports       []string // visualizations of the failures (shrunk)
	ShrunkOps     []int    // operations in each shrunk failing history
	FailedOps     []int    // operations in each failing history before shrinking
	FailureSeeds  []uint64 // the seed of each failing history
	ServerStopErr error    // the server's graceful stop at the end failed
}

// ErrCampaign reports a campaign that could not run (not a failed check).
var ErrCampaign = errors.New("soundgate/lincheck: campaign")

// histSeed derives the seed of history i of a campaign.
func histSeed(seed uint64, i int) uint64 {
	return rand.New(rand.NewPCG(seed, uint64(i))).Uint64()
}

// Run runs a campaign and returns its counts. It returns an error only when the
// server cannot be started or restarted; failures of the check are in Result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	cfg = cfg.withDefaults()
	if cfg.Shape.Keys < 1 || cfg.Shape.Keys > KeysMax || cfg.Shape.Runs < 1 || cfg.Shape.Clients < 1 {
		return Result{}, fmt.Errorf("%w: bad shape %+v (1..%d keys, at least one run and client)", ErrCampaign, cfg.Shape, KeysMax)
	}
	srv, err := servertest.NewProcess(cfg.Bin, cfg.Command, cfg.Dir)
	if err != nil {
		return Result{}, err
	}
	if err := srv.Start(ctx); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &runner{cfg: cfg, srv: srv, tgt: target{tcp: srv.TCP, unix: srv.Unix}, cancel: cancel}

	nemesisDone := make(chan struct{})
	go func() { defer close(nemesisDone); c.nemesis(ctx) }()
	next := feed(ctx, cfg.Histories)
	var wg sync.WaitGroup
	for range cfg.Parallel {
		wg.Add(1)
		go func() { defer wg.Done(); c.runHistories(ctx, next) }()
	}
	wg.Wait()
	cancel()
	<-nemesisDone
	c.mu.Lock()
	res := c.res
	res.Crashes = c.crashes
	ferr := c.fatalErr
	c.mu.Unlock()
	if srv.Running() {
		res.ServerStopErr = srv.Stop()
	}
	return res, ferr
}

// withDefaults fills in the zero fields of cfg that have a default.
func (cfg Config) withDefaults() Config {
	if cfg.Command == nil {
		cfg.Command = []string{"serve"}
	}
	if cfg.OutDir == "" {
		cfg.OutDir = cfg.Dir
	}
	cfg.Parallel = max(cfg.Parallel, 1)
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	return cfg
}

// runner is the state a running campaign shares between its nemesis and the
// goroutines running histories; mu guards res, crashes and fatalErr.
type runner struct {
	cfg    Config
	srv    *servertest.Process
	tgt    target
	cancel context.CancelFunc

	mu       sync.Mutex
	res      Result
	crashes  int
	fatalErr error
	reports  int // failure reports numbered so far: each report gets its own file
}

// nemesis kills the server with SIGKILL and restarts it, at random intervals around
// cfg.CrashEvery, until ctx ends; a failed restart ends the campaign.
func (c *runner) nemesis(ctx context.Context) {
	if c.cfg.CrashEvery <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(c.cfg.Seed, 0xC7A5))
	for {
		d := time.Duration(float64(c.cfg.CrashEvery) * (0.25 + 1.5*rng.Float64()))
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		c.srv.Kill()
		c.mu.Lock()
		c.crashes++
		c.mu.Unlock()
		if err := c.srv.Start(context.Background()); err != nil {
			c.mu.Lock()
			c.fatalErr = fmt.Errorf("%w: restart after crash %d: %v", ErrCampaign, c.crashes, err)
			c.mu.Unlock()
			c.cancel()
			return
		}
	}
}

// feed sends the indexes 0..n-1 of the histories to run, until ctx ends.
func feed(ctx context.Context, n int) <-chan int {
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	return next
}

func (c *runner) crashCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashes
}

// checked is one history run and checked: what count adds to the result.
type checked struct {
	index   int
	seed    uint64
	h       History
	crashed bool // a crash happened while it ran
	verdict Verdict
	report  string // NotLinearizable: the report's path
	shrunk  int    // NotLinearizable: operations in the shrunk history
}

// runHistories runs, checks and counts the histories whose indexes come from next.
func (c *runner) runHistories(ctx context.Context, next <-chan int) {
	for i := range next {
		r := checked{index: i, seed: histSeed(c.cfg.Seed, i)}
		c0 := c.crashCount()
		r.h = runHistory(ctx, c.tgt, c.cfg.Shape, fmt.Sprintf("s%d-h%d", c.cfg.Seed, i), r.seed)
		if ctx.Err() != nil {
			return // cut short: not a complete history
		}
		r.crashed = c.crashCount() > c0
		r.verdict, _ = Check(r.h.Keys, r.h.Ops, c.cfg.CheckTimeout)
		if r.verdict == NotLinearizable {
			c.reportFailure(&r)
		}
		c.count(r)
	}
}

// reportFailure shrinks a non-linearizable history, writes its report and logs it.
func (c *runner) reportFailure(r *checked) {
	small := Shrink(r.h.Keys, r.h.Ops, c.cfg.CheckTimeout)
	r.shrunk = len(small)
	c.mu.Lock()
	c.reports++
	n := c.reports
	c.mu.Unlock()
	p, err := Report(c.cfg.OutDir, n, r.h.Keys, r.h.Ops, small, c.cfg.CheckTimeout)
	if err != nil {
		p = "(no report: " + err.Error() + ")"
	}
	r.report = p
	fmt.Fprintf(c.cfg.Log, "history %d (seed %d, %d ops, crash during it: %t): NOT linearizable; shrunk to %d ops: %s\n",
		r.index, r.seed, len(r.h.Ops), r.crashed, r.shrunk, p)
}

// count adds one checked history to the result, and ends the campaign once
// cfg.StopAfter histories failed.
func (c *runner) count(r checked) {
	c.mu.Lock()
	defer c.mu.Unlock()
	res := &c.res
	res.Histories++
	res.Ops += len(r.h.Ops)
	res.Requests += r.h.Requests
	res.Unknown += r.h.Unknown
	if r.crashed {
		res.CrashedHist++
	}
	switch r.verdict {
	case NotLinearizable:
		res.Failures++
		res.Reports = append(res.Reports, r.report)
		res.ShrunkOps = append(res.ShrunkOps, r.shrunk)
		res.FailedOps = append(res.FailedOps, len(r.h.Ops))
		res.FailureSeeds = append(res.FailureSeeds, r.seed)
		if c.cfg.StopAfter > 0 && res.Failures >= c.cfg.StopAfter {
			c.cancel()
		}
	case Inconclusive:
		res.Inconclusive++
		fmt.Fprintf(c.cfg.Log, "history %d (seed %d, %d ops): inconclusive after %v\n", r.index, r.seed, len(r.h.Ops), c.cfg.CheckTimeout)
	}
	if res.Histories%100 == 0 {
		fmt.Fprintf(c.cfg.Log, "... %d histories, %d ops, %d crashes, %d failures\n", res.Histories, res.Ops, c.crashes, res.Failures)
	}
}

// Summary is the one-line summary of a campaign's result.
func (r Result) Summary(name string, elapsed time.Duration) string {
	verdict := "ok"
	if r.Failures > 0 || r.Inconclusive > 0 || r.ServerStopErr != nil {
		verdict = "FAIL"
	}
	return fmt.Sprintf("lincheck %s: %d histories, %d operations (%d unknown outcomes), %d crashes (%d histories with a crash), %d failures, %d inconclusive, %.1fs, %s",
		name, r.Histories, r.Ops, r.Unknown, r.Crashes, r.CrashedHist, r.Failures, r.Inconclusive, elapsed.Seconds(), verdict)
}
