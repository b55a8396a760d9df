// Command crashcheck is the long run of the gate crash harness (package crashcheck): it
// builds cmd/soundgate with the failpoints tag (unless -binary is given), runs the
// real gate under concurrent load, SIGKILLs it at random moments and at failpoints,
// restarts it on the same directory, checks D1, P2, P3 and P4 after every restart,
// and prints one summary line last:
//
//	go run ./cmd/crashcheck -cycles 1000 -seed 1
//
// It exits 1 on any violation (each is printed) and 2 when it cannot run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/soundgate/soundgate/crashcheck"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

func main() { os.Exit(run()) }

// run is the command; it returns the exit status, so that its deferred clean-up runs.
func run() int {
	var cfg crashcheck.Config
	flag.IntVar(&cfg.Cycles, "cycles", 1000, "kill-and-restart cycles")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the workload, kill times and failpoints")
	flag.IntVar(&cfg.Clients, "clients", 8, "concurrent agent connections")
	flag.DurationVar(&cfg.KillAfterMax, "kill-after", 200*time.Millisecond, "a timed SIGKILL comes within this much load")
	flag.IntVar(&cfg.FailpointEach, "failpoint-each", 3, "every N-th cycle kills at a log failpoint instead (0: never)")
	flag.IntVar(&cfg.SnapshotEvery, "snapshot-every", 2000, "the gate's --snapshot-every")
	flag.IntVar(&cfg.ChecksMax, "checks", 200, "older facts re-checked per restart (sampled), besides the last life's")
	flag.StringVar(&cfg.Binary, "binary", "", "soundgate binary built with -tags failpoints (default: build one)")
	flag.StringVar(&cfg.Subcommand, "subcommand", "serve", "serve, or serve-unsafe (negative control; needs -tags brokengate)")
	tags := flag.String("tags", "failpoints", "build tags when building the binary")
	dir := flag.String("dir", "", "working directory (default: a new temporary directory, removed at the end)")
	flag.Parse()
	if cfg.Cycles < 1 || cfg.Clients < 1 || cfg.KillAfterMax <= 0 {
		fmt.Fprintln(os.Stderr, "crashcheck: -cycles and -clients must be at least 1, -kill-after positive")
		return 2
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "crashcheck")
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashcheck:", err)
			return 2
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	cfg.Dir = *dir
	if cfg.Binary == "" {
		bin, err := servertest.Build(context.Background(), *dir, strings.Fields(*tags)...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crashcheck:", err, "(run from the module root)")
			return 2
		}
		cfg.Binary = bin
	}
	cfg.Logf = func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	fmt.Printf("crashcheck: %s %s, %d cycles, %d clients, SIGKILL within %s, a failpoint every %d cycles, seed %d, dir %s\n",
		cfg.Binary, cfg.Subcommand, cfg.Cycles, cfg.Clients, cfg.KillAfterMax, cfg.FailpointEach, cfg.Seed, cfg.Dir)
	res, err := crashcheck.Run(cfg)
	if err != nil {
		fmt.Println(err)
		fmt.Printf("gate crash harness: could not run after %d cycles, seed %d\n", res.Cycles, cfg.Seed)
		return 2
	}
	for _, v := range res.Violations {
		fmt.Println("violation:", v)
	}
	fmt.Println(res.Summary(cfg))
	if len(res.Violations) > 0 || (cfg.FailpointEach > 0 && res.FailpointKills == 0) {
		if res.FailpointKills == 0 && cfg.FailpointEach > 0 {
			fmt.Println("crashcheck: no failpoint fired: the binary lacks -tags failpoints")
		}
		return 1
	}
	return 0
}
