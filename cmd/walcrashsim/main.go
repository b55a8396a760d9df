// Command walcrashsim runs the write-ahead log through simulated machine crashes
// (package crashsim), replays the abstract trace of every life against the log's
// spec (internal/waltrace, spec/tla/WAL.tla), and prints one summary line last:
//
//	go run ./cmd/walcrashsim -cycles 2000 -seed 1
//
// It exits 1 on the first violation or the first step the spec does not allow,
// naming the seed and the cycle.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/soundgate/soundgate/impl/wal/crashsim"
	"github.com/soundgate/soundgate/internal/waltrace"
)

func main() {
	var cfg crashsim.Config
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of every random choice")
	flag.IntVar(&cfg.Cycles, "cycles", 1000, "crash-and-recover cycles")
	flag.IntVar(&cfg.Writers, "writers", 8, "concurrent writers per life")
	flag.IntVar(&cfg.RecordsMax, "records", 200, "records appended per life at most")
	flag.IntVar(&cfg.OpsMax, "ops", 150, "crash within this many file-system operations")
	flag.Int64Var(&cfg.SegmentBytes, "segment-bytes", 2048, "segment size in bytes")
	flag.IntVar(&cfg.SnapshotEvery, "snapshot-every", 100, "snapshot once this many records follow the last one (0: never)")
	flag.IntVar(&cfg.PayloadMax, "payload-max", 200, "largest record payload in bytes")
	specPath := flag.String("spec", "spec/tla/WAL.tla", "the log's spec, which every life's trace must follow (\"\": no trace validation)")
	flag.Parse()
	if cfg.Cycles < 1 || cfg.Writers < 1 || cfg.RecordsMax < 1 || cfg.OpsMax < 1 || cfg.PayloadMax < 0 {
		fmt.Fprintln(os.Stderr, "walcrashsim: -cycles, -writers, -records and -ops must be at least 1")
		os.Exit(2)
	}
	cfg.Logf = func(format string, args ...any) { fmt.Printf(format+"\n", args...) }
	var tc *waltrace.Checker
	if *specPath != "" {
		var err error
		if tc, err = waltrace.New(*specPath); err != nil {
			fmt.Fprintln(os.Stderr, "walcrashsim:", err)
			os.Exit(2)
		}
		cfg.Trace = tc.Check
	}
	fmt.Printf("walcrashsim: seed %d, %d cycles, %d writers, up to %d records and a crash within %d fs operations per life, %d-byte segments, snapshot every %d records\n",
		cfg.Seed, cfg.Cycles, cfg.Writers, cfg.RecordsMax, cfg.OpsMax, cfg.SegmentBytes, cfg.SnapshotEvery)
	res, err := crashsim.Run(cfg)
	if err != nil {
		fmt.Println(err)
		fmt.Printf("wal crash-recovery: FAILED after %d cycles, seed %d\n", res.Cycles, cfg.Seed)
		os.Exit(1)
	}
	if tc == nil {
		fmt.Println(res.Summary(cfg) + "; traces NOT validated (-spec \"\")")
		return
	}
	fmt.Println(res.Summary(cfg) + "; " + tc.Stats().Summary(*specPath))
}
