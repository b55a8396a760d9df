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

// options are the command's flags.
type options struct {
	shape        lincheck.Shape
	histories    int
	parallel     int
	crashEvery   time.Duration
	seed         uint64
	tags         string
	command      string
	out          string
	checkTimeout time.Duration
	stopAfter    int
	prebuilt     string
	expectFail   bool
	fuzzTargets  string
	fuzztime     string
}

func parseFlags() options {
	o := options{shape: lincheck.DefaultShape()}
	flag.IntVar(&o.histories, "histories", 200, "histories to run and check")
	flag.IntVar(&o.parallel, "parallel", 2, "histories running at once")
	flag.IntVar(&o.shape.Clients, "clients", o.shape.Clients, "concurrent clients per history")
	flag.IntVar(&o.shape.OpsPerClient, "ops", o.shape.OpsPerClient, "requests per client per history")
	flag.IntVar(&o.shape.Runs, "runs", o.shape.Runs, "runs per history")
	flag.IntVar(&o.shape.Keys, "keys", o.shape.Keys, fmt.Sprintf("keys per run (1..%d)", lincheck.KeysMax))
	flag.Float64Var(&o.shape.ShortTimeouts, "short-timeouts", o.shape.ShortTimeouts, "fraction of requests sent with a timeout of microseconds (unknown outcomes)")
	flag.DurationVar(&o.crashEvery, "crash-every", 300*time.Millisecond, "mean time between SIGKILL+restart of the server (0: none)")
	flag.Uint64Var(&o.seed, "seed", 0, "seed of the campaign (0: from the clock; printed)")
	flag.StringVar(&o.tags, "tags", "", "build tags of the server binary (e.g. broken_p3, brokengate)")
	flag.StringVar(&o.command, "command", "serve", "server subcommand and flags, space separated (e.g. 'serve-unsafe' with -tags brokengate)")
	flag.StringVar(&o.out, "out", "", "directory for the server's data and failure reports (default: a new temp dir)")
	flag.DurationVar(&o.checkTimeout, "check-timeout", time.Minute, "porcupine's time limit per history")
	flag.IntVar(&o.stopAfter, "stop-after", 0, "stop after this many failing histories (0: run all)")
	flag.StringVar(&o.prebuilt, "bin", "", "use this soundgate binary instead of building one")
	flag.BoolVar(&o.expectFail, "expect-fail", false, "negative control: succeed only if some history is NOT linearizable")
	flag.StringVar(&o.fuzzTargets, "fuzz", "", "instead of a campaign: run these fuzz targets of ./fuzz (comma separated; Target=budget gives one its own budget)")
	flag.StringVar(&o.fuzztime, "fuzztime", "20000x", "with -fuzz: count (NNNx) or time per target without its own budget")
	flag.Parse()
	return o
}

func run() int {
	o := parseFlags()
	if o.fuzzTargets != "" {
		logDir := o.out
		if logDir == "" {
			logDir = "build/lincheck-fuzz"
		}
		targets, err := parseFuzzTargets(o.fuzzTargets, o.fuzztime)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lincheck:", err)
			return 2
		}
		return runFuzz(targets, logDir)
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	dir, err := campaignDir(o.out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runCampaign(ctx, o, dir)
}

// campaignDir returns the absolute path of the campaign's directory: out, which must
// be empty or missing (its data directory would hold an earlier campaign's runs), or
// a new temporary directory.
func campaignDir(out string) (string, error) {
	dir := out
	if dir != "" {
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return "", fmt.Errorf("-out %s is not empty (its data directory would hold an earlier campaign's runs)", dir)
		}
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "lincheck-"); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir, nil
}

// runCampaign builds the server (unless -bin names one), runs the campaign in dir,
// prints its figures and returns the exit code.
func runCampaign(ctx context.Context, o options, dir string) int {
	var tagList []string
	if o.tags != "" {
		tagList = strings.Split(o.tags, ",")
	}
	start := time.Now()
	bin, err := o.prebuilt, error(nil)
	if bin == "" {
		bin, err = servertest.Build(ctx, dir, tagList...)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", err)
		return 2
	}
	fmt.Printf("lincheck: seed %d, server %s %s, dir %s\n", o.seed, bin, o.command, dir)
	fmt.Printf("lincheck: %d histories x %d clients x %d requests over %d runs x %d keys, %d at once, crash every ~%v\n",
		o.histories, o.shape.Clients, o.shape.OpsPerClient, o.shape.Runs, o.shape.Keys, o.parallel, o.crashEvery)
	res, err := lincheck.Run(ctx, lincheck.Config{
		Bin: bin, Command: strings.Fields(o.command), Dir: dir,
		Histories: o.histories, Parallel: o.parallel, Shape: o.shape,
		CrashEvery: o.crashEvery, Seed: o.seed, CheckTimeout: o.checkTimeout,
		StopAfter: o.stopAfter, Log: os.Stdout,
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
	if o.tags != "" {
		name = o.tags
	}
	fmt.Println(res.Summary(name, time.Since(start)))
	return exitCode(res, o.expectFail)
}

// exitCode is 1 when a history failed or was undecided, or, with expectFail (a
// negative control), when none failed; 0 otherwise.
func exitCode(res lincheck.Result, expectFail bool) int {
	if expectFail {
		if res.Failures > 0 {
			return 0
		}
		fmt.Println("lincheck: negative control NOT caught: every history was linearizable")
		return 1
	}
	if res.Failures > 0 || res.Inconclusive > 0 || res.ServerStopErr != nil {
		return 1
	}
	return 0
}
