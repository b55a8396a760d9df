// Command lincheck runs a linearizability campaign against the soundgate server: it
// builds cmd/soundgate (with -tags if given), starts it on a fresh data directory,
// drives it with concurrent histories while killing and restarting it, checks every
// history with porcupine against the model, and prints the figures, ending with one
// summary line. It exits 1 when a history is not linearizable or undecided (or, with
// -expect-fail, when none is), 2 when the campaign cannot run.
//
//	go run ./cmd/lincheck -histories 200 -crash-every 300ms
//
// With -fuzz it runs the named targets of ./fuzz instead, each for -fuzztime or for
// its own budget, and prints the executions go reported for each, then one summary
// line:
//
//	go run ./cmd/lincheck -fuzz FuzzSession=20000x,FuzzLogRecovery=200000x
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/lincheck"
)

func main() {
	os.Exit(run())
}

func run() int {
	shape := lincheck.DefaultShape()
	histories := flag.Int("histories", 200, "histories to run and check")
	parallel := flag.Int("parallel", 2, "histories running at once")
	flag.IntVar(&shape.Clients, "clients", shape.Clients, "concurrent clients per history")
	flag.IntVar(&shape.OpsPerClient, "ops", shape.OpsPerClient, "requests per client per history")
	flag.IntVar(&shape.Runs, "runs", shape.Runs, "runs per history")
	flag.IntVar(&shape.Keys, "keys", shape.Keys, fmt.Sprintf("keys per run (1..%d)", lincheck.KeysMax))
	flag.Float64Var(&shape.ShortTimeouts, "short-timeouts", shape.ShortTimeouts, "fraction of requests sent with a timeout of microseconds (unknown outcomes)")
	crashEvery := flag.Duration("crash-every", 300*time.Millisecond, "mean time between SIGKILL+restart of the server (0: none)")
	seed := flag.Uint64("seed", 0, "seed of the campaign (0: from the clock; printed)")
	tags := flag.String("tags", "", "build tags of the server binary (e.g. broken_p3, brokengate)")
	command := flag.String("command", "serve", "server subcommand and flags, space separated (e.g. 'serve-unsafe' with -tags brokengate)")
	out := flag.String("out", "", "directory for the server's data and failure reports (default: a new temp dir)")
	checkTimeout := flag.Duration("check-timeout", time.Minute, "porcupine's time limit per history")
	stopAfter := flag.Int("stop-after", 0, "stop after this many failing histories (0: run all)")
	prebuilt := flag.String("bin", "", "use this soundgate binary instead of building one")
	expectFail := flag.Bool("expect-fail", false, "negative control: succeed only if some history is NOT linearizable")
	fuzzTargets := flag.String("fuzz", "", "instead of a campaign: run these fuzz targets of ./fuzz (comma separated; Target=budget gives one its own budget)")
	fuzztime := flag.String("fuzztime", "20000x", "with -fuzz: count (NNNx) or time per target without its own budget")
	flag.Parse()

	if *fuzzTargets != "" {
		logDir := *out
		if logDir == "" {
			logDir = "build/lincheck-fuzz"
		}
		targets, err := parseFuzzTargets(*fuzzTargets, *fuzztime)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lincheck:", err)
			return 2
		}
		return runFuzz(targets, logDir)
	}

	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	dir := *out
	if dir != "" {
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			fmt.Fprintf(os.Stderr, "lincheck: -out %s is not empty (its data directory would hold an earlier campaign's runs)\n", dir)
			return 2
		}
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "lincheck-"); err != nil {
			fmt.Fprintln(os.Stderr, "lincheck:", err)
			return 2
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var tagList []string
	if *tags != "" {
		tagList = strings.Split(*tags, ",")
	}
	start := time.Now()
	bin, err := *prebuilt, error(nil)
	if bin == "" {
		bin, err = servertest.Build(ctx, dir, tagList...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	fmt.Printf("lincheck: seed %d, server %s %s, dir %s\n", *seed, bin, *command, dir)
	fmt.Printf("lincheck: %d histories x %d clients x %d requests over %d runs x %d keys, %d at once, crash every ~%v\n",
		*histories, shape.Clients, shape.OpsPerClient, shape.Runs, shape.Keys, *parallel, *crashEvery)
	res, err := lincheck.Run(ctx, lincheck.Config{
		Bin: bin, Command: strings.Fields(*command), Dir: dir,
		Histories: *histories, Parallel: *parallel, Shape: shape,
		CrashEvery: *crashEvery, Seed: *seed, CheckTimeout: *checkTimeout,
		StopAfter: *stopAfter, Log: os.Stdout,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	for i, p := range res.Reports {
		fmt.Printf("failure %d: seed %d, shrunk to %d operations: %s\n", i+1, res.FailureSeeds[i], res.ShrunkOps[i], p)
	}
	if res.ServerStopErr != nil {
		fmt.Println("lincheck: server stop:", res.ServerStopErr)
	}
	name := "serve"
	if *tags != "" {
		name = *tags
	}
	fmt.Println(res.Summary(name, time.Since(start)))
	failed := res.Failures > 0 || res.Inconclusive > 0 || res.ServerStopErr != nil
	if *expectFail {
		if res.Failures > 0 {
			return 0
		}
		fmt.Println("lincheck: negative control NOT caught: every history was linearizable")
		return 1
	}
	if failed {
		return 1
	}
	return 0
}
