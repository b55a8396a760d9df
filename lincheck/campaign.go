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
	if cfg.Command == nil {
		cfg.Command = []string{"serve"}
	}
	if cfg.OutDir == "" {
		cfg.OutDir = cfg.Dir
	}
	cfg.Parallel = max(cfg.Parallel, 1)
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
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
	tgt := target{tcp: srv.TCP, unix: srv.Unix}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		res      Result
		crashes  int
		fatalErr error
	)
	nemesisDone := make(chan struct{})
	go func() {
		defer close(nemesisDone)
		if cfg.CrashEvery <= 0 {
			return
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, 0xC7A5))
		for {
			d := time.Duration(float64(cfg.CrashEvery) * (0.25 + 1.5*rng.Float64()))
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			srv.Kill()
			mu.Lock()
			crashes++
			mu.Unlock()
			if err := srv.Start(context.Background()); err != nil {
				mu.Lock()
				fatalErr = fmt.Errorf("%w: restart after crash %d: %v", ErrCampaign, crashes, err)
				mu.Unlock()
				cancel()
				return
			}
		}
	}()

	next := make(chan int)
	go func() {
		defer close(next)
		for i := range cfg.Histories {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range cfg.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				seed := histSeed(cfg.Seed, i)
				mu.Lock()
				c0 := crashes
				mu.Unlock()
				h := runHistory(ctx, tgt, cfg.Shape, fmt.Sprintf("s%d-h%d", cfg.Seed, i), seed)
				if ctx.Err() != nil {
					return // cut short: not a complete history
				}
				mu.Lock()
				crashed := crashes > c0
				mu.Unlock()
				v, _ := Check(h.Keys, h.Ops, cfg.CheckTimeout)
				var report string
				var shrunk int
				if v == NotLinearizable {
					small := Shrink(h.Keys, h.Ops, cfg.CheckTimeout)
					shrunk = len(small)
					mu.Lock()
					n := len(res.Reports) + 1
					mu.Unlock()
					p, err := Report(cfg.OutDir, n, h.Keys, h.Ops, small, cfg.CheckTimeout)
					if err != nil {
						p = "(no report: " + err.Error() + ")"
					}
					report = p
					fmt.Fprintf(logw, "history %d (seed %d, %d ops, crash during it: %t): NOT linearizable; shrunk to %d ops: %s\n",
						i, seed, len(h.Ops), crashed, shrunk, p)
				}
				mu.Lock()
				res.Histories++
				res.Ops += len(h.Ops)
				res.Requests += h.Requests
				res.Unknown += h.Unknown
				if crashed {
					res.CrashedHist++
				}
				switch v {
				case NotLinearizable:
					res.Failures++
					res.Reports = append(res.Reports, report)
					res.ShrunkOps = append(res.ShrunkOps, shrunk)
					res.FailureSeeds = append(res.FailureSeeds, seed)
					if cfg.StopAfter > 0 && res.Failures >= cfg.StopAfter {
						cancel()
					}
				case Inconclusive:
					res.Inconclusive++
					fmt.Fprintf(logw, "history %d (seed %d, %d ops): inconclusive after %v\n", i, seed, len(h.Ops), cfg.CheckTimeout)
				}
				if res.Histories%100 == 0 {
					fmt.Fprintf(logw, "... %d histories, %d ops, %d crashes, %d failures\n", res.Histories, res.Ops, crashes, res.Failures)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	cancel()
	<-nemesisDone
	mu.Lock()
	res.Crashes = crashes
	ferr := fatalErr
	mu.Unlock()
	if srv.Running() {
		res.ServerStopErr = srv.Stop()
	}
	return res, ferr
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
